package simulate

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ParseLatency parses the value of the --simulate-latency flag: a range
// MIN..MAX such as "5ms..50ms", a fixed latency such as "10ms", or "0".
func ParseLatency(s string) (min, max time.Duration, err error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "..")
	if !isRange {
		d, err := parseLatencyBound(s, lo)
		return d, d, err
	}
	// "5ms...50ms" would otherwise read as 5ms..0.5ms.
	if strings.HasPrefix(hi, ".") {
		return 0, 0, fmt.Errorf("latency %q: write a range as MIN..MAX with two dots, like 5ms..50ms", s)
	}
	if min, err = parseLatencyBound(s, lo); err != nil {
		return 0, 0, err
	}
	if max, err = parseLatencyBound(s, hi); err != nil {
		return 0, 0, err
	}
	if min > max {
		return 0, 0, fmt.Errorf("latency %q: the minimum %v is above the maximum %v", s, min, max)
	}
	return min, max, nil
}

// parseLatencyBound parses one duration of a latency flag, explaining the
// flag's forms when it fails. s is the whole flag value, for messages.
func parseLatencyBound(s, bound string) (time.Duration, error) {
	bound = strings.TrimSpace(bound)
	d, err := time.ParseDuration(bound)
	switch {
	case err != nil && strings.Contains(strings.TrimPrefix(bound, "-"), "-"):
		// The likeliest way to spell a range wrongly is with a dash.
		return 0, fmt.Errorf("latency %q: write a range as MIN..MAX, like 5ms..50ms", s)
	case err != nil:
		return 0, fmt.Errorf("latency %q: want a duration like 10ms, a range MIN..MAX like 5ms..50ms, or 0", s)
	case d < 0:
		return 0, fmt.Errorf("latency %q: a latency cannot be negative", s)
	}
	return d, nil
}

// sleep waits for d, or returns ctx.Err() as soon as ctx is done. A zero
// wait starts no timer, so instant calls stay cheap.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
