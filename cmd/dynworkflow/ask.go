package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

// asker asks a run's checkpoints in the terminal it is attached to, in the
// live region at the bottom of the screen: y/n for a confirm, a list to
// move through with the arrow keys for a select, a line of text. The same
// question stays answerable from respond, the API and the dashboard: the
// first answer wins, and when it comes from elsewhere the question leaves
// the screen with a line saying so. Questions wait their turn, oldest
// first. Its state is the view's, under the view's lock; keys come from a
// goroutine that reads the terminal while a question is open.
type asker struct {
	v       *progressView
	in      io.Reader
	fd      int
	respond func(ctx context.Context, cp web.Checkpoint, value json.RawMessage) error

	queue   []*question
	restore func() // puts the terminal back; nil while no question is open
	reading bool
	partial []byte // the start of an escape sequence cut by a read
}

// question is one checkpoint on the screen.
type question struct {
	cp     web.Checkpoint
	choice int    // the highlighted choice of a select
	text   []rune // what was typed for a text question
	sent   bool   // an answer went to the runtime and is being journaled
	err    string // why the runtime refused the last answer
}

// canAsk says whether the questions of a run can be asked here: the
// command reads a terminal and shows its progress live on one.
func (a *app) canAsk() bool {
	in, ok := a.stdin.(*os.File)
	return ok && canCbreak && !a.json && term.IsTerminal(int(in.Fd())) && isTerminal(a.stderr) && os.Getenv("TERM") != "dumb"
}

// askIn makes the view ask questions in the terminal, answering them with
// respond. It does nothing unless the view is live and canAsk.
func (v *progressView) askIn(a *app, respond func(ctx context.Context, cp web.Checkpoint, value json.RawMessage) error) {
	if !v.live || !a.canAsk() {
		return
	}
	in := a.stdin.(*os.File)
	v.mu.Lock()
	v.ask = &asker{v: v, in: in, fd: int(in.Fd()), respond: respond}
	v.mu.Unlock()
}

// pendingLocked puts a checkpoint on the screen, or in line after the one
// there.
func (k *asker) pendingLocked(cp web.Checkpoint) {
	for _, q := range k.queue {
		if q.cp.ID == cp.ID {
			return
		}
	}
	q := &question{cp: cp}
	if cp.Kind == lang.Select {
		var d string
		if json.Unmarshal(cp.Default, &d) == nil {
			for i, c := range cp.Choices {
				if c == d {
					q.choice = i
				}
			}
		}
	}
	k.queue = append(k.queue, q)
	if k.restore == nil {
		restore, err := cbreak(k.fd)
		if err != nil {
			k.v.printLocked(line{{"» cannot ask in this terminal (" + err.Error() + "); answer with: dynworkflow respond " + cp.ID + " " + answerHint(cp), styleYellow}})
			k.queue = k.queue[:len(k.queue)-1]
			return
		}
		k.restore = restore
	}
	if !k.reading {
		k.reading = true
		go k.read()
	}
	k.v.redrawLocked()
}

// goneLocked takes the question at path off the screen: answered (here or
// elsewhere), or withdrawn (answer nil) because the run stopped waiting.
func (k *asker) goneLocked(path string, answer json.RawMessage, source string) {
	i := -1
	for j, q := range k.queue {
		if q.cp.Path == path {
			i = j
		}
	}
	if i < 0 {
		return
	}
	q := k.queue[i]
	k.queue = append(k.queue[:i], k.queue[i+1:]...)
	prompt := escapeControls(firstLineOf(q.cp.Prompt), true)
	switch {
	case answer == nil:
		k.v.printLocked(line{{"» " + prompt + ": no longer asked (the run stopped waiting)", styleDim}})
	case q.sent:
		k.v.printLocked(line{{"? " + prompt + " ", styleCyan}, {escapeControls(string(answer), true), styleBold}})
	default:
		how := "elsewhere"
		if source != "" && source != "human" {
			how = "by " + source
		}
		k.v.printLocked(line{{"? " + prompt + " ", styleCyan}, {escapeControls(string(answer), true), styleBold},
			{"  (answered " + how + ")", styleDim}})
	}
	k.closeIfIdleLocked()
}

// closeIfIdleLocked puts the terminal back once no question is open.
func (k *asker) closeIfIdleLocked() {
	if len(k.queue) == 0 && k.restore != nil {
		k.restore()
		k.restore = nil
	}
}

// stopLocked puts the terminal back for good.
func (k *asker) stopLocked() {
	k.queue = nil
	k.closeIfIdleLocked()
}

// read hands what is typed to the question on the screen. It runs until
// the input ends; what is typed while no question is open is dropped.
func (k *asker) read() {
	buf := make([]byte, 256)
	for {
		n, err := k.in.Read(buf)
		if n > 0 {
			k.v.mu.Lock()
			q, value := k.keysLocked(buf[:n])
			k.v.redrawLocked()
			k.v.mu.Unlock()
			if value != nil {
				go k.send(q, value)
			}
		}
		if err != nil {
			return
		}
	}
}

// send answers q with value through the runtime, which checks and
// journals it; the question leaves the screen when the runtime says it
// was answered. A question answered elsewhere meanwhile is gone already.
func (k *asker) send(q *question, value json.RawMessage) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := k.respond(ctx, q.cp, value)
	k.v.mu.Lock()
	defer k.v.mu.Unlock()
	if err == nil {
		return
	}
	var ae *web.APIError
	if errors.As(err, &ae) && ae.Code == "not_found" {
		return // answered elsewhere first: its event takes it off the screen
	}
	q.sent, q.err = false, err.Error()
	k.v.redrawLocked()
}

// keysLocked applies what was typed to the question on the screen, and
// returns the answer when one was given.
func (k *asker) keysLocked(b []byte) (*question, json.RawMessage) {
	if len(k.queue) == 0 {
		k.partial = nil
		return nil, nil
	}
	q := k.queue[0]
	if q.sent {
		return nil, nil
	}
	b = append(k.partial, b...)
	k.partial = nil
	for len(b) > 0 {
		key, n := nextKey(b)
		if n == 0 {
			k.partial = append([]byte(nil), b...)
			break
		}
		b = b[n:]
		if value := q.key(key); value != nil {
			q.sent, q.err = true, ""
			return q, value
		}
	}
	return nil, nil
}

// The keys a question reads.
const (
	keyEnter = "enter"
	keyUp    = "up"
	keyDown  = "down"
	keyBack  = "backspace"
	keyClear = "ctrl-u"
)

// nextKey reads one key off the front of b: a name above, or the text of
// a character; n is 0 when b holds only the start of a sequence.
func nextKey(b []byte) (key string, n int) {
	switch c := b[0]; {
	case c == '\r' || c == '\n':
		return keyEnter, 1
	case c == 0x7f || c == 0x08:
		return keyBack, 1
	case c == 0x15:
		return keyClear, 1
	case c == 0x1b:
		if len(b) < 3 {
			if len(b) == 1 || b[1] == '[' || b[1] == 'O' {
				return "", 0
			}
			return "", 1
		}
		if b[1] == '[' || b[1] == 'O' {
			switch b[2] {
			case 'A':
				return keyUp, 3
			case 'B':
				return keyDown, 3
			}
			// Some other sequence: skip to its final byte.
			for i := 2; i < len(b); i++ {
				if b[i] >= 0x40 && b[i] <= 0x7e {
					return "", i + 1
				}
			}
			return "", 0
		}
		return "", 1
	case c < 0x20:
		return "", 1
	}
	if !utf8.FullRune(b) {
		return "", 0
	}
	r, size := utf8.DecodeRune(b)
	return string(r), size
}

// key applies one key; it returns the answer once the user gave one.
func (q *question) key(key string) json.RawMessage {
	switch q.cp.Kind {
	case lang.Confirm:
		switch strings.ToLower(key) {
		case "y":
			return json.RawMessage("true")
		case "n":
			return json.RawMessage("false")
		case keyEnter:
			if string(q.cp.Default) == "true" || string(q.cp.Default) == "false" {
				return q.cp.Default
			}
		}
	case lang.Select:
		n := len(q.cp.Choices)
		switch key {
		case keyUp, "k":
			q.choice = (q.choice + n - 1) % n
		case keyDown, "j":
			q.choice = (q.choice + 1) % n
		case keyEnter:
			v, _ := json.Marshal(q.cp.Choices[q.choice])
			return v
		default:
			if len(key) == 1 && key[0] >= '1' && key[0] <= '9' && int(key[0]-'1') < n {
				q.choice = int(key[0] - '1')
			}
		}
	default:
		switch key {
		case keyEnter:
			v, _ := json.Marshal(string(q.text))
			return v
		case keyBack:
			if len(q.text) > 0 {
				q.text = q.text[:len(q.text)-1]
			}
		case keyClear:
			q.text = nil
		case keyUp, keyDown, "":
		default:
			q.text = append(q.text, []rune(key)...)
		}
	}
	return nil
}

// maxChoicesShown bounds the lines a select takes on the screen.
const maxChoicesShown = 7

// linesLocked is the question on the screen as lines of the live region,
// width columns wide; the line being typed into comes last, where the
// cursor is.
func (k *asker) linesLocked(width int) []line {
	if len(k.queue) == 0 {
		return nil
	}
	q := k.queue[0]
	var out []line
	head := "? "
	if more := len(k.queue) - 1; more > 0 {
		head = fmt.Sprintf("? (%d more after this) ", more)
	}
	for i, l := range wrapText(escapeControls(q.cp.Prompt, false), width-len(head), 4) {
		lead := strings.Repeat(" ", textWidth(head))
		if i == 0 {
			lead = head
		}
		out = append(out, line{{lead, styleCyan}, {l, styleBold}})
	}
	also := "  also answerable with: dynworkflow respond " + q.cp.ID + ", or the dashboard"
	switch q.cp.Kind {
	case lang.Confirm:
		out = append(out, line{{also, styleDim}})
		hint := "  [y/n]"
		switch string(q.cp.Default) {
		case "true":
			hint = "  [Y/n] (Enter: yes)"
		case "false":
			hint = "  [y/N] (Enter: no)"
		}
		if q.sent {
			hint += " …"
		}
		out = append(out, line{{hint, styleCyan}})
	case lang.Select:
		out = append(out, line{{also, styleDim}})
		from := max(0, min(q.choice-maxChoicesShown/2, len(q.cp.Choices)-maxChoicesShown))
		to := min(len(q.cp.Choices), from+maxChoicesShown)
		if from > 0 {
			out = append(out, line{{fmt.Sprintf("    … %d above", from), styleDim}})
		}
		for i := from; i < to; i++ {
			text := fmt.Sprintf("%d. %s", i+1, escapeControls(q.cp.Choices[i], true))
			if i == q.choice {
				out = append(out, line{{"  › " + text, styleCyan}})
			} else {
				out = append(out, line{{"    " + text, styleNone}})
			}
		}
		if to < len(q.cp.Choices) {
			out = append(out, line{{fmt.Sprintf("    … %d below", len(q.cp.Choices)-to), styleDim}})
		}
		out = append(out, line{{"  ↑/↓ (or 1–9) then Enter", styleDim}})
	default:
		out = append(out, line{{also + " · Enter sends", styleDim}})
		typed := escapeControls(string(q.text), true)
		if room := width - 4; room > 1 && textWidth(typed) > room {
			typed = "…" + tailWidth(typed, room-1)
		}
		out = append(out, line{{"  > ", styleCyan}, {typed, styleNone}})
	}
	if q.err != "" {
		out = append(out[:len(out)-1], line{{"  refused: " + escapeControls(q.err, true), styleRed}}, out[len(out)-1])
	}
	for i := range out {
		out[i] = out[i].fit(width)
	}
	return out
}

// wrapText cuts s into lines of at most width columns, at spaces where it
// can, and at most n lines (the last one cut short).
func wrapText(s string, width, n int) []string {
	if width < 10 {
		width = 10
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		cur := ""
		for _, w := range words {
			switch {
			case cur == "":
				cur = w
			case textWidth(cur)+1+textWidth(w) <= width:
				cur += " " + w
			default:
				out = append(out, cur)
				cur = w
			}
		}
		out = append(out, cur)
	}
	if len(out) > n {
		out = out[:n]
		out[n-1] = cutWidth(out[n-1], width-1) + "…"
	}
	return out
}

// tailWidth is the end of s that fits in width columns.
func tailWidth(s string, width int) string {
	r := []rune(s)
	i := len(r)
	for i > 0 && textWidth(string(r[i-1:])) <= width {
		i--
	}
	return string(r[i:])
}

// firstLineOf is the first line of s.
func firstLineOf(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
