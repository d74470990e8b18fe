package simulate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxSize bounds the size marker: 16 MB answers are plenty to test with.
const maxSize = 16 << 20

// markerPrefix opens every marker a prompt can carry; see the package
// documentation for the list.
const markerPrefix = "[simulate:"

// markers records which markers a prompt carries.
type markers struct {
	fail        bool          // every attempt fails terminally
	transient   bool          // attempt 1 fails transiently
	rateLimit   bool          // every attempt is rate-limited
	reset       time.Duration // the rate limit's reset, when not a minute
	invalid     bool          // every attempt answers invalid JSON
	invalidOnce bool          // attempt 1 answers invalid JSON

	hasSleep bool
	sleep    time.Duration // the latency of this call, when hasSleep

	size int // the text answer's length in bytes, when not 0
}

// invalidOn reports whether the given attempt must break the schema.
func (m markers) invalidOn(attempt int) bool {
	return m.invalid || m.invalidOnce && attempt == 1
}

// scanMarkers finds the markers in a prompt. Most prompts carry none, and
// cost one substring search.
func scanMarkers(prompt string) (markers, error) {
	var m markers
	for rest := prompt; ; {
		i := strings.Index(rest, markerPrefix)
		if i < 0 {
			return m, nil
		}
		rest = rest[i+len(markerPrefix):]
		name, after, closed := strings.Cut(rest, "]")
		if !closed {
			return m, fmt.Errorf("unterminated marker %s%s: markers look like [simulate:fail]", markerPrefix, truncate(rest, 20))
		}
		rest = after
		if err := m.set(name); err != nil {
			return m, err
		}
	}
}

// set records the marker [simulate:name].
func (m *markers) set(name string) error {
	switch name {
	case "fail":
		m.fail = true
	case "transient":
		m.transient = true
	case "ratelimit":
		m.rateLimit = true
	case "invalid":
		m.invalid = true
	case "invalid-once":
		m.invalidOnce = true
	default:
		if value, ok := strings.CutPrefix(name, "ratelimit="); ok {
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				return fmt.Errorf("marker %s%s]: want a duration like ratelimit=5s", markerPrefix, name)
			}
			m.rateLimit, m.reset = true, d
			return nil
		}
		if value, ok := strings.CutPrefix(name, "size="); ok {
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 || n > maxSize {
				return fmt.Errorf("marker %s%s]: want a size in bytes from 1 to %d, like size=102400", markerPrefix, name, maxSize)
			}
			m.size = n
			return nil
		}
		value, ok := strings.CutPrefix(name, "sleep=")
		if !ok {
			return fmt.Errorf("unknown marker %s%s]; known markers: fail, transient, ratelimit, ratelimit=DURATION, invalid, invalid-once, sleep=DURATION, size=BYTES", markerPrefix, name)
		}
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return fmt.Errorf("marker %s%s]: want a duration like sleep=250ms", markerPrefix, name)
		}
		m.hasSleep, m.sleep = true, d
	}
	return nil
}
