package metrics

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the times in /proc/PID/stat: fixed at 100 on
// every Linux architecture, whatever the kernel's own tick.
const userHZ = 100

// writeSystem writes the process's figures as Linux tells them in /proc:
// CPU time, memory, threads, descriptors and start time. A figure that
// cannot be read is left out rather than written as zero.
func writeSystem(w *bytes.Buffer) {
	if f, ok := procStat(); ok {
		writeHeader(w, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter")
		writeSample(w, "process_cpu_seconds_total", nil, nil, "", "", float64(f.utime+f.stime)/userHZ)
		writeGauge(w, "process_resident_memory_bytes", "Resident memory size in bytes.", float64(f.rss*uint64(os.Getpagesize())))
		writeGauge(w, "process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(f.vsize))
		writeGauge(w, "go_threads", "Number of OS threads of the process.", float64(f.threads))
		if boot, ok := bootTime(); ok {
			writeGauge(w, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
				float64(boot)+float64(f.start)/userHZ)
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		writeGauge(w, "process_open_fds", "Number of open file descriptors.", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		writeGauge(w, "process_max_fds", "Maximum number of open file descriptors.", float64(lim.Cur))
	}
}

type statFields struct {
	utime, stime, threads, start, vsize, rss uint64
}

// procStat reads /proc/self/stat. Its second field, the command name in
// parentheses, may hold spaces and parentheses itself: the fields after it
// are counted from its last ')'.
func procStat() (statFields, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return statFields{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return statFields{}, false
	}
	// After ')': field 3 (state) is rest[0], so field n is rest[n-3].
	rest := strings.Fields(string(b[i+1:]))
	field := func(n int) uint64 {
		if n-3 >= len(rest) {
			return 0
		}
		v, _ := strconv.ParseUint(rest[n-3], 10, 64)
		return v
	}
	if len(rest) < 22 {
		return statFields{}, false
	}
	return statFields{utime: field(14), stime: field(15), threads: field(20), start: field(22),
		vsize: field(23), rss: field(24)}, true
}

// bootTime is the btime line of /proc/stat: when the system booted, in
// seconds since the epoch.
func bootTime() (uint64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
