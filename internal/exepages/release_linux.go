package exepages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Release unmaps, from this process, the resident pages of its executable's
// read-only private mappings that hold nothing but clean copies of the
// file, and returns how many bytes were resident in them. A mapping that
// holds a page of its own (relocations applied before it was made
// read-only, a debugger's breakpoint) is left alone: dropping it would lose
// that page.
func Release() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("finding this program's executable: %w", err)
	}
	return release(exe)
}

// release is Release for the file at path, as /proc names it.
func release(path string) (int64, error) {
	ms, err := mappingsOf(path)
	if err != nil {
		return 0, err
	}
	var released int64
	for _, m := range ms {
		if !m.cleanReadOnlyCopy() || m.rss == 0 {
			continue
		}
		// A raw madvise: the range is not Go memory, so it is no slice.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("unmapping %s at %#x: %w", path, m.start, errno)
		}
		released += m.rss
	}
	return released, nil
}

// mappingsOf returns this process's mappings of the file at path.
func mappingsOf(path string) ([]mapping, error) {
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, fmt.Errorf("reading this process's mappings: %w", err)
	}
	all := mappings(smaps)
	own := all[:0]
	for _, m := range all {
		if m.path == path {
			own = append(own, m)
		}
	}
	return own, nil
}

// mapping is one entry of /proc/self/smaps.
type mapping struct {
	start, end uintptr
	perms      string // "r-xp": read, write, execute, private or shared
	path       string
	rss        int64 // bytes mapped in this process
	anonymous  int64 // bytes of pages of its own, not the file's
	swap       int64 // bytes of pages of its own, swapped out
}

// cleanReadOnlyCopy reports whether m is a private, read-only mapping of a
// file with no page of its own, in memory or swapped out.
func (m mapping) cleanReadOnlyCopy() bool {
	return len(m.perms) == 4 && m.perms[0] == 'r' && m.perms[1] == '-' && m.perms[3] == 'p' && m.anonymous == 0 && m.swap == 0
}

// mappings parses the text of /proc/PID/smaps. An entry it cannot read is
// left out, never guessed at.
func mappings(smaps []byte) []mapping {
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if key, value, ok := field(line); ok {
			if cur == nil {
				continue
			}
			switch key {
			case "Rss":
				cur.rss = value
			case "Anonymous":
				cur.anonymous = value
			case "Swap":
				cur.swap = value
			}
			continue
		}
		m, ok := header(line)
		if !ok {
			cur = nil
			continue
		}
		out = append(out, m)
		cur = &out[len(out)-1]
	}
	return out
}

// field parses a "Key:   123 kB" line into its key and bytes.
func field(line string) (string, int64, bool) {
	key, rest, ok := strings.Cut(line, ":")
	if !ok || strings.ContainsAny(key, " -") {
		return "", 0, false
	}
	num, unit, _ := strings.Cut(strings.TrimSpace(rest), " ")
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || unit != "kB" {
		return key, 0, true
	}
	return key, n << 10, true
}

// header parses "start-end perms offset dev inode   path"; the path, which
// may contain spaces, is the rest of the line.
func header(line string) (mapping, bool) {
	var f [5]string
	rest := line
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		var ok bool
		if f[i], rest, ok = strings.Cut(rest, " "); !ok && i < len(f)-1 {
			return mapping{}, false
		}
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return mapping{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return mapping{}, false
	}
	return mapping{start: uintptr(start), end: uintptr(end), perms: f[1], path: strings.TrimLeft(rest, " ")}, true
}
