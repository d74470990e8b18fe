package main_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// vt is a terminal emulator just large enough to replay what the CLI
// writes to a terminal: printable text with auto-wrap at the right
// margin, CR, LF, backspace, tab, cursor movement (CSI A B C D G H) and
// erasing (CSI K, CSI J); colours and modes are read and ignored. Rows
// that scroll off the top go to the scrollback, as on a real terminal.
// It counts auto-wraps: a line the CLI meant as one row that took two.
type vt struct {
	width, height int
	rows          [][]rune // the screen; 0 marks an empty cell
	scrollback    []string
	x, y          int
	pendingWrap   bool // the cursor is past the last column (xterm's rule)
	wraps         []string
}

func newVT(width, height int) *vt {
	t := &vt{width: width, height: height}
	for range height {
		t.rows = append(t.rows, make([]rune, width))
	}
	return t
}

// feed plays b. A sequence cut at the end of b is left out: feed the
// whole stream again from the start for a later snapshot.
func (t *vt) feed(b []byte) {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			n, ok := t.escape(b[i:])
			if !ok {
				return
			}
			i += n
			continue
		case c == '\r':
			t.x, t.pendingWrap = 0, false
		case c == '\n':
			t.lineFeed()
			t.pendingWrap = false
		case c == '\b':
			if t.x > 0 {
				t.x--
			}
			t.pendingWrap = false
		case c == '\t':
			t.x = min((t.x/8+1)*8, t.width-1)
		case c < 0x20 || c == 0x7f:
			// other controls: bell and the like
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 && !utf8.FullRune(b[i:]) {
				return
			}
			t.put(r)
			i += n
			continue
		}
		i++
	}
}

func (t *vt) put(r rune) {
	w := runewidth.RuneWidth(r)
	if w == 0 {
		return
	}
	if t.pendingWrap || t.x+w > t.width {
		t.wraps = append(t.wraps, t.rowText(t.y))
		t.x, t.pendingWrap = 0, false
		t.lineFeed()
	}
	t.rows[t.y][t.x] = r
	for k := 1; k < w; k++ {
		t.rows[t.y][t.x+k] = 0
	}
	t.x += w
	if t.x >= t.width {
		t.x, t.pendingWrap = t.width-1, true
	}
}

func (t *vt) lineFeed() {
	if t.y < t.height-1 {
		t.y++
		return
	}
	t.scrollback = append(t.scrollback, t.rowText(0))
	copy(t.rows, t.rows[1:])
	t.rows[t.height-1] = make([]rune, t.width)
}

// escape plays one escape sequence and returns its length; ok is false
// when b ends inside it.
func (t *vt) escape(b []byte) (n int, ok bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 2, true // ESC 7, ESC 8 and friends: not used by the CLI
	}
	j := 2
	for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
		j++
	}
	if j == len(b) {
		return 0, false
	}
	params, final := string(b[2:j]), b[j]
	arg := func(k, def int) int {
		parts := strings.Split(strings.TrimPrefix(params, "?"), ";")
		if k < len(parts) {
			if v, err := strconv.Atoi(parts[k]); err == nil && v > 0 {
				return v
			}
		}
		return def
	}
	switch final {
	case 'A':
		t.y = max(0, t.y-arg(0, 1))
		t.pendingWrap = false
	case 'B':
		t.y = min(t.height-1, t.y+arg(0, 1))
		t.pendingWrap = false
	case 'C':
		t.x = min(t.width-1, t.x+arg(0, 1))
		t.pendingWrap = false
	case 'D':
		t.x = max(0, t.x-arg(0, 1))
		t.pendingWrap = false
	case 'G':
		t.x = min(t.width-1, arg(0, 1)-1)
		t.pendingWrap = false
	case 'H':
		t.y, t.x = min(t.height-1, arg(0, 1)-1), min(t.width-1, arg(1, 1)-1)
		t.pendingWrap = false
	case 'K':
		switch arg(0, 0) {
		case 0:
			clear(t.rows[t.y][t.x:])
		case 1:
			clear(t.rows[t.y][:t.x+1])
		case 2:
			clear(t.rows[t.y])
		}
	case 'J':
		switch arg(0, 0) {
		case 0:
			clear(t.rows[t.y][t.x:])
			for y := t.y + 1; y < t.height; y++ {
				clear(t.rows[y])
			}
		case 2:
			for y := range t.rows {
				clear(t.rows[y])
			}
		}
	}
	return j + 1, true
}

func (t *vt) rowText(y int) string {
	var b strings.Builder
	for _, r := range t.rows[y] {
		if r == 0 {
			r = ' '
		}
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), " ")
}

// lines is everything the terminal holds, scrollback then screen, with
// the empty rows at the bottom of the screen left out.
func (t *vt) lines() []string {
	out := append([]string{}, t.scrollback...)
	last := t.height - 1
	for last >= 0 && t.rowText(last) == "" {
		last--
	}
	for y := 0; y <= last; y++ {
		out = append(out, t.rowText(y))
	}
	return out
}

// TestVT checks the emulator on what the progress view does.
func TestVT(t *testing.T) {
	t.Parallel()
	term := newVT(10, 3)
	term.feed([]byte("log one\r\nregion a\r\nregion b"))
	term.feed([]byte("\r\x1b[1A\x1b[Jlog two\r\nregion c\r\nregion d"))
	if got, want := strings.Join(term.lines(), "|"), "log one|log two|region c|region d"; got != want {
		t.Errorf("redrawn region: got %q, want %q", got, want)
	}
	if len(term.wraps) != 0 {
		t.Errorf("no line was wider than the terminal, yet it wrapped: %q", term.wraps)
	}
	term.feed([]byte("\r\n0123456789")) // exactly the width: no wrap yet
	if len(term.wraps) != 0 {
		t.Errorf("a line of exactly the width wrapped: %q", term.wraps)
	}
	term.feed([]byte("X\x1b[3")) // one more column wraps; a cut sequence waits
	if len(term.wraps) != 1 {
		t.Errorf("a line wider than the terminal did not wrap: %q", term.lines())
	}
	if got := term.lines(); got[len(got)-1] != "X" {
		t.Errorf("the wrapped rune should start a new row: %q", got)
	}
	wide := newVT(5, 2)
	wide.feed([]byte("ab界界"))
	if len(wide.wraps) != 1 {
		t.Errorf("two wide runes after two narrow ones take 6 columns of 5 and must wrap: %q", wide.lines())
	}
}
