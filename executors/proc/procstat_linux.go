package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// statFields reads the fields of /proc/<pid>/stat after the command name:
// f[0] is field 3 (state), f[1] field 4 (ppid), f[2] field 5 (pgrp), f[19]
// field 22 (starttime).
func statFields(pid int) ([][]byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	// The command name (field 2) may hold spaces and parentheses; the
	// fields after it start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("malformed /proc stat")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return nil, errors.New("short /proc stat")
	}
	return f, nil
}

// stat reads the process group and start time of pid from /proc.
func stat(pid int) (pgrp int, start uint64, err error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, 0, err
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, err
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	return pg, st, err
}

// userHZ is the unit of the times in /proc/PID/stat: sysconf(_SC_CLK_TCK),
// 100 on Linux.
const userHZ = 100

// bootTicks is the time since boot in the unit of a process's start time
// in /proc (the kernel takes it from the same clock), or 0 if unknown.
func bootTicks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano()) / (1e9 / userHZ)
}

// ended reports whether pid is a process that has ended and waits to be
// reaped (a zombie): under an init that does not reap, it can wait long.
func ended(pid int) bool {
	f, err := statFields(pid)
	return err == nil && (string(f[0]) == "Z" || string(f[0]) == "X")
}

// startTime is pid's start time in clock ticks since boot.
func startTime(pid int) (uint64, error) {
	_, st, err := stat(pid)
	return st, err
}

// groupHasMembers reports whether any process is in group pgid.
func groupHasMembers(pgid int) bool {
	return len(groupMembers(pgid)) > 0
}

// liveChild is a live process, with its process group and state (R, S,
// D, T...).
type liveChild struct {
	pid, pgrp int
	state     byte
}

// stopped reports whether the process is stopped (or traced).
func (c liveChild) stopped() bool { return c.state == 'T' || c.state == 't' }

// liveDescendantsOf lists the processes below pid, at any depth, that
// have not ended (zombies are left out, but not their children). It walks
// down from pid through /proc/PID/task/TID/children, which costs as much
// as the tree is large; where the kernel has no such file it reads the
// whole of /proc.
func liveDescendantsOf(pid int) []liveChild {
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children"); err != nil {
		return scanDescendantsOf(pid)
	}
	var found []liveChild
	seen := map[int]bool{pid: true}
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range childrenOf(queue[0]) {
			if seen[c] {
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if f, err := statFields(c); err == nil && f[0][0] != 'Z' && f[0][0] != 'X' {
				pg, _ := strconv.Atoi(string(f[2]))
				found = append(found, liveChild{pid: c, pgrp: pg, state: f[0][0]})
			}
		}
	}
	return found
}

// childrenOf lists the children of every thread of pid.
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, c)
			}
		}
	}
	return kids
}

// scanDescendantsOf is liveDescendantsOf from one reading of all of /proc.
func scanDescendantsOf(pid int) []liveChild {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	type node struct {
		ppid, pgrp int
		state      byte
	}
	procs := make(map[int]node, len(ents))
	for _, de := range ents {
		p, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		f, err := statFields(p)
		if err != nil {
			continue
		}
		ppid, err1 := strconv.Atoi(string(f[1]))
		pgrp, err2 := strconv.Atoi(string(f[2]))
		if err1 == nil && err2 == nil {
			procs[p] = node{ppid: ppid, pgrp: pgrp, state: f[0][0]}
		}
	}
	var found []liveChild
	for p, n := range procs {
		if n.state == 'Z' || n.state == 'X' {
			continue
		}
		for up, depth := n.ppid, 0; up > 1 && depth < len(procs); up, depth = procs[up].ppid, depth+1 {
			if up == pid {
				found = append(found, liveChild{pid: p, pgrp: n.pgrp, state: n.state})
				break
			}
		}
	}
	return found
}

// groupMembers lists the processes in process group pgrp.
func groupMembers(pgrp int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, de := range ents {
		p, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if pg, _, err := stat(p); err == nil && pg == pgrp {
			pids = append(pids, p)
		}
	}
	return pids
}

// killTree kills every process below pid, and the process group of each
// that leads one, again and again until none is left or the time is up.
// One reading of /proc finds the whole tree, in whatever session or group
// its processes moved to; a process started meanwhile, or whose parent
// died before it could be seen, is reparented to the nearest subreaper
// (pid itself) and found by the next round. Each round calls reap, if any,
// to collect the zombies that are pid's own.
func killTree(pid int, within time.Duration, reap func()) {
	deadline := time.Now().Add(within)
	for {
		if reap != nil {
			reap()
		}
		tree := liveDescendantsOf(pid)
		if len(tree) == 0 || time.Now().After(deadline) {
			return
		}
		for _, k := range tree {
			_ = syscall.Kill(k.pid, syscall.SIGKILL)
			if k.pgrp == k.pid {
				signalGroup(k.pid, syscall.SIGKILL)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ignoredAtStart reports whether sig is ignored now, which for the
// signals Go leaves alone at start-up (SIGHUP and SIGINT when inherited
// ignored, and the job-control ones) means it was ignored when we
// started.
func ignoredAtStart(sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	_, rest, ok := bytes.Cut(b, []byte("\nSigIgn:"))
	if !ok {
		return false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	mask, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 16, 64)
	return err == nil && mask&(1<<(uint(sig)-1)) != 0
}
