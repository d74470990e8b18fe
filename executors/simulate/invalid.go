package simulate

import "bytes"

// invalid returns an answer that does not satisfy the schema, as a model's
// faulty answer would not, for testing schema repair. It prefers JSON that
// breaks the schema in a plain way (a missing required property, a value
// outside an enum, a wrong type), and falls back to text that is not JSON at
// all when the schema may accept every JSON value that would be tried.
func (g *Generator) invalid() string {
	n := g.root
	switch {
	case n.never:
		return "null"
	case n.narrowed:
		// The branches of anyOf or oneOf not taken may accept any JSON
		// tried here.
		return notJSON
	case n.kind == kindObject && n.required > 0:
		return "{}"
	case len(n.choices) > 0:
		const outside = `"simulated invalid answer"`
		for _, c := range n.choices {
			if bytes.Equal(c, []byte(outside)) {
				return notJSON
			}
		}
		return outside
	}
	if n.typed != 0 {
		// A value of each JSON type, each written only where its type is
		// not allowed; 0.5 is also no integer.
		for _, t := range [...]struct {
			kind  kind
			value string
		}{
			{kindString, `"simulated invalid answer"`},
			{kindNumber, `0.5`},
			{kindBoolean, `true`},
			{kindObject, `{}`},
			{kindArray, `[]`},
			{kindNull, `null`},
		} {
			if !n.typed.has(t.kind) {
				return t.value
			}
		}
	}
	switch {
	case n.kind == kindString && n.minLength > 0:
		return `""`
	case n.kind == kindArray && n.minItems > 0:
		return "[]"
	}
	return notJSON
}

// notJSON is the invalid answer of last resort.
const notJSON = "simulated invalid answer: this is not JSON"
