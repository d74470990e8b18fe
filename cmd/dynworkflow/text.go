package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// escapeControls makes text from agents, scripts and logs safe to print
// on a terminal: control characters (ESC above all, which could move the
// cursor, recolour or retitle the terminal), invalid UTF-8 and the
// bidirectional overrides that make text read differently than it is are
// shown as Go escapes (\x1b, \r, \u202e). Newlines and tabs stay unless
// oneLine asks for them escaped too.
func escapeControls(s string, oneLine bool) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, n, oneLine) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !needsEscape(r, n, oneLine):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

func needsEscape(r rune, size int, oneLine bool) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\n' || r == '\t':
		return oneLine
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// cutWidth cuts s to at most width terminal columns, ending it with "…"
// when it was cut. Wide characters (CJK, emoji) count as two columns, and
// one made of several code points (a flag, an emoji sequence, a letter and
// its accents) is kept or cut whole.
func cutWidth(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if textWidth(s) <= width {
		return s
	}
	budget := width - 1 // for the "…"
	rest, state, used := s, -1, 0
	for rest != "" {
		_, next, w, after := uniseg.FirstGraphemeClusterInString(rest, state)
		if used+w > budget {
			break
		}
		used, rest, state = used+w, next, after
	}
	return s[:len(s)-len(rest)] + "…"
}

// textWidth is the number of terminal columns s takes. Most of what we
// print is plain ASCII, one column a byte: that is counted without
// segmenting it into characters.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return uniseg.StringWidth(s)
		}
	}
	return len(s)
}

// plural is "1 agent", "2 agents".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
