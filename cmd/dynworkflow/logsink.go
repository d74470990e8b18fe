package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// logSink is where the runtime's operational log goes: stderr, or above
// the live region while a progress view draws one, so that a warning
// never lands in the middle of the region.
type logSink struct {
	out  io.Writer
	mu   sync.Mutex
	view *progressView
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	v := s.view
	s.mu.Unlock()
	if v == nil {
		return s.out.Write(p)
	}
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		v.logLine(l)
	}
	return len(p), nil
}

// show routes the log through v until hide.
func (s *logSink) show(v *progressView) {
	s.mu.Lock()
	s.view = v
	s.mu.Unlock()
}

func (s *logSink) hide(v *progressView) {
	s.mu.Lock()
	if s.view == v {
		s.view = nil
	}
	s.mu.Unlock()
}

// sinkHandler leaves out of the log what the CLI says otherwise: a limit
// a run ran into comes as an event to the progress view (and to serve's
// state log), once, where the engine logs every call that hits it.
type sinkHandler struct {
	slog.Handler
	sink *logSink
}

func (h sinkHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "limit reached" {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h sinkHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return sinkHandler{h.Handler.WithAttrs(attrs), h.sink}
}

func (h sinkHandler) WithGroup(name string) slog.Handler {
	return sinkHandler{h.Handler.WithGroup(name), h.sink}
}
