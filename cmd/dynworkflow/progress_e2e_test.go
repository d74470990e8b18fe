package main_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// wideScript makes 200 agent calls in two phases, logs before its first
// agent, and sets its second phase from every branch (the header must
// still show once).
const wideScript = `export const meta = { name: 'wide', description: 'two hundred agents', phases: ['Fan out', 'Check'] }
log('a log line before the first agent')
phase('Fan out to every module of the repository, then check what each one says')
const out = await parallel(Array.from({ length: 150 }, (_, i) => () => agent('fan out item ' + i)))
log('fan-out finished: ' + out.filter(Boolean).length)
const checks = await parallel(Array.from({ length: 50 }, (_, i) => async () => {
  phase('Check')
  return await agent('check item ' + i)
}))
log('LAST: ' + checks.length)
return 'ok'
`

// lensScript's 150 branches each make a call and then throw a
// ReferenceError (FINDINGS is not defined), which makes them null.
const lensScript = `export const meta = { name: 'lens', description: 'branches that throw' }
return await parallel(Array.from({ length: 150 }, (_, i) => async () => {
  await agent('review module ' + i)
  return FINDINGS.filter(f => f.module === i)
}))
`

// sgrCode matches a colour code.
var sgrCode = regexp.MustCompile("\x1b\\[[0-9;]*m")

// barLine matches the live region's bar: "[███░░] 12/200 calls".
var barLine = regexp.MustCompile(`\] \d+/\d+ calls`)

// TestLiveProgressOnATerminal runs a 200-agent workflow under watch mode
// on a real pseudo-terminal at 60, 80 and 200 columns, replays what the
// CLI wrote in a terminal emulator, and checks the screen and scrollback
// a user would see: no line wider than the terminal, the live region
// redrawn in place (never left behind in the scrollback), and the phase
// headers, log lines (the one before the first agent too) and the
// watch-mode reload printed once each above it.
func TestLiveProgressOnATerminal(t *testing.T) {
	t.Parallel()
	for _, width := range []int{60, 80, 200} {
		t.Run(fmt.Sprintf("%d columns", width), func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			script := e.Write("wide.workflow.js", wideScript)
			noColor := width == 80
			p := startPTY(e, width, 30, noColor, "run", "wide.workflow.js", "--watch",
				"--simulate-latency", "20ms..60ms", "--concurrency", "8")

			// While the first execution runs, the region is at the
			// bottom of the screen, once.
			// The reader may catch a redraw half written: the region is
			// judged on a screen where it is drawn whole, and must never
			// show twice.
			p.waitOutput(t, barLine)
			for tries := 0; ; tries++ {
				mid := newVT(width, 30)
				mid.feed(p.out.Bytes())
				n := countMatching(mid.lines(), barLine)
				if n == 1 {
					break
				}
				if n > 1 || tries == 50 {
					t.Errorf("mid-run, the bar shows %d times; want once (a region redrawn in place):\n%s", n, strings.Join(mid.lines(), "\n"))
					break
				}
				p.waitMore(t)
			}

			p.waitOutput(t, regexp.MustCompile(`watching 1 file;`))
			if err := os.WriteFile(script, []byte(strings.Replace(wideScript, "'LAST: '", "'LAST after the edit: '", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			p.waitOutput(t, regexp.MustCompile(`reload 1: \d+ calls replayed`))
			p.interrupt(t)

			term := newVT(width, 30)
			raw := p.out.Bytes()
			term.feed(raw)
			lines := term.lines()
			transcript := strings.Join(lines, "\n")
			if len(term.wraps) > 0 {
				t.Errorf("%d lines were wider than the %d-column terminal, first: %q\n%s", len(term.wraps), width, term.wraps[0], transcript)
			}
			if n := countMatching(lines, barLine); n != 0 {
				t.Errorf("the live region was left behind %d times in the scrollback:\n%s", n, transcript)
			}
			// Each execution prints its headers and log lines once;
			// the edit changed only the last log line.
			for _, want := range []struct {
				line string
				n    int
			}{
				{"a log line before the first agent", 2},
				{fanOutHeader(width), 2},
				{"── Check", 2},
				{"fan-out finished: 150", 2},
				{"LAST: 50", 1},
				{"LAST after the edit: 50", 1},
			} {
				if got := countEqual(lines, want.line); got != want.n {
					t.Errorf("%q shows %d times, want %d:\n%s", want.line, got, want.n, transcript)
				}
			}
			if n := countMatching(lines, regexp.MustCompile(`» wide\.workflow\.js changed: reload 1$`)); n != 1 {
				t.Errorf("the reload notice shows %d times, want once:\n%s", n, transcript)
			}
			assertOrder(t, lines, "a log line before the first agent", "── Fan out to every", "fan-out finished: 150", "── Check", "LAST: 50",
				"wide.workflow.js changed: reload 1", "LAST after the edit: 50")
			if noColor && sgrCode.Match(raw) {
				t.Errorf("NO_COLOR is set, yet the output has colour codes")
			}
			if !noColor && !sgrCode.Match(raw) {
				t.Errorf("a terminal without NO_COLOR should get colour")
			}
		})
	}
}

// TestProgressNotOnATerminal checks what a log file gets: the log lines
// and plain progress lines now and then, no escape sequence at all, and
// warnings that repeat rolled up into one line with a count.
func TestProgressNotOnATerminal(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("wide.workflow.js", wideScript)
	r := e.DW("run", "wide.workflow.js", "--simulate-latency", "40ms..80ms", "--concurrency", "4")
	e2etest.ExpectCode(t, r, 0)
	if strings.ContainsRune(r.Stderr, 0x1b) {
		t.Errorf("stderr is not a terminal, yet it got escape sequences:\n%q", r.Stderr)
	}
	lines := strings.Split(r.Stderr, "\n")
	if countMatching(lines, regexp.MustCompile(`^\[[0-9.]+m?s\] wide-\S+ · .*\d+/\d+ calls done · \d+ running`)) == 0 {
		t.Errorf("a 3-second run printed no plain progress line:\n%s", r.Stderr)
	}
	for _, l := range []string{"a log line before the first agent", fanOutHeader(0), "── Check", "LAST: 50"} {
		if n := countEqual(lines, l); n != 1 {
			t.Errorf("%q shows %d times, want once:\n%s", l, n, r.Stderr)
		}
	}

	// Each of the 150 branches that throw becomes null with a warning: one
	// line and a count, not 150 lines. The run completes with script
	// errors: exit 3.
	e.Write("lens.workflow.js", lensScript)
	r = e.DW("run", "lens.workflow.js")
	e2etest.ExpectCode(t, r, 3)
	lines = strings.Split(r.Stderr, "\n")
	nulls := regexp.MustCompile(`^warn: branch /par\.\d+/\d+ became null: .*FINDINGS is not defined`)
	if n := countMatching(lines, nulls); n != 1 {
		t.Errorf("the null branches got %d warning lines, want one:\n%s", n, r.Stderr)
	}
	rolled := regexp.MustCompile(`^⚠ (\d+)× warn: branch /par\.\d+/\d+ became null`)
	var count int
	for _, l := range lines {
		if m := rolled.FindStringSubmatch(l); m != nil {
			fmt.Sscan(m[1], &count)
		}
	}
	if count < 100 {
		t.Errorf("want a roll-up line counting the 100+ null branches:\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "every warning, in full: dynworkflow show lens-") {
		t.Errorf("the roll-up should say where the warnings are in full:\n%s", r.Stderr)
	}
}

// fanOutHeader is the header of the first phase, as a terminal of width
// columns shows it: cut, with a column to spare (0: not cut).
func fanOutHeader(width int) string {
	h := "── Fan out to every module of the repository, then check what each one says"
	if r := []rune(h); width > 0 && len(r) > width-1 {
		return string(r[:width-2]) + "…"
	}
	return h
}

func countMatching(lines []string, re *regexp.Regexp) int {
	n := 0
	for _, l := range lines {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

func countEqual(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == want {
			n++
		}
	}
	return n
}

// assertOrder checks that lines holds each of want, in that order.
func assertOrder(t *testing.T, lines []string, want ...string) {
	t.Helper()
	i := 0
	for _, l := range lines {
		if i < len(want) && strings.Contains(l, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("%q is missing or out of order:\n%s", want[i], strings.Join(lines, "\n"))
	}
}

// startPTY starts the binary with a pseudo-terminal of cols×rows as its
// standard streams.
func startPTY(e *e2etest.Env, cols, rows int, noColor bool, args ...string) *ptyRun {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2etest.CmdTimeout)
	cmd := e.Command(ctx, args...)
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	if noColor {
		cmd.Env = append(cmd.Env, "NO_COLOR=1")
	} else {
		var env []string
		for _, kv := range cmd.Env {
			if !strings.HasPrefix(kv, "NO_COLOR=") {
				env = append(env, kv)
			}
		}
		cmd.Env = env
	}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		cancel()
		e.T.Fatalf("start dynworkflow %s on a pty: %v", strings.Join(args, " "), err)
	}
	p := &ptyRun{Env: e, Args: args, out: e2etest.NewWatchBuffer(), Exited: make(chan struct{}), terminal: f}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				_, _ = p.out.Write(buf[:n])
			}
			if err != nil {
				return // EIO once the child is gone
			}
		}
	}()
	go func() {
		defer cancel()
		p.err = cmd.Wait()
		<-read
		f.Close()
		close(p.Exited)
	}()
	e.T.Cleanup(func() {
		select {
		case <-p.Exited:
		default:
			_ = cmd.Process.Kill()
			<-p.Exited
		}
	})
	p.Signal = func(s os.Signal) error { return cmd.Process.Signal(s) }
	return p
}

// ptyRun is the binary running on a pseudo-terminal.
type ptyRun struct {
	Env    *e2etest.Env
	Args   []string
	out    *e2etest.WatchBuffer
	Exited chan struct{}
	err    error
	Signal func(os.Signal) error
	// terminal is the pseudo-terminal's master: what is written to it is
	// typed on the terminal, read by the binary as keys (Ctrl-C is "\x03").
	terminal *os.File
}

// waitOutput waits until the output matches re.
func (p *ptyRun) waitOutput(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	deadline := time.NewTimer(e2etest.WaitTimeout)
	defer deadline.Stop()
	for {
		text, changed := p.out.Changes()
		if re.Match(sgrCode.ReplaceAll(text, nil)) {
			return
		}
		select {
		case <-changed:
		case <-p.Exited:
			if !re.Match(sgrCode.ReplaceAll(p.out.Bytes(), nil)) {
				t.Fatalf("dynworkflow %s exited (%v) before printing %q:\n%s", strings.Join(p.Args, " "), p.err, re, p.out.String())
			}
			return
		case <-deadline.C:
			t.Fatalf("no %q within %v; output so far:\n%q", re, e2etest.WaitTimeout, p.out.String())
		}
	}
}

// waitMore waits until the process writes more, or exits.
func (p *ptyRun) waitMore(t *testing.T) {
	t.Helper()
	_, changed := p.out.Changes()
	select {
	case <-changed:
	case <-p.Exited:
	case <-time.After(e2etest.WaitTimeout):
		t.Fatalf("no more output within %v", e2etest.WaitTimeout)
	}
}

// interrupt sends Ctrl-C and waits for the process to exit.
func (p *ptyRun) interrupt(t *testing.T) {
	t.Helper()
	if err := p.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	select {
	case <-p.Exited:
	case <-time.After(e2etest.WaitTimeout):
		t.Fatalf("dynworkflow %s did not exit after Ctrl-C", strings.Join(p.Args, " "))
	}
	if strings.Contains(p.out.String(), "WARNING: DATA RACE") {
		t.Errorf("the binary reported a data race:\n%s", p.out.String())
	}
}

// readmeStyle names its phases only in agent(), as the README's first
// example and the Node runtime's do.
const readmeStyle = `export const meta = { name: 'lenses', description: 'phases in agent() only', phases: [{ title: 'Review' }, { title: 'Verify' }] }
const found = await parallel(['correctness', 'security', 'speed'].map(l => () => agent('review ' + l, { label: 'review:' + l, phase: 'Review' })))
const checked = await parallel(found.map((f, i) => () => agent('verify ' + i, { label: 'verify:' + i, phase: 'Verify' })))
return checked.length
`

// TestPhaseHeadersFromAgentOptions checks that the terminal prints a
// header for each phase a script names only in agent(), once, in order,
// on a terminal and in a log file alike.
func TestPhaseHeadersFromAgentOptions(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("lenses.workflow.js", readmeStyle)
	p := startPTY(e, 80, 30, true, "run", "lenses.workflow.js", "--simulate-latency", "5ms..20ms")
	p.waitOutput(t, regexp.MustCompile(`status: completed|completed`))
	<-p.Exited
	term := newVT(80, 30)
	term.feed(p.out.Bytes())
	lines := term.lines()
	for _, h := range []string{"── Review", "── Verify"} {
		if n := countEqual(lines, h); n != 1 {
			t.Errorf("%q shows %d times on the terminal, want once:\n%s", h, n, strings.Join(lines, "\n"))
		}
	}
	assertOrder(t, lines, "── Review", "── Verify")
	if len(term.wraps) > 0 {
		t.Errorf("%d lines were wider than the terminal, first: %q", len(term.wraps), term.wraps[0])
	}

	r := e.DW("run", "lenses.workflow.js")
	e2etest.ExpectCode(t, r, 0)
	plain := strings.Split(r.Stderr, "\n")
	// The note that the answers are simulated is longer than the
	// terminal is wide: there it is wrapped between words, not cut by
	// the terminal in the middle of a name; in a log file it is one line.
	want := noteText(plain, "» simulated answers")
	if len(want) <= 80 {
		t.Fatalf("the simulated-answers note in a log file: %q", want)
	}
	if got := noteText(lines, "» simulated answers"); got != want {
		t.Errorf("the simulated-answers note reads %q on the terminal, want %q:\n%s", got, want, strings.Join(lines, "\n"))
	}
	for _, h := range []string{"── Review", "── Verify"} {
		if n := countEqual(plain, h); n != 1 {
			t.Errorf("%q shows %d times in a log file, want once:\n%s", h, n, r.Stderr)
		}
	}
}

// noteText joins the lines of the note that starts with start: its first
// line and the indented ones under it, without the "» ".
func noteText(lines []string, start string) string {
	for i, l := range lines {
		if !strings.HasPrefix(l, start) {
			continue
		}
		parts := []string{strings.TrimPrefix(l, "» ")}
		for _, next := range lines[i+1:] {
			if !strings.HasPrefix(next, "  ") || strings.HasPrefix(next, "   ") {
				break
			}
			parts = append(parts, strings.TrimSpace(next))
		}
		return strings.Join(parts, " ")
	}
	return ""
}
