package jsvm

import (
	"math"
	"strings"
	"unicode/utf16"

	"github.com/dop251/goja"
)

// goja's JSON.stringify(value, replacer, space) indents wrong after an
// empty array or object: its ja and jo (the specification's
// SerializeJSONArray and SerializeJSONObject) step the indent in before
// they look at the contents, and their path for an empty one returns
// without stepping it back, so everything after
// "[]" or "{}" in the same container is one level too deep:
//
//	JSON.stringify({a: {}, b: [1]}, null, 2)
//	Node: {\n  "a": {},\n  "b": [\n    1\n  ]\n}
//	goja: {\n  "a": {},\n    "b": [\n      1\n    ]\n  }
//
// Compact output (no space) is right. So JSON.stringify here asks goja's
// for the compact text, which the replacer, toJSON and every other rule
// already shaped, and indents it as the specification's steps would:
// whitespace in compact JSON is only ever inside strings, so indenting is
// a matter of the brackets, commas and colons outside them. The upstream
// fix is two lines in goja's builtin_json.go: restore ctx.indent =
// stepback before returning "[]" in ja, and before writing "}" of an
// empty object in jo.

// installJSONStringify replaces JSON.stringify with the fixed one.
func (r *run) installJSONStringify() error {
	native := r.builtins.stringify
	if native == nil {
		return nil
	}
	stringify := func(call goja.FunctionCall) goja.Value {
		r.busy.running()
		value, replacer := call.Argument(0), call.Argument(1)
		gap := jsonGap(call.Argument(2))
		out, err := native(goja.Undefined(), value, replacer)
		if err != nil {
			panic(err)
		}
		if gap == "" || goja.IsUndefined(out) {
			return out
		}
		return r.vm.ToValue(indentJSON(out.String(), gap))
	}
	fn := r.vm.ToValue(stringify).(*goja.Object)
	if err := fn.DefineDataProperty("name", r.vm.ToValue("stringify"), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	if err := fn.DefineDataProperty("length", r.vm.ToValue(3), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	json := r.vm.GlobalObject().Get("JSON").(*goja.Object)
	return json.DefineDataProperty("stringify", fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// jsonGap is the gap JSON.stringify takes from its space argument: a
// number of spaces (at most 10), or the first 10 code units of a string;
// a Number or String object counts as its value.
func jsonGap(space goja.Value) string {
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = goja.Value(o).ToNumber()
		case "String":
			space = goja.Value(o).ToString()
		}
	}
	switch v := space.Export().(type) {
	case int64:
		return strings.Repeat(" ", int(min(10, max(0, v))))
	case float64:
		if math.IsNaN(v) || v < 1 {
			return ""
		}
		return strings.Repeat(" ", int(min(10, math.Trunc(v))))
	case string:
		units := utf16.Encode([]rune(v))
		if len(units) <= 10 {
			return v
		}
		return string(utf16.Decode(units[:10]))
	}
	return ""
}

// indentJSON indents compact JSON text with gap, as JSON.stringify does.
func indentJSON(compact, gap string) string {
	var b strings.Builder
	b.Grow(len(compact) * 2)
	depth := 0
	newline := func() {
		b.WriteByte('\n')
		for range depth {
			b.WriteString(gap)
		}
	}
	inString, escaped := false, false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			b.WriteByte(c)
		case '[', '{':
			if i+1 < len(compact) && (compact[i+1] == ']' || compact[i+1] == '}') {
				b.WriteByte(c)
				b.WriteByte(compact[i+1])
				i++
				continue
			}
			b.WriteByte(c)
			depth++
			newline()
		case ']', '}':
			depth--
			newline()
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			newline()
		case ':':
			b.WriteString(": ")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
