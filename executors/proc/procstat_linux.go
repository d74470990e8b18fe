package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
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

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []int
	for _, de := range ents {
		p, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if ppid, err := parentOf(p); err == nil && ppid == pid {
			kids = append(kids, p)
		}
	}
	return kids
}

// parentOf reads the parent pid of pid from /proc.
func parentOf(pid int) (int, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(f[1]))
}
