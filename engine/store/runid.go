package store

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Run ids reach the store from users and from HTTP, and become file names:
// no separators, no leading dot, so never "..", and a bounded length.
var runIDPattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,191}$`)

// ValidRunID reports whether id can name a run.
func ValidRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("%w %q: use 1 to 192 letters, digits, '.', '_' or '-', starting with a letter or digit",
			ErrBadRunID, id)
	}
	return nil
}

// NewRunID returns a fresh run id: the slug of name, the time in base-36
// milliseconds (so ids sort roughly by start), and 6 random base-36 digits
// so that runs started in the same millisecond do not collide.
func NewRunID(name string) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var suffix [6]byte
	var buf [16]byte
	for n := 0; n < len(suffix); {
		rand.Read(buf[:]) // never fails: crypto/rand crashes the program instead
		for _, c := range buf {
			// 252 = 7*36: rejecting above it keeps the digits uniform.
			if c < 252 && n < len(suffix) {
				suffix[n] = digits[c%36]
				n++
			}
		}
	}
	millis := strconv.FormatInt(time.Now().UnixMilli(), 36)
	return slug(name, "run") + "-" + millis + "-" + string(suffix[:])
}
