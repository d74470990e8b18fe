package star

import (
	"fmt"
	"strings"

	"go.starlark.net/syntax"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Starlark's parser stops at 1,000 levels of its own recursion (about 300
// nested brackets) with "excessive nesting", so deep source cannot overflow
// the Go stack here as it did in goja. sourceNesting still measures a
// script against --max-nesting before it is parsed, so that both languages
// refuse a script over the limit alike, where it goes over, naming the
// limit; and parseError turns Starlark's own refusal into the same words.

// sourceNesting returns the offset in text where its brackets first nest
// deeper than limit, or -1. It follows strings (quoted, triple-quoted, with
// their r and b prefixes) and comments.
func sourceNesting(text []byte, limit int) int {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case '\'', '"':
			i = skipStarString(text, i)
		case '(', '[', '{':
			if depth++; depth > limit {
				return i
			}
		case ')', ']', '}':
			depth = max(0, depth-1)
		}
	}
	return -1
}

// skipStarString returns the offset of the last byte of the string literal
// that starts at i (or of the end of the text, for one never closed).
func skipStarString(text []byte, i int) int {
	q := text[i]
	if i+2 < len(text) && text[i+1] == q && text[i+2] == q {
		delim := string([]byte{q, q, q})
		for j := i + 3; j < len(text); j++ {
			switch {
			case text[j] == '\\':
				j++
			case strings.HasPrefix(string(text[j:min(j+3, len(text))]), delim):
				return j + 2
			}
		}
		return len(text) - 1
	}
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case q, '\n':
			return j
		}
	}
	return len(text) - 1
}

// nestingError is the error of a script whose nesting goes over limit at
// off.
func nestingError(path string, text []byte, off, limit int) *lang.Error {
	line := 1 + strings.Count(string(text[:off]), "\n")
	col := off - strings.LastIndexByte(string(text[:off]), '\n')
	e := lang.Errorf(path, line, col, fmt.Sprintf("flatten it, or raise the limit with --max-nesting, up to %d", lang.MaxNestingCeiling),
		"the script nests more than %d levels deep here, the limit of this runtime", limit)
	e.Err = &lang.NestingError{What: "the script", Limit: limit}
	return e
}

// excessiveNesting turns Starlark's own refusal of deep source into an
// error that says what it is.
func excessiveNesting(path string, pos syntax.Position) *lang.Error {
	e := positioned(path, pos, fmt.Sprintf("the script nests deeper than Starlark's parser takes (%d levels of its grammar, "+
		"about 300 brackets), whatever --max-nesting allows", lang.StarlarkParserNesting), "flatten it")
	e.Err = &lang.NestingError{What: "the script", Limit: lang.StarlarkParserNesting}
	return e
}
