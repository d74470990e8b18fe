package callpolicy

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// Retries. A transient failure (a 5xx, a cut stream, a timeout) is retried
// DefaultAgentRetries times unless the run or the call says otherwise. A
// fault of ours (Infrastructure: descriptors or processes ran out, a pipe
// or a spawn failed) is never the agent's: it is
// retried on its own count, InfrastructureRetries times, without using up
// the call's retries, and when it persists the run pauses with the reason,
// so that `resume` runs the call again once it is fixed.
const (
	DefaultAgentRetries   = 3
	DefaultRetryBackoff   = time.Second
	InfrastructureRetries = 6
	// MaxRetryWait caps the exponential backoff.
	MaxRetryWait = 30 * time.Second
	// MaxHintWait caps how long a provider's Retry-After or reset time
	// holds a call; a longer wait is a quota to wait for with the run
	// paused, not inside a call.
	MaxHintWait = 5 * time.Minute
)

// Backoff is how long to wait before retry n (from 1) of the call at path
// of run runID: exponential from base (base, 2·base, 4·base, … up to
// MaxRetryWait), drawn in the upper half of that by a hash of the run, the
// call and n. The jitter keeps calls that failed together from retrying
// together; being a hash rather than a random number, it is the same on
// every backend and every replay of a Temporal workflow. A hint from the
// provider (Retry-After, a reset time) makes the wait at least that long,
// up to MaxHintWait.
func Backoff(base time.Duration, n int, hint time.Duration, runID, path string) time.Duration {
	d := min(MaxRetryWait, base<<min(n-1, 30))
	if d < 0 || base<<min(n-1, 30) < base {
		d = MaxRetryWait // overflow
	}
	h := fnv.New64a()
	h.Write([]byte(runID))
	h.Write([]byte{0})
	h.Write([]byte(path))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
	frac := float64(h.Sum64()>>11) / float64(1<<53)
	wait := d/2 + time.Duration(frac*float64(d/2))
	return max(wait, min(hint, MaxHintWait))
}
