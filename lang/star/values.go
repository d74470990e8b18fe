package star

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Values cross between the script and the engine as JSON. Objects become
// dicts in the order of their keys, arrays lists, whole numbers ints, other
// numbers floats, null None. Going out, dicts keep their insertion order
// and numbers and strings are written as JavaScript's JSON.stringify writes
// them, so a Starlark workflow and its JavaScript twin journal the same
// bytes.

// toJSON encodes v; limit bounds its nesting. NaN and the infinities
// become null, as JavaScript's JSON.stringify makes them; notes say where,
// as in "NaN at result.stats[\"per call\"][0]", for the warning of a
// result. A value nested deeper than limit (a list that contains itself,
// say) is a *lang.NestingError naming "the value".
func toJSON(v starlark.Value, limit int) (raw json.RawMessage, notes []string, err error) {
	e := encoder{limit: lang.MaxNestingOr(limit)}
	if err := e.encode(v, 0); err != nil {
		return nil, nil, err
	}
	return e.b.Bytes(), e.notes, nil
}

// encoder encodes one value; path holds the keys and indices from the
// value down to where encode is, to name the place of a note.
type encoder struct {
	b     bytes.Buffer
	limit int
	path  []pathStep
	notes []string
}

type pathStep struct {
	key   string
	index int // -1 for a key
}

func (e *encoder) encode(v starlark.Value, depth int) error {
	b := &e.b
	switch v := v.(type) {
	case starlark.NoneType:
		b.WriteString("null")
	case starlark.Bool:
		b.WriteString(strconv.FormatBool(bool(v)))
	case starlark.Int:
		b.WriteString(v.String())
	case starlark.Float:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			e.notes = append(e.notes, fmt.Sprintf("%s at %s", jsNumber(f), e.where()))
			b.WriteString("null")
			return nil
		}
		out, _ := json.Marshal(f) // Go writes floats as ECMAScript does
		b.Write(out)
	case starlark.String:
		writeJSONString(b, string(v))
	case *starlark.Dict:
		if depth+1 > e.limit {
			return &lang.NestingError{What: "the value", Limit: e.limit}
		}
		b.WriteByte('{')
		for i, item := range v.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return fmt.Errorf("a dict key must be a string to become JSON, not %s", typeOf(item[0]))
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, string(k))
			b.WriteByte(':')
			e.path = append(e.path, pathStep{key: string(k), index: -1})
			err := e.encode(item[1], depth+1)
			e.path = e.path[:len(e.path)-1]
			if err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case *starlark.List, starlark.Tuple, *starlark.Set:
		if depth+1 > e.limit {
			return &lang.NestingError{What: "the value", Limit: e.limit}
		}
		b.WriteByte('[')
		it := v.(starlark.Iterable).Iterate()
		defer it.Done()
		var x starlark.Value
		for i := 0; it.Next(&x); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			e.path = append(e.path, pathStep{index: i})
			err := e.encode(x, depth+1)
			e.path = e.path[:len(e.path)-1]
			if err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("%s has no JSON form", typeOf(v))
	}
	return nil
}

// where spells the path to the value being encoded, as the script's
// JavaScript twin would reach it: result.items[2].score.
func (e *encoder) where() string {
	var w strings.Builder
	w.WriteString("result")
	for _, p := range e.path {
		switch {
		case p.index >= 0:
			fmt.Fprintf(&w, "[%d]", p.index)
		case isIdentifier(p.key):
			w.WriteString("." + p.key)
		default:
			q, _ := json.Marshal(p.key)
			fmt.Fprintf(&w, "[%s]", q)
		}
	}
	return w.String()
}

func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// jsNumber names a non-finite number as JavaScript does.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f > 0:
		return "Infinity"
	}
	return "-Infinity"
}

// writeJSONString quotes s as JSON.stringify does: only the quote, the
// backslash and control characters are escaped. Bytes that are not UTF-8
// become U+FFFD.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// fromJSON decodes JSON from the engine. Empty input is None. A text
// answer, the commonest, is decoded directly.
func fromJSON(raw json.RawMessage) (starlark.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return starlark.None, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return starlark.String(s), nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := decode(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decode(d *json.Decoder) (starlark.Value, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(t), nil
	case string:
		return starlark.String(t), nil
	case json.Number:
		return number(string(t))
	case json.Delim:
		switch t {
		case '[':
			var elems []starlark.Value
			for d.More() {
				v, err := decode(d)
				if err != nil {
					return nil, err
				}
				elems = append(elems, v)
			}
			_, err := d.Token()
			return starlark.NewList(elems), err
		case '{':
			dict := starlark.NewDict(4)
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decode(d)
				if err != nil {
					return nil, err
				}
				if err := dict.SetKey(starlark.String(k.(string)), v); err != nil {
					return nil, err
				}
			}
			_, err := d.Token()
			return dict, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// number turns a JSON number into an int when it is written as one, and
// into a float otherwise.
func number(s string) (starlark.Value, error) {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return starlark.MakeInt64(n), nil
		}
		if n, ok := new(big.Int).SetString(s, 10); ok {
			return starlark.MakeBigInt(n), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, err
	}
	return starlark.Float(f), nil
}

// typeOf names a value's type for an error message.
func typeOf(v starlark.Value) string {
	if v == nil {
		return "nothing"
	}
	return v.Type()
}
