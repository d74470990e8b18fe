package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/dynworkflow/dynworkflow/engine"
)

// progressSource is what the status line reads: a run executing here
// (*engine.Run), or one followed over the API (remoteRun).
type progressSource interface {
	ID() string
	Progress() engine.Progress
}

// progressView prints a run's log lines and, on a terminal, one live status
// line redrawn a few times a second. Each redraw reads the run's counters,
// so its cost does not grow with the number of agents.
type progressView struct {
	w    io.Writer
	src  progressSource
	bus  *engine.Bus // nil for a remote run
	live bool

	mu   sync.Mutex
	sub  *engine.Subscription
	quit chan struct{}
	wg   sync.WaitGroup
	line bool // a status line is on screen
}

// newProgressView returns a view of run r executing in rt.
func newProgressView(w io.Writer, rt *engine.Runtime, r *engine.Run, live bool) *progressView {
	return &progressView{w: w, src: r, bus: rt.Events(), live: live, quit: make(chan struct{})}
}

// newRemoteProgressView returns a view of a run followed over the API: its
// lines come through print, not from a local bus.
func newRemoteProgressView(w io.Writer, src progressSource, live bool) *progressView {
	return &progressView{w: w, src: src, live: live, quit: make(chan struct{})}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (v *progressView) start() {
	if v.bus != nil {
		v.subscribe()
	}
	v.wg.Add(1)
	go v.loop()
}

// subscribe takes the run's log lines from the local bus.
func (v *progressView) subscribe() {
	id := v.src.ID()
	v.sub = v.bus.Subscribe(256, func(e engine.Event) bool {
		if e.RunID != id {
			return false
		}
		switch e.Type {
		case engine.EventLog, engine.EventPhase, engine.EventLimit:
			return true
		}
		return false
	})
}

// events is the subscription's channel, or nil (never ready) without one.
func (v *progressView) events() <-chan engine.Event {
	if v.sub == nil {
		return nil
	}
	return v.sub.C
}

func (v *progressView) loop() {
	defer v.wg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	if !v.live {
		tick.Stop()
	}
	for {
		select {
		case <-v.quit:
			v.drain()
			return
		case e, ok := <-v.events():
			if !ok {
				return
			}
			v.event(e)
		case <-tick.C:
			v.redraw()
		}
	}
}

func (v *progressView) drain() {
	for {
		select {
		case e, ok := <-v.events():
			if !ok {
				return
			}
			v.event(e)
		default:
			return
		}
	}
}

func (v *progressView) event(e engine.Event) {
	var text string
	switch p := e.Payload.(type) {
	case interface{ Line() string }:
		text = p.Line()
	default:
		text = fmt.Sprint(e.Payload)
	}
	v.print(text)
}

// note prints a line from the CLI itself.
func (v *progressView) note(msg string) { v.print("» " + msg) }

func (v *progressView) print(text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearLocked()
	fmt.Fprintln(v.w, text)
	v.drawLocked()
}

func (v *progressView) redraw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearLocked()
	v.drawLocked()
}

func (v *progressView) clearLocked() {
	if v.line {
		fmt.Fprint(v.w, "\r\033[K")
		v.line = false
	}
}

func (v *progressView) drawLocked() {
	if !v.live {
		return
	}
	p := v.src.Progress()
	s := p.Stats
	var b strings.Builder
	fmt.Fprintf(&b, "%s", v.src.ID())
	if p.SimulatedAnswers {
		b.WriteString(" · simulated answers")
	}
	if p.Phase != "" {
		fmt.Fprintf(&b, " · %s", p.Phase)
	}
	fmt.Fprintf(&b, " · %d running · %d done", s.Running, s.Live+s.Replayed)
	if s.Replayed > 0 {
		fmt.Fprintf(&b, " (%d replayed)", s.Replayed)
	}
	if s.Failed > 0 {
		fmt.Fprintf(&b, " · %d failed", s.Failed)
	}
	fmt.Fprintf(&b, " · tokens %s in / %s out · %s", humanCount(s.InputTokens), humanCount(s.OutputTokens),
		humanMs(time.Since(p.Started).Milliseconds()))
	fmt.Fprint(v.w, b.String())
	v.line = true
}

func (v *progressView) stop() {
	close(v.quit)
	v.wg.Wait()
	if v.sub != nil {
		v.sub.Close()
	}
	v.mu.Lock()
	v.clearLocked()
	v.mu.Unlock()
}
