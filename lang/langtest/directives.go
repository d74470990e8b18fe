package langtest

import (
	"encoding/json"
	"reflect"
	"strings"
)

// Directives reads the "key: value" comments at the top of a test script,
// such as "// want: 3" in JavaScript or "# want: 3" in Starlark; prefix is
// the language's comment marker with its space ("// " or "# "). Reading
// stops at the first line that is not such a comment. A key may repeat, as
// "calls:" does once per call, so each key maps to its values in order.
func Directives(text, prefix string) map[string][]string {
	out := map[string][]string{}
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			break
		}
		if key, value, ok := strings.Cut(rest, ": "); ok && !strings.Contains(key, " ") {
			out[key] = append(out[key], value)
		}
	}
	return out
}

// SameJSON reports whether a and b are valid JSON for the same value.
func SameJSON(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
