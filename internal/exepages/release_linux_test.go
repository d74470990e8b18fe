package exepages

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary's start-up touched pages all over it; Release unmaps
// them, and the program goes on running code it had dropped.
func TestReleaseUnmapsTheExecutablesPages(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	// No collection in between: it would map again the stack maps of
	// what is on the stacks, and blur what Release did.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := readOnlyResident(t, exe)
	released, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	// Reading smaps again maps some of it back: the code that reads it.
	after := readOnlyResident(t, exe)
	t.Logf("read-only pages of the executable resident: %d KB before, %d KB after; released %d KB", before>>10, after>>10, released>>10)
	if released < before/2 {
		t.Errorf("Release released %d of the %d bytes resident in read-only mappings; want most of them", released, before)
	}
	if after >= before {
		t.Errorf("%d bytes of read-only mappings resident after Release, %d before", after, before)
	}
	// Code and read-only data that were dropped come back on use.
	if got := regexp.MustCompile(`(\w+)@(\w+)`).ReplaceAllString("ada@example", "$2:$1"); got != "example:ada" {
		t.Errorf("regexp after Release = %q", got)
	}
}

// readOnlyResident is the bytes of path's read-only mappings resident in
// this process.
func readOnlyResident(t *testing.T, path string) int64 {
	t.Helper()
	ms, err := mappingsOf(path)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, m := range ms {
		if m.perms[1] == '-' {
			n += m.rss
		}
	}
	return n
}

// A read-only mapping with a page of its own, such as relocations applied
// before the mapping was made read-only, must keep that page; a clean one
// is unmapped and reads the file again.
func TestReleaseKeepsPagesOfTheirOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	page := os.Getpagesize()
	content := bytes.Repeat([]byte("f"), 4*page)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clean, err := unix.Mmap(int(f.Fd()), 0, len(content), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(clean)
	own, err := unix.Mmap(int(f.Fd()), 0, len(content), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(own)
	if clean[0] != 'f' || clean[2*page] != 'f' {
		t.Fatal("the mapping does not read the file")
	}
	own[page] = 'w'
	if err := unix.Mprotect(own, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}

	released, err := release(path)
	if err != nil {
		t.Fatal(err)
	}
	if released == 0 {
		t.Error("release unmapped nothing of the clean mapping")
	}
	if own[page] != 'w' {
		t.Errorf("the written page reads %q after release: it was dropped and the file read again", own[page])
	}
	ms, err := mappingsOf(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.start == uintptr(unsafe.Pointer(&clean[0])) && m.rss != 0 {
			t.Errorf("the clean mapping still has %d bytes resident", m.rss)
		}
	}
	if clean[2*page] != 'f' {
		t.Errorf("the clean mapping reads %q after release, not the file's byte", clean[2*page])
	}
}

func TestMappingsParsesSmaps(t *testing.T) {
	smaps := []byte(`00400000-00e0e000 r-xp 00000000 fd:01 1234                               /opt/my tools/dynworkflow
Size:              10296 kB
Rss:                8696 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
01900000-01901000 r--p 014f9000 fd:01 1234                               /opt/my tools/dynworkflow
Rss:                   4 kB
Anonymous:             4 kB
01901000-01b05000 rw-p 014fa000 fd:01 1234                               /opt/my tools/dynworkflow (deleted)
Rss:                 560 kB
Anonymous:           100 kB
7f2f8563c000-7f2f85900000 rw-p 00000000 00:00 0 
Rss:                1376 kB
Anonymous:          1376 kB
00e0e000-018f9000 r--p 00a0e000 fd:01 1234                               /opt/my tools/dynworkflow
Rss:                7788 kB
Anonymous:             0 kB
Swap:                  8 kB
not a mapping
Rss:                 999 kB
`)
	got := mappings(smaps)
	want := []struct {
		path  string
		rss   int64
		clean bool
	}{
		{"/opt/my tools/dynworkflow", 8696 << 10, true},
		{"/opt/my tools/dynworkflow", 4 << 10, false},
		{"/opt/my tools/dynworkflow (deleted)", 560 << 10, false},
		{"", 1376 << 10, false},
		{"/opt/my tools/dynworkflow", 7788 << 10, false}, // a page of its own is swapped out
	}
	if len(got) != len(want) {
		t.Fatalf("mappings = %+v, want %d of them", got, len(want))
	}
	for i, w := range want {
		if got[i].path != w.path || got[i].rss != w.rss || got[i].cleanReadOnlyCopy() != w.clean {
			t.Errorf("mapping %d = %+v (clean %v), want path %q rss %d clean %v", i, got[i], got[i].cleanReadOnlyCopy(), w.path, w.rss, w.clean)
		}
	}
	if got[0].start != 0x400000 || got[0].end != 0xe0e000 {
		t.Errorf("mapping 0 spans %#x-%#x", got[0].start, got[0].end)
	}
}
