package store

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"time"
)

// ValidRunID reports whether id can name a run. Run ids reach the store
// from users and from HTTP, and become file names: 1 to 192 letters, digits,
// '.', '_' or '-', starting with a letter or digit, so never a separator
// and never "..". (A loop, not a regexp: compiling that regexp cost every
// command 4 ms at start-up.)
func ValidRunID(id string) error {
	ok := len(id) >= 1 && len(id) <= 192 && isAlnum(id[0])
	for i := 1; ok && i < len(id); i++ {
		c := id[i]
		ok = isAlnum(c) || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%w %q: use 1 to 192 letters, digits, '.', '_' or '-', starting with a letter or digit",
			ErrBadRunID, id)
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
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
	return Slug(name, "run") + "-" + millis + "-" + string(suffix[:])
}
