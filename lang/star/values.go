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
)

// Values cross between the script and the engine as JSON. Objects become
// dicts in the order of their keys, arrays lists, whole numbers ints, other
// numbers floats, null None. Going out, dicts keep their insertion order
// and numbers and strings are written as JavaScript's JSON.stringify writes
// them, so a Starlark workflow and its JavaScript twin journal the same
// bytes.

// maxDepth bounds the nesting of a value turned into JSON, so that a list
// that contains itself is an error rather than a stack overflow.
const maxDepth = 512

// toJSON encodes v.
func toJSON(v starlark.Value) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := encode(&b, v, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encode(b *bytes.Buffer, v starlark.Value, depth int) error {
	if depth > maxDepth {
		return errors.New("the value is nested too deeply (does it contain itself?)")
	}
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
			return fmt.Errorf("%s has no JSON form", v.String())
		}
		out, _ := json.Marshal(f) // Go writes floats as ECMAScript does
		b.Write(out)
	case starlark.String:
		writeJSONString(b, string(v))
	case *starlark.Dict:
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
			if err := encode(b, item[1], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case *starlark.List, starlark.Tuple, *starlark.Set:
		b.WriteByte('[')
		it := v.(starlark.Iterable).Iterate()
		defer it.Done()
		var x starlark.Value
		for i := 0; it.Next(&x); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, x, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("%s has no JSON form", typeOf(v))
	}
	return nil
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
