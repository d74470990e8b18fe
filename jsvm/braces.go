package jsvm

import "strings"

// A } too many closes the async wrapper early, and goja then reports an
// error at whatever follows, which says nothing about the real mistake.
// strayBrace finds such a brace by counting braces outside strings,
// templates, comments and regular expressions. It only runs once parsing has
// failed, so a rare misjudged regular expression costs a message, never a
// script.
func strayBrace(text string) int {
	var depth []int // per open template literal, the brace depth of its ${
	braces := 0
	prev := byte(0) // last significant byte, to tell a regex from a division
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case strings.HasPrefix(text[i:], "//"):
			i = skipTo(text, i, "\n") - 1
			continue
		case strings.HasPrefix(text[i:], "/*"):
			i = skipTo(text, i+2, "*/") + 1
			continue
		case c == '\'' || c == '"':
			i = skipQuoted(text, i, c)
		case c == '`' || c == '}' && len(depth) > 0 && depth[len(depth)-1] == braces:
			// A template, or the rest of one after a ${...}.
			if c == '}' {
				depth = depth[:len(depth)-1]
			}
			for i++; i < len(text) && text[i] != '`'; i++ {
				if text[i] == '\\' {
					i++
				} else if strings.HasPrefix(text[i:], "${") {
					depth = append(depth, braces)
					i++
					break
				}
			}
		case c == '/' && strings.IndexByte("(,=:[!&|?{};+-*%<>~^", prev) >= 0 || c == '/' && prev == 0:
			i = skipRegexp(text, i)
		case c == '{':
			braces++
		case c == '}':
			if braces == 0 {
				return i
			}
			braces--
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
	}
	return -1
}

func skipTo(text string, i int, end string) int {
	if j := strings.Index(text[i:], end); j >= 0 {
		return i + j + len(end)
	}
	return len(text)
}

func skipQuoted(text string, i int, quote byte) int {
	for i++; i < len(text) && text[i] != quote && text[i] != '\n'; i++ {
		if text[i] == '\\' {
			i++
		}
	}
	return i
}

func skipRegexp(text string, i int) int {
	inClass := false
	for i++; i < len(text) && text[i] != '\n'; i++ {
		switch text[i] {
		case '\\':
			i++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if !inClass {
				return i
			}
		}
	}
	return i
}
