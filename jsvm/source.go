package jsvm

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dop251/goja/file"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The body of a workflow runs as the body of an async arrow function, so
// that top-level await and return parse; an arrow, as in the Node runtime,
// so that the script's top level has no arguments object of its own. The prefix sits on the first line so
// that every line number stays the same; only the columns of line 1 shift,
// by len(bodyPrefix), and positions are corrected back when reported. The
// suffix starts with a newline so a trailing line comment cannot swallow it.
const (
	bodyPrefix = "(async () => {"
	bodySuffix = "\n})"
)

// A source is one script file and the means to name positions in it.
type source struct {
	path  string
	text  string
	lines []int // byte offset where each line starts

	// marks holds, per line with non-ASCII text, how many characters come
	// before every markStride-th byte of the line, so that a column costs
	// at most markStride bytes of counting, however long the line: the
	// meta reader asks for the position of every literal, and a meta of
	// 100,000 phases on one line made counting from the line's start
	// quadratic. Errors of a running script ask too, from any goroutine.
	mu    sync.Mutex
	marks map[int][]int
}

const markStride = 256

func newSource(path, text string) *source {
	s := &source{path: path, text: text, lines: []int{0}}
	for i := 0; i < len(text); {
		n := lineBreak(text[i:])
		if n == 0 {
			i++
			continue
		}
		i += n
		s.lines = append(s.lines, i)
	}
	return s
}

// lineBreak returns the length of the line terminator at the start of s, or
// 0. It counts the same terminators as goja, so line numbers agree.
func lineBreak(s string) int {
	switch {
	case strings.HasPrefix(s, "\r\n"):
		return 2
	case s[0] == '\n' || s[0] == '\r':
		return 1
	case strings.HasPrefix(s, "\u2028"), strings.HasPrefix(s, "\u2029"):
		return 3
	}
	return 0
}

// wrapped returns the program that goja parses: the script inside the async
// wrapper, with the n bytes at offset blank (the meta's export keyword)
// replaced by spaces so that no offset moves.
func (s *source) wrapped(blank, n int) string {
	text := s.text
	if n > 0 {
		text = text[:blank] + strings.Repeat(" ", n) + text[blank+n:]
	}
	return bodyPrefix + text + bodySuffix
}

// at returns the 1-based line and column of the byte offset off. Columns
// count characters, as editors do, not bytes.
func (s *source) at(off int) (line, col int) {
	off = max(0, min(off, len(s.text)))
	line = sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off })
	start := s.lines[line-1]
	if off-start < markStride {
		return line, utf8.RuneCountInString(s.text[start:off]) + 1
	}
	marks := s.lineMarks(line)
	if marks == nil { // ASCII: a byte is a character
		return line, off - start + 1
	}
	k := (off - start) / markStride
	return line, marks[k] + runeStarts(s.text[start+k*markStride:off]) + 1
}

// runeStarts counts the bytes of s that start a character: its characters,
// for valid UTF-8 (checkText sees to that), even when s is cut from a
// longer text in the middle of one.
func runeStarts(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if utf8.RuneStart(s[i]) {
			n++
		}
	}
	return n
}

// lineMarks returns the character counts of line (1-based) at every
// markStride-th byte, or nil for a line that is all ASCII.
func (s *source) lineMarks(line int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.marks[line]; ok {
		return m
	}
	end := len(s.text)
	if line < len(s.lines) {
		end = s.lines[line]
	}
	text := s.text[s.lines[line-1]:end]
	var marks []int
	if !isASCII(text) {
		marks = make([]int, 0, len(text)/markStride+1)
		for k := 0; k < len(text); k += markStride {
			if k == 0 {
				marks = append(marks, 0)
				continue
			}
			marks = append(marks, marks[len(marks)-1]+runeStarts(text[k-markStride:k]))
		}
	}
	if s.marks == nil {
		s.marks = map[int][]int{}
	}
	s.marks[line] = marks
	return marks
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// offset converts a node index of the wrapped program to a byte offset in
// the script. Indexes are 1-based and count the wrapper's prefix.
func (s *source) offset(idx file.Idx) int {
	return int(idx) - 1 - len(bodyPrefix)
}

// fromWrapped converts a line and byte column that goja reports for the
// wrapped program into a byte offset in the script. A position on the
// wrapper's closing line is the end of the script.
func (s *source) fromWrapped(line, col int) int {
	switch {
	case line < 1:
		return 0
	case line > len(s.lines):
		return len(s.text)
	case line == 1:
		col -= len(bodyPrefix)
	}
	return min(s.lines[line-1]+max(0, col-1), len(s.text))
}

// errorf returns a load-time error at the byte offset off.
func (s *source) errorf(off int, hint, format string, args ...any) *lang.Error {
	line, col := s.at(off)
	return lang.Errorf(s.path, line, col, hint, format, args...)
}

// checkText rejects text that is not UTF-8 or that holds control
// characters. Control characters (and the bidirectional overrides of
// "Trojan Source" attacks) can hide code from a person reading the script
// before approving it, so a script must not contain them.
func (s *source) checkText() error {
	for off, r := range s.text {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s.text[off:], "\uFFFD"):
			return s.errorf(off, "save the file as UTF-8", "the script is not valid UTF-8")
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return s.errorf(off, "remove it; control characters would be hidden from anyone reading the script",
				"the script contains the control character %U", r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return s.errorf(off, "remove it; bidirectional overrides can make code read differently than it runs",
				"the script contains the bidirectional control character %U", r)
		}
	}
	return nil
}
