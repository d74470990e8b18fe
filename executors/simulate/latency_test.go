package simulate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseLatency(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max time.Duration
		err      string // a substring of the error, or "" for success
	}{
		{in: "5ms..50ms", min: 5 * time.Millisecond, max: 50 * time.Millisecond},
		{in: " 1s .. 2s ", min: time.Second, max: 2 * time.Second},
		{in: "10ms", min: 10 * time.Millisecond, max: 10 * time.Millisecond},
		{in: "10ms..10ms", min: 10 * time.Millisecond, max: 10 * time.Millisecond},
		{in: "0", min: 0, max: 0},
		{in: "0..1ms", min: 0, max: time.Millisecond},
		{in: "5ms-50ms", err: "MIN..MAX, like 5ms..50ms"},
		{in: "50ms..5ms", err: "minimum 50ms is above the maximum 5ms"},
		{in: "5ms...50ms", err: "two dots"},
		{in: "10", err: "want a duration like 10ms"},
		{in: "", err: "want a duration like 10ms"},
		{in: "fast", err: "want a duration like 10ms"},
		{in: "5ms..", err: "want a duration like 10ms"},
		{in: "-5ms", err: "cannot be negative"},
	} {
		min, max, err := ParseLatency(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseLatency(%q) error = %v, want one saying %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("ParseLatency(%q) failed: %v", tc.in, err)
		case tc.err == "" && (min != tc.min || max != tc.max):
			t.Errorf("ParseLatency(%q) = %v, %v; want %v, %v", tc.in, min, max, tc.min, tc.max)
		}
	}
}

func TestLatencyIsDrawnWithinBounds(t *testing.T) {
	const lo, hi = 5 * time.Millisecond, 50 * time.Millisecond
	e := New(Config{MinLatency: lo, MaxLatency: hi, Seed: 7})
	seen := map[time.Duration]bool{}
	for range 1000 {
		d, _ := e.draw(markers{})
		if d < lo || d > hi {
			t.Fatalf("latency %v outside [%v, %v]", d, lo, hi)
		}
		seen[d] = true
	}
	if len(seen) < 100 {
		t.Errorf("only %d distinct latencies in 1000 draws; want them spread", len(seen))
	}

	if d, _ := New(Config{MinLatency: lo, MaxLatency: lo}).draw(markers{}); d != lo {
		t.Errorf("fixed latency drew %v, want %v", d, lo)
	}
	if d, _ := e.draw(markers{hasSleep: true, sleep: time.Second}); d != time.Second {
		t.Errorf("sleep marker drew %v, want 1s", d)
	}
	if d, _ := e.draw(markers{hasSleep: true}); d != 0 {
		t.Errorf("sleep=0 marker drew %v, want 0", d)
	}
}

func TestNewClampsConfig(t *testing.T) {
	e := New(Config{MinLatency: -time.Second, MaxLatency: -2 * time.Second, FailureRate: 3})
	if e.cfg.MinLatency != 0 || e.cfg.MaxLatency != 0 || e.cfg.FailureRate != 1 {
		t.Errorf("New clamped to %+v, want zero latencies and rate 1", e.cfg)
	}
	if e.cfg.Seed == 0 {
		t.Error("a zero seed was not replaced by a random one")
	}
}

// TestRunReturnsWhenCancelled checks that a call waiting out a long latency
// returns the context's error once the context is done. It asserts no
// durations: were cancellation ignored, the test would time out.
func TestRunReturnsWhenCancelled(t *testing.T) {
	e := New(Config{MinLatency: time.Hour, MaxLatency: time.Hour})
	for _, tc := range []struct {
		name   string
		prompt string
	}{
		{"configured latency", "hello"},
		{"sleep marker", "hello [simulate:sleep=1h]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := e.Run(ctx, request(tc.prompt), nil)
				done <- err
			}()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run after cancel = %v, want context.Canceled", err)
			}
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := e.Run(ctx, request("hello"), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run past its deadline = %v, want context.DeadlineExceeded", err)
	}
}

func TestRunWithDoneContextFailsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(Config{}).Run(ctx, request("hello"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a done context = %v, want context.Canceled", err)
	}
}
