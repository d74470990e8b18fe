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

// placeholders are the names a template may use, in braces. Longer names
// first where one starts another ({prompt_file} before {prompt}).
var placeholders = []string{"prompt_file", "prompt", "model", "effort", "schema_file", "schema", "dir", "permissions"}

// PromptInArgs reports whether the template passes the prompt itself as
// an argument ({prompt}), where every local user can read it (in
// /proc/PID/cmdline, or with ps) for as long as the call runs;
// {prompt_file} and standard input keep it private.
func (s Spec) PromptInArgs() bool { return s.uses("{prompt}") }

// ErrOptionLike is matched by the error of Args when a value that starts
// with '-' would become a word of its own, where the program would read it
// as an option.
var ErrOptionLike = errors.New("a value would be read as an option")

// Args expands the template's words after the program with vals (by
// placeholder name, without braces). Each word is read once, left to
// right: a placeholder is replaced by its value, and the value is never
// read again, so a prompt that contains "{model}" stays as it is. Braces
// that do not name a placeholder stay as they are.
//
// A word that a value starts, and that the value makes start with '-' (a
// prompt such as "--help", or a model "--exec=..." in "{model}@latest"),
// would reach the program as an option. It is passed only after a "--"
// word, which ends the options of most programs; otherwise Args refuses,
// with an error matching ErrOptionLike that says how to fix the template.
// A word that starts with '-' in the template ("--model={model}") is the
// template's own option, whatever its value.
func (s Spec) Args(vals map[string]string) ([]string, error) {
	args := make([]string, 0, len(s.Words)-1)
	afterDashes := false
	for _, w := range s.Words[1:] {
		out := expand(w, vals)
		if name, ok := leadingName(w, vals); ok && strings.HasPrefix(out, "-") && !afterDashes {
			return nil, fmt.Errorf("%w: the %s starts with %q, and the template of executor %q passes {%s} as a word of its own, "+
				"where %s would read it as an option; put -- before {%s} in the template, write it inside a word (--%s={%s}), "+
				"or leave {prompt} out to pass the prompt on standard input",
				ErrOptionLike, name, clipValue(out), s.Name, name, s.Words[0], name, name, name)
		}
		if w == "--" {
			afterDashes = true
		}
		args = append(args, out)
	}
	return args, nil
}

// expand replaces the placeholders of one template word, left to right.
func expand(w string, vals map[string]string) string {
	if !strings.Contains(w, "{") {
		return w
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(w, '{')
		if i < 0 {
			b.WriteString(w)
			return b.String()
		}
		b.WriteString(w[:i])
		w = w[i:]
		name, ok := placeholderAt(w)
		if !ok {
			b.WriteByte('{')
			w = w[1:]
			continue
		}
		b.WriteString(vals[name])
		w = w[len(name)+2:]
	}
}

// placeholderAt reports the placeholder that w starts with.
func placeholderAt(w string) (string, bool) {
	for _, p := range placeholders {
		if strings.HasPrefix(w, "{"+p+"}") {
			return p, true
		}
	}
	return "", false
}

// leadingName is the placeholder whose value a word's expansion starts
// with: the first of the placeholders at its start that has a value (an
// empty one lets the next start the word).
func leadingName(w string, vals map[string]string) (string, bool) {
	for {
		name, ok := placeholderAt(w)
		if !ok {
			return "", false
		}
		if vals[name] != "" {
			return name, true
		}
		w = w[len(name)+2:]
	}
}

func clipValue(v string) string {
	if len(v) > 20 {
		return v[:20] + "…"
	}
	return v
}
