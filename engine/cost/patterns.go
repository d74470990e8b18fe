package cost

import (
	"strings"
)

// LabelPattern is the group a call label belongs to: every word of it
// that holds a digit (a number, an index, a hash) becomes "*", and a
// separator just before such a word a space, so that scan-1 … scan-200
// are all "scan *", "review 3 of 9" is "review * of *" and
// "check:file-ea3d1" is "check:file *". A label without digits is its own
// pattern.
func LabelPattern(label string) string {
	var b strings.Builder
	for i := 0; i < len(label); {
		j := i
		for j < len(label) && isWordByte(label[j]) {
			j++
		}
		if j == i {
			b.WriteByte(label[i])
			i++
			continue
		}
		word := label[i:j]
		if strings.ContainsAny(word, "0123456789") {
			// A separator right before the word joins the "*".
			s := b.String()
			if n := len(s); n > 0 && strings.IndexByte("-_.#/ ", s[n-1]) >= 0 {
				b.Reset()
				b.WriteString(s[:n-1])
				b.WriteByte(' ')
			}
			b.WriteByte('*')
		} else {
			b.WriteString(word)
		}
		i = j
	}
	return b.String()
}

// isWordByte says whether c is part of a word of a label: ASCII letters
// and digits, and any byte of a character beyond ASCII.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// PathPattern is the group of an unlabeled call: its path with the index
// of every fan-out branch made "*" (/par.0/17/agent.0 is
// /par.0/*/agent.0), so that a parallel()'s calls are one group.
func PathPattern(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, "/")
}

// GroupOf is the group a call is counted in: its label's pattern, or for
// a call without a label its path's.
func GroupOf(path, label string) string {
	if label != "" {
		return LabelPattern(label)
	}
	return PathPattern(path)
}

// Glob reports whether s matches pattern, where "*" matches any run of
// characters (none included) and everything else matches itself.
func Glob(pattern, s string) bool {
	star, back := -1, 0
	i, j := 0, 0
	for j < len(s) {
		switch {
		case i < len(pattern) && pattern[i] == '*':
			star, back = i, j
			i++
		case i < len(pattern) && pattern[i] == s[j]:
			i++
			j++
		case star >= 0:
			back++
			i, j = star+1, back
		default:
			return false
		}
	}
	for i < len(pattern) && pattern[i] == '*' {
		i++
	}
	return i == len(pattern)
}

// LabelMatches reports whether a route or a selector pattern names the
// call labeled label: the label itself, its pattern ("scan *" names
// scan-12), or a glob of it ("scan-*").
func LabelMatches(pattern, label string) bool {
	if label == "" || pattern == "" {
		return false
	}
	return pattern == label || pattern == LabelPattern(label) || Glob(pattern, label)
}
