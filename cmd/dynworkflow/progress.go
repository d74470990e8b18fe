package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/web"
)

// progressSource is what the view reads its totals from: a run executing
// here (*engine.Run), or one followed over the API (remoteRun).
type progressSource interface {
	ID() string
	Progress() engine.Progress
}

// Timing of the view. A terminal is redrawn ten times a second; a log
// file gets a line when something changed, at most every plainEvery, and
// at least every plainQuiet so that a long agent call does not look like
// a hang.
const (
	redrawEvery = 100 * time.Millisecond
	plainEvery  = 2 * time.Second
	plainQuiet  = 30 * time.Second
	// rateWindow is how far back the calls/s rate looks.
	rateWindow = 10 * time.Second
	// maxPhaseLines and maxWarnLines bound the live region.
	maxPhaseLines = 6
	maxWarnLines  = 3
)

// progressView shows a run as it goes, the way k6 and docker compose do.
// On a terminal, a live region at the bottom (the run, a bar of the calls
// known so far, per-phase counts, tokens, cost and rate) is redrawn in
// place, every line cut to the terminal's width, re-measured when the
// window is resized; log lines, phase headers and the CLI's own notes are
// printed above it, once each. Anywhere else, the same counts come as a
// plain line now and then, between the log lines. Warnings that repeat
// (a hundred branches failing for the same reason) roll up into one line
// with a count; show keeps every one of them.
type progressView struct {
	w      io.Writer
	fd     int  // the terminal's descriptor when live
	live   bool // redraw a region in place
	color  bool
	sub    *engine.Queue // nil for a remote run
	logs   *logSink
	quit   chan struct{}
	wg     sync.WaitGroup
	winch  chan os.Signal
	closed bool

	mu     sync.Mutex
	src    progressSource
	runID  string
	width  int
	height int
	region int    // lines of the live region on the screen
	drawn  string // what the region shows, to skip identical redraws
	tally  tally
	warns  rollup
	rate   rateMeter
	// plain mode: the last counts printed, and when.
	lastPlain   string
	lastPlainAt time.Time
	// troubleSaid is, by call path, the trouble last printed in plain
	// mode, so each is said once.
	troubleSaid map[string]string
	// ask asks the run's checkpoints in the terminal (ask.go); nil when
	// they are only listed.
	ask *asker
	// spend is the latest run.spend: the run's cap and what its running
	// calls are expected to cost.
	spend engine.SpendPayload
}

// spendLine is what a run spent, against its cap and with what its
// running calls are expected to cost when it has a cap: "$1.20",
// "$1.20 of $5.00 (+$0.40 running)", or "" while it has spent nothing
// and has no cap.
func spendLine(spent, limit, expected float64) string {
	if spent <= 0 && limit <= 0 {
		return ""
	}
	s := "$" + dollars(spent)
	if limit > 0 {
		s += " of $" + dollars(limit) + " cap"
		if expected > 0 {
			s += fmt.Sprintf(" (+$%s running)", dollars(expected))
		}
	}
	return s
}

// dollars prints an amount as people read it: cents, or more places for
// sums under a cent.
func dollars(usd float64) string {
	if usd > 0 && usd < 0.01 {
		return fmt.Sprintf("%.4f", usd)
	}
	return fmt.Sprintf("%.2f", usd)
}

// newProgressView returns a view writing to w: live when w is a terminal
// (and TERM is not dumb), plain otherwise and under --json. Colour follows
// NO_COLOR.
func newProgressView(w io.Writer, jsonMode bool, logs *logSink) *progressView {
	v := &progressView{w: w, fd: -1, quit: make(chan struct{}), logs: logs}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb" {
		v.fd = int(f.Fd())
		v.live = !jsonMode
		v.color = os.Getenv("NO_COLOR") == ""
	}
	v.tally.reset()
	return v
}

// subscribe takes the runtime's events from now on. Call it before the
// run starts, so that nothing it says before its first agent is lost.
func (v *progressView) subscribe(bus *engine.Bus) {
	v.sub = bus.SubscribeQueue(8192, func(e engine.Event) bool { return e.Type != engine.EventCallProgress })
}

// start shows src until stop.
func (v *progressView) start(src progressSource) {
	v.mu.Lock()
	v.src, v.runID = src, src.ID()
	v.measureLocked()
	v.lastPlainAt = time.Now()
	v.mu.Unlock()
	v.logs.show(v)
	if v.live {
		v.winch = make(chan os.Signal, 1)
		signal.Notify(v.winch, syscall.SIGWINCH)
	}
	v.wg.Add(1)
	go v.loop()
}

// follow switches the view to another execution of the same run (a
// watch-mode reload).
func (v *progressView) follow(src progressSource) {
	v.mu.Lock()
	v.src = src
	v.mu.Unlock()
}

// detach erases the live region until the next follow, so that the CLI
// can print an outcome; lines of the run's events still come.
func (v *progressView) detach() {
	v.mu.Lock()
	defer v.mu.Unlock()
	var b bytes.Buffer
	v.clearLocked(&b)
	_, _ = v.w.Write(b.Bytes())
	v.src = nil
}

func (v *progressView) measureLocked() {
	if v.fd < 0 {
		return
	}
	if w, h, err := term.GetSize(v.fd); err == nil && w > 0 {
		v.width, v.height = w, h
	}
	if v.width <= 0 {
		v.width, v.height = 80, 24
	}
}

// ready is the queue's signal, or nil (never ready) without one.
func (v *progressView) ready() <-chan struct{} {
	if v.sub == nil {
		return nil
	}
	return v.sub.Ready()
}

// take applies the events waiting.
func (v *progressView) take() {
	for _, e := range v.sub.Take() {
		v.local(e)
	}
}

func (v *progressView) loop() {
	defer v.wg.Done()
	every := redrawEvery
	if !v.live {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-v.quit:
			v.drain()
			return
		case _, ok := <-v.ready():
			v.take()
			if !ok {
				return
			}
		case <-v.winch:
			v.mu.Lock()
			v.resizeLocked()
			v.mu.Unlock()
		case <-tick.C:
			v.mu.Lock()
			if v.live {
				v.redrawLocked()
			} else {
				v.plainLocked()
			}
			v.mu.Unlock()
		}
	}
}

func (v *progressView) drain() {
	if v.sub != nil {
		v.take()
	}
}

// local applies an event of the local bus.
func (v *progressView) local(e engine.Event) {
	if e.Type == engine.EventSubscriberReset {
		// Events were lost: the counters still hold; the per-phase
		// counts may lag until the next execution.
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if e.RunID != v.runID {
		return
	}
	v.applyLocked(e.Type, e.Payload)
}

// apply applies an event of a run followed over the API.
func (v *progressView) apply(typ string, payload any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.applyLocked(typ, payload)
}

func (v *progressView) applyLocked(typ string, payload any) {
	switch p := payload.(type) {
	case engine.CallPayload:
		v.tally.call(typ, p)
	case engine.StartedPayload:
		// A new execution (a resume, a watch-mode reload): its phases
		// start again.
		v.tally.reset()
	case engine.PhasePayload:
		if v.tally.seePhase(p.Title) {
			l := line{{"── " + escapeControls(p.Title, true), styleBold}}
			if v.live {
				l = l.fit(v.width - 1)
			}
			v.printLocked(l)
		}
	case engine.LogPayload:
		v.logLocked(p.Level, p.Message)
	case engine.LimitPayload:
		v.logLocked("warn", "limit reached: "+p.Message)
	case web.Checkpoint:
		switch {
		case typ == web.EventCheckpointWithdrawn:
			if v.ask != nil {
				v.ask.goneLocked(p.Path, nil, "")
			}
		case v.ask != nil:
			v.ask.pendingLocked(p)
		default:
			v.printLocked(line{{fmt.Sprintf("? checkpoint %s: %s (answer with: dynworkflow respond %s %s)",
				p.ID, escapeControls(p.Prompt, true), p.ID, answerHint(p)), styleCyan}})
		}
	case engine.CheckpointPayload:
		if v.ask != nil {
			v.ask.goneLocked(p.Path, p.Answer, p.Source)
		}
	case engine.SpendPayload:
		v.spend = p
	}
}

// logLocked prints a log line; a warning or error like one already shown
// rolls up into the live region's count instead.
func (v *progressView) logLocked(level, msg string) {
	text := msg
	if level != "" && level != "info" {
		text = level + ": " + msg
	}
	text = escapeControls(text, false)
	st := styleNone
	switch level {
	case "warn":
		st = styleYellow
		if !v.warns.first(text) {
			return
		}
	case "error":
		st = styleRed
		if !v.warns.first(text) {
			return
		}
	}
	v.printLocked(line{{text, st}})
}

// logLine prints a line of the runtime's own log, rolled up like a
// script's warnings.
func (v *progressView) logLine(text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	text = escapeControls(text, true)
	if v.warns.first(text) {
		v.printLocked(line{{text, styleYellow}})
	}
}

// note prints a line from the CLI itself. On a terminal a long one is
// wrapped between words, its later lines indented under the first: the
// terminal would cut it anywhere, a flag's or a file's name included.
func (v *progressView) note(msg string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.live {
		v.printLocked(line{{"» " + msg, styleDim}})
		return
	}
	if v.width <= 0 {
		v.measureLocked()
	}
	for i, part := range wrapText(msg, v.width-3, maxNoteLines) {
		prefix := "  "
		if i == 0 {
			prefix = "» "
		}
		v.printLocked(line{{prefix + part, styleDim}})
	}
}

// maxNoteLines bounds a note on a terminal; what is left is cut with "…".
const maxNoteLines = 8

// printLocked prints l above the live region.
func (v *progressView) printLocked(l line) {
	var b bytes.Buffer
	v.clearLocked(&b)
	b.WriteString(l.render(v.color))
	b.WriteByte('\n')
	if v.live {
		v.drawLocked(&b)
	}
	_, _ = v.w.Write(b.Bytes())
}

// clearLocked erases the live region: the cursor is at the end of its
// last line.
func (v *progressView) clearLocked(b *bytes.Buffer) {
	if v.region == 0 {
		return
	}
	b.WriteByte('\r')
	if v.region > 1 {
		fmt.Fprintf(b, "\x1b[%dA", v.region-1)
	}
	b.WriteString("\x1b[J")
	v.region, v.drawn = 0, ""
}

func (v *progressView) redrawLocked() {
	if v.src == nil {
		return
	}
	lines := v.regionLocked()
	text := renderRegion(lines, v.color)
	if text == v.drawn {
		return
	}
	var b bytes.Buffer
	v.clearLocked(&b)
	b.WriteString(text)
	v.region, v.drawn = len(lines), text
	_, _ = v.w.Write(b.Bytes())
}

func (v *progressView) drawLocked(b *bytes.Buffer) {
	if v.src == nil {
		return
	}
	lines := v.regionLocked()
	text := renderRegion(lines, v.color)
	b.WriteString(text)
	v.region, v.drawn = len(lines), text
}

// resizeLocked re-measures the terminal and redraws. A terminal that
// re-wraps its lines on resize (most do: VTE, iTerm2, kitty, tmux) has
// turned each old line into as many rows as it now takes.
func (v *progressView) resizeLocked() {
	old := v.drawn
	v.measureLocked()
	if v.region > 0 {
		rows := 0
		for _, l := range strings.Split(stripANSI(old), "\n") {
			rows += max(1, (textWidth(l)+v.width-1)/v.width)
		}
		v.region = rows
	}
	var b bytes.Buffer
	v.clearLocked(&b)
	v.drawLocked(&b)
	_, _ = v.w.Write(b.Bytes())
}

// regionLocked builds the live region, each line cut to the width (one
// column is left free: a line that fills the last column makes some
// terminals wrap).
func (v *progressView) regionLocked() []line {
	p := v.src.Progress()
	now := time.Now()
	s := p.Stats
	done := s.Live + s.Replayed
	finished := s.Live + s.Failed
	v.rate.add(now, finished)
	known := max(p.Calls, done+s.Failed+s.Running)

	var lines []line
	head := line{{v.src.ID(), styleBold}}
	if p.SimulatedAnswers {
		head = append(head, seg{"  simulated answers", styleYellow})
	}
	if p.Phase != "" {
		head = append(head, seg{"  " + escapeControls(p.Phase, true), styleCyan})
	}
	head = append(head, seg{"  " + humanMs(now.Sub(p.Started).Milliseconds()), styleDim})
	lines = append(lines, head)

	barWidth := min(30, max(10, v.width/4))
	filled := 0
	if known > 0 {
		filled = barWidth * (done + s.Failed) / known
	}
	counts := line{
		{"[", styleNone}, {strings.Repeat("█", filled), styleGreen}, {strings.Repeat("░", barWidth-filled), styleDim}, {"] ", styleNone},
		{fmt.Sprintf("%d/%d calls", done, known), styleBold},
	}
	if s.Replayed > 0 {
		counts = append(counts, seg{fmt.Sprintf(" (%d replayed)", s.Replayed), styleDim})
	}
	counts = append(counts, seg{fmt.Sprintf(" · %d running", s.Running), styleNone})
	if q := known - done - s.Failed - s.Running; q > 0 {
		counts = append(counts, seg{fmt.Sprintf(" · %d queued", q), styleDim})
	}
	if s.Failed > 0 {
		counts = append(counts, seg{fmt.Sprintf(" · %d failed", s.Failed), styleRed})
	}
	if retried := max(v.tally.retried, s.Retried); retried > 0 {
		counts = append(counts, seg{fmt.Sprintf(" · %d retried", retried), styleYellow})
	}
	lines = append(lines, counts)

	if len(v.tally.phases) > 1 || (len(v.tally.phases) == 1 && v.tally.phases[0].name != "") {
		shown := v.tally.phases
		more := 0
		if len(shown) > maxPhaseLines {
			more = len(shown) - (maxPhaseLines - 1)
			shown = shown[len(shown)-(maxPhaseLines-1):]
		}
		if more > 0 {
			lines = append(lines, line{{fmt.Sprintf("  … %d earlier phases", more), styleDim}})
		}
		nameWidth := 0
		for _, ph := range shown {
			nameWidth = max(nameWidth, textWidth(ph.label()))
		}
		for _, ph := range shown {
			l := line{{"  " + ph.label() + strings.Repeat(" ", nameWidth-textWidth(ph.label())), styleCyan},
				{fmt.Sprintf("  %d done", ph.done), styleNone}}
			if ph.running > 0 {
				l = append(l, seg{fmt.Sprintf(" · %d running", ph.running), styleNone})
			}
			if ph.failed > 0 {
				l = append(l, seg{fmt.Sprintf(" · %d failed", ph.failed), styleRed})
			}
			lines = append(lines, l)
		}
	}

	usage := line{{fmt.Sprintf("tokens %s in / %s out", humanCount(s.InputTokens), humanCount(s.OutputTokens)), styleNone}}
	if spent := spendLine(s.CostUSD, max(p.MaxCostUSD, v.spend.MaxCostUSD), v.spend.ExpectedUSD); spent != "" {
		usage = append(usage, seg{" · " + spent, styleNone})
	}
	if r, ok := v.rate.perSecond(now); ok {
		usage = append(usage, seg{fmt.Sprintf(" · %.1f calls/s", r), styleNone})
	}
	lines = append(lines, usage)

	for _, c := range p.Troubled {
		lines = append(lines, troubleLine(c, now))
	}
	for _, w := range v.warns.repeated(maxWarnLines) {
		lines = append(lines, line{{fmt.Sprintf("⚠ %d× ", w.count), styleYellow}, {w.last, styleYellow}})
	}

	for i := range lines {
		lines[i] = lines[i].fit(v.width - 1)
	}
	var question []line
	if v.ask != nil {
		question = v.ask.linesLocked(v.width - 1)
	}
	// A question is never cut: the run's lines make room for it.
	if room := v.height - 1 - len(question); v.height > 1 && len(lines) > room {
		lines = lines[:max(0, room)]
	}
	return append(lines, question...)
}

// plainLocked prints the counts as one line when they changed, at most
// every plainEvery, and at least every plainQuiet.
func (v *progressView) plainLocked() {
	if v.src == nil {
		return
	}
	p := v.src.Progress()
	v.plainTroubleLocked(p, time.Now())
	s := p.Stats
	done := s.Live + s.Replayed
	known := max(p.Calls, done+s.Failed+s.Running)
	var b strings.Builder
	fmt.Fprintf(&b, "%s", v.src.ID())
	if p.SimulatedAnswers {
		b.WriteString(" · simulated answers")
	}
	if p.Phase != "" {
		fmt.Fprintf(&b, " · %s", escapeControls(p.Phase, true))
	}
	fmt.Fprintf(&b, " · %d/%d calls done · %d running", done, known, s.Running)
	if q := known - done - s.Failed - s.Running; q > 0 {
		fmt.Fprintf(&b, " · %d queued", q)
	}
	if s.Failed > 0 {
		fmt.Fprintf(&b, " · %d failed", s.Failed)
	}
	if retried := max(v.tally.retried, s.Retried); retried > 0 {
		fmt.Fprintf(&b, " · %d retried", retried)
	}
	fmt.Fprintf(&b, " · tokens %s in / %s out", humanCount(s.InputTokens), humanCount(s.OutputTokens))
	if spent := spendLine(s.CostUSD, max(p.MaxCostUSD, v.spend.MaxCostUSD), v.spend.ExpectedUSD); spent != "" {
		fmt.Fprintf(&b, " · %s", spent)
	}
	counts := b.String()
	now := time.Now()
	v.rate.add(now, s.Live+s.Failed)
	since := now.Sub(v.lastPlainAt)
	if counts == v.lastPlain && since < plainQuiet || since < plainEvery {
		return
	}
	v.lastPlain, v.lastPlainAt = counts, now
	rate := ""
	if r, ok := v.rate.perSecond(now); ok {
		rate = fmt.Sprintf(" · %.1f calls/s", r)
	}
	fmt.Fprintf(v.w, "[%s] %s%s\n", humanMs(now.Sub(p.Started).Milliseconds()), counts, rate)
}

// plainTroubleLocked prints, in plain mode, each running call that gets
// into trouble (its CLI retrying or unable to reach its endpoint, or no
// progress for a while), once per trouble.
func (v *progressView) plainTroubleLocked(p engine.Progress, now time.Time) {
	if v.troubleSaid == nil {
		v.troubleSaid = map[string]string{}
	}
	seen := map[string]bool{}
	for _, c := range p.Troubled {
		seen[c.Path] = true
		key := c.Activity.Kind + "\x00" + c.Activity.Text
		if v.troubleSaid[c.Path] == key {
			continue
		}
		v.troubleSaid[c.Path] = key
		fmt.Fprintf(v.w, "[%s] %s\n", humanMs(now.Sub(p.Started).Milliseconds()), troubleLine(c, now).render(false))
	}
	for path := range v.troubleSaid {
		if !seen[path] {
			delete(v.troubleSaid, path)
		}
	}
}

// troubleLine names a running call in trouble and what it did last.
func troubleLine(c engine.CallActivity, now time.Time) line {
	name := c.Path
	if c.Label != "" {
		name = escapeControls(c.Label, true) + " (" + c.Path + ")"
	}
	st := styleYellow
	if k := c.Activity.Kind; k == executors.ActivityUnreachable || k == executors.ActivityError {
		st = styleRed
	}
	return line{{"⏳ " + name + ": ", st}, {activityLine(c, now), styleNone}}
}

// stop ends the view: the live region is erased (the outcome follows),
// and each warning that rolled up gets its count.
func (v *progressView) stop() {
	if v.closed {
		return
	}
	v.closed = true
	v.logs.hide(v)
	close(v.quit)
	v.wg.Wait()
	v.mu.Lock()
	if v.ask != nil {
		v.ask.stopLocked()
	}
	v.mu.Unlock()
	if v.winch != nil {
		signal.Stop(v.winch)
	}
	if v.sub != nil {
		v.sub.Close()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var b bytes.Buffer
	v.clearLocked(&b)
	_, _ = v.w.Write(b.Bytes())
	rolled := v.warns.repeated(-1)
	for _, w := range rolled {
		l := line{{fmt.Sprintf("⚠ %d× ", w.count), styleYellow}, {w.last, styleYellow}}
		if v.live {
			// A long warning is cut on a terminal; show has it whole.
			l = l.fit(v.width - 1)
		}
		fmt.Fprintln(v.w, l.render(v.color))
	}
	if len(rolled) > 0 && v.runID != "" {
		l := line{{"  every warning, in full: dynworkflow show " + v.runID, styleDim}}
		if v.live {
			l = l.fit(v.width - 1)
		}
		fmt.Fprintln(v.w, l.render(v.color))
	}
}

// tally counts one execution's calls per phase, from its events.
type tally struct {
	phases  []*phaseCount // in the order they were first seen
	byName  map[string]*phaseCount
	headers map[string]bool // phase headers printed
	retried int
}

type phaseCount struct {
	name                  string
	done, failed, running int
}

func (p *phaseCount) label() string {
	if p.name == "" {
		return "(no phase)"
	}
	return escapeControls(p.name, true)
}

func (t *tally) reset() {
	*t = tally{byName: map[string]*phaseCount{}, headers: map[string]bool{}}
}

func (t *tally) phase(name string) *phaseCount {
	p, ok := t.byName[name]
	if !ok {
		p = &phaseCount{name: name}
		t.byName[name] = p
		t.phases = append(t.phases, p)
	}
	return p
}

// seePhase reports whether a phase header is new in this execution.
func (t *tally) seePhase(title string) bool {
	if t.headers[title] {
		return false
	}
	t.headers[title] = true
	return true
}

func (t *tally) call(typ string, c engine.CallPayload) {
	switch typ {
	case engine.EventCallStarted:
		t.phase(c.Phase).running++
	case engine.EventCallFinished:
		p := t.phase(c.Phase)
		p.running, p.done = max(0, p.running-1), p.done+1
	case engine.EventCallFailed:
		p := t.phase(c.Phase)
		p.running, p.failed = max(0, p.running-1), p.failed+1
	case engine.EventCallReplayed:
		t.phase(c.Phase).done++
	case engine.EventCallRetry:
		t.retried++
	}
}

// rollup counts warnings by their shape: the text with its numbers taken
// out, so "branch /par.0/3 became null: … (512 of 500 tokens)" and the
// same for branch 4 are one warning.
type rollup struct {
	byKey map[string]*repeated
	order []*repeated
}

type repeated struct {
	count int
	last  string
}

// first records text and reports whether it is the first of its shape.
func (r *rollup) first(text string) bool {
	if r.byKey == nil {
		r.byKey = map[string]*repeated{}
	}
	key := shape(text)
	w, ok := r.byKey[key]
	if !ok {
		w = &repeated{}
		r.byKey[key] = w
		r.order = append(r.order, w)
	}
	w.count++
	w.last = text
	return !ok
}

// repeated lists the warnings seen more than once, the latest first, at
// most n of them (all for n < 0).
func (r *rollup) repeated(n int) []repeated {
	var out []repeated
	for i := len(r.order) - 1; i >= 0 && (n < 0 || len(out) < n); i-- {
		if w := r.order[i]; w.count > 1 {
			out = append(out, *w)
		}
	}
	return out
}

func shape(text string) string {
	var b strings.Builder
	digits := false
	for _, c := range text {
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(c)
	}
	return b.String()
}

// rateMeter measures finished calls per second over the last rateWindow.
type rateMeter struct {
	samples []rateSample
}

type rateSample struct {
	at time.Time
	n  int
}

func (m *rateMeter) add(at time.Time, n int) {
	m.samples = append(m.samples, rateSample{at, n})
	cut := 0
	for cut < len(m.samples)-1 && at.Sub(m.samples[cut].at) > rateWindow {
		cut++
	}
	m.samples = m.samples[cut:]
}

func (m *rateMeter) perSecond(now time.Time) (float64, bool) {
	if len(m.samples) < 2 {
		return 0, false
	}
	first, last := m.samples[0], m.samples[len(m.samples)-1]
	span := last.at.Sub(first.at).Seconds()
	if span < 1 || last.n == first.n {
		return 0, false
	}
	return float64(last.n-first.n) / span, true
}
