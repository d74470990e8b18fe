package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
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

// startTime is pid's start time in clock ticks since boot.
func startTime(pid int) (uint64, error) {
	_, st, err := stat(pid)
	return st, err
}

// groupHasMembers reports whether any process is in group pgid.
func groupHasMembers(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, de := range ents {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if pg, _, err := stat(pid); err == nil && pg == pgid {
			return true
		}
	}
	return false
}

// child is a live child process, with its process group.
type child struct{ pid, pgrp int }

// liveChildrenOf lists the processes whose parent is pid and that have not
// ended (zombies are left out).
func liveChildrenOf(pid int) []child {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []child
	for _, de := range ents {
		p, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		f, err := statFields(p)
		if err != nil || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		ppid, err1 := strconv.Atoi(string(f[1]))
		pgrp, err2 := strconv.Atoi(string(f[2]))
		if err1 == nil && err2 == nil && ppid == pid {
			kids = append(kids, child{pid: p, pgrp: pgrp})
		}
	}
	return kids
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
