package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// stat reads the process group and start time of pid from /proc.
func stat(pid int) (pgrp int, start uint64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces and parentheses; the
	// fields after it start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc stat")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): pgrp is field 5, starttime field 22.
	if len(f) < 20 {
		return 0, 0, errors.New("short /proc stat")
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
