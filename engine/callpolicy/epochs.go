package callpolicy

// epochSet is a set of executions, by number. A set is never changed once
// made (withRanges copies when it must), so flows share one freely.
type epochSet []uint64

func (s epochSet) has(e int) bool {
	w := e / 64
	return e >= 0 && w < len(s) && s[w]&(1<<(uint(e)%64)) != 0
}

// span is the executions lo to hi-1.
type span struct{ lo, hi int }

// withRanges returns s with every span added: s itself when they are in it
// already, which is the common case (a crash resume changes nothing).
func (s epochSet) withRanges(spans []span) epochSet {
	grow := false
	for _, r := range spans {
		for e := r.lo; e < r.hi; e++ {
			if !s.has(e) {
				grow = true
				break
			}
		}
		if grow {
			break
		}
	}
	if !grow {
		return s
	}
	n := len(s)
	for _, r := range spans {
		n = max(n, (r.hi+63)/64)
	}
	out := make(epochSet, n)
	copy(out, s)
	for _, r := range spans {
		for e := r.lo; e < r.hi; {
			w, b := e/64, uint(e)%64
			if b == 0 && e+64 <= r.hi {
				out[w] = ^uint64(0)
				e += 64
				continue
			}
			out[w] |= 1 << b
			e++
		}
	}
	return out
}
