package command

import (
	"errors"
	"fmt"
	"strings"
)

// Spec is one configured command executor.
type Spec struct {
	// Name selects the executor, as --executor and agent({executor}) do.
	Name string
	// Words is the template split into words; Words[0] is the program.
	Words []string
}

// DefaultName is the executor's name when a spec gives none.
const DefaultName = "command"

// ParseSpec reads "[NAME=]TEMPLATE". A NAME is letters, digits, '-' and
// '_' before the first '='; a template that merely contains '=' (such as
// "tool --flag=x") keeps its text when what precedes '=' is not a name.
func ParseSpec(s string) (Spec, error) {
	name, template := DefaultName, s
	if n, t, ok := strings.Cut(s, "="); ok && isName(n) {
		name, template = n, t
	}
	words, err := Split(template)
	if err != nil {
		return Spec{}, fmt.Errorf("command executor %q: %w", name, err)
	}
	if len(words) == 0 {
		return Spec{}, fmt.Errorf("command executor %q: the template is empty", name)
	}
	return Spec{Name: name, Words: words}, nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Split splits a command line into words the way a POSIX shell does for
// quotes and backslashes, without expanding anything.
func Split(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// uses reports whether any word holds placeholder p.
func (s Spec) uses(p string) bool {
	for _, w := range s.Words {
		if strings.Contains(w, p) {
			return true
		}
	}
	return false
}
