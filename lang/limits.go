package lang

import (
	"errors"
	"fmt"
)

// Nesting is bounded everywhere a script, its values or the API's bodies
// are parsed or encoded. The parsers and encoders that handle them (goja's,
// Starlark's, encoding/json) recurse once per level: goja's parser met a
// script of 600,000 nested [ with a stack overflow, which no recover can
// catch, and goja's JSON.stringify checks for cycles in time quadratic in
// the depth. One limit, the same for both languages and for every path,
// keeps all of them far from trouble; real scripts and data nest a few
// dozen levels.
const (
	// DefaultMaxNesting is how deeply a value or a script may nest unless
	// --max-nesting says otherwise.
	DefaultMaxNesting = 1000
	// MaxNestingCeiling is the most --max-nesting may allow: a journal
	// record holds a value two levels down, and encoding/json reads at most
	// 10,000 levels, so every value journaled stays readable with room to
	// spare; goja and Starlark recurse that deep on a small stack.
	MaxNestingCeiling = 5000
	// StarlarkParserNesting is the nesting at which Starlark's own parser
	// stops, whatever --max-nesting allows.
	StarlarkParserNesting = 1000
)

// ErrTooDeep is matched (with errors.Is) by every NestingError.
var ErrTooDeep = errors.New("nested too deeply")

// NestingError is a value or a script nested deeper than the limit.
type NestingError struct {
	// What names the value or the script: "the workflow's result", "--args".
	What string
	// Limit is the nesting that was exceeded.
	Limit int
}

func (e *NestingError) Error() string {
	return fmt.Sprintf("%s: nested more than %d levels deep, the limit of this runtime; flatten it, or raise the limit with --max-nesting (at most %d)",
		e.What, e.Limit, MaxNestingCeiling)
}

// Is makes errors.Is(err, ErrTooDeep) hold.
func (e *NestingError) Is(target error) bool { return target == ErrTooDeep }

// ValidMaxNesting checks a --max-nesting value.
func ValidMaxNesting(n int) error {
	if n < 1 || n > MaxNestingCeiling {
		return fmt.Errorf("--max-nesting must be between 1 and %d, not %d", MaxNestingCeiling, n)
	}
	return nil
}

// MaxNestingOr returns n, or DefaultMaxNesting when n is 0 (not set).
func MaxNestingOr(n int) int {
	if n <= 0 {
		return DefaultMaxNesting
	}
	return n
}

// JSONNesting returns how deeply arrays and objects nest in the JSON text
// raw, counting at most up to limit+1: once past the limit the answer is
// known, and the scan stops. It costs one pass over raw, whatever its
// shape, and no allocation. Text that is not JSON gets a number too; the
// parser that reads it says what is wrong with it.
func JSONNesting(raw []byte, limit int) int {
	depth, deepest := 0, 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// CheckJSONNesting returns a *NestingError naming what when raw nests
// deeper than limit.
func CheckJSONNesting(what string, raw []byte, limit int) error {
	if JSONNesting(raw, limit) > limit {
		return &NestingError{What: what, Limit: limit}
	}
	return nil
}

// NonFiniteNote is the warning of a result whose NaN or Infinity became
// null, as JSON.stringify makes them; notes say which and where, as in
// "NaN at result.score".
func NonFiniteNote(notes []string) string {
	more := ""
	if len(notes) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(notes)-1)
	}
	return fmt.Sprintf("the workflow's result held %s%s, which JSON has no form for: it became null, as JSON.stringify makes it", notes[0], more)
}
