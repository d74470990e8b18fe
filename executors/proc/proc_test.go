package proc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunLinesStdinAndExit(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		stdin     []byte
		wantLines []string
		wantCode  int
	}{
		{"lines", `printf 'a\nbb\n\nccc'`, nil, []string{"a", "bb", "ccc"}, 0},
		{"stdin", `cat; echo; echo done`, []byte("from stdin"), []string{"from stdin", "done"}, 0},
		{"no stdin is /dev/null", `cat; echo eof`, nil, []string{"eof"}, 0},
		{"exit code", `echo x; exit 3`, nil, []string{"x"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := openRegistry(t)
			var got []string
			ex, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", tc.script}, Stdin: tc.stdin, Registry: reg},
				func(l []byte) { got = append(got, string(l)) })
			if err != nil {
				t.Fatal(err)
			}
			if ex.Code != tc.wantCode || ex.Stopped {
				t.Errorf("exit = %+v, want code %d", ex, tc.wantCode)
			}
			if strings.Join(got, "|") != strings.Join(tc.wantLines, "|") {
				t.Errorf("lines = %q, want %q", got, tc.wantLines)
			}
		})
	}
}

func TestRunMissingBinary(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: filepath.Join(t.TempDir(), "nope"), Registry: openRegistry(t)}, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Run of a missing binary = %v, want an error matching fs.ErrNotExist", err)
	}
}

// openRegistry opens a registry in a temporary directory.
func openRegistry(t *testing.T) *Registry {
	t.Helper()
	reg, err := OpenRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

// TestStopSignalsTheGroup: a child that ignores SIGTERM is killed after
// the grace period, and so is the grandchild it spawned.
func TestStopSignalsTheGroup(t *testing.T) {
	reg := openRegistry(t)
	var err error
	ctx, cancel := context.WithCancel(context.Background())
	grandchild := make(chan int, 1)
	var ex Exit
	done := make(chan struct{})
	go func() {
		defer close(done)
		ex, err = Run(ctx, Spec{Path: "/bin/sh", Args: []string{"-c", `trap '' TERM; sleep 60 & echo $!; wait`},
			Grace: 100 * time.Millisecond, Registry: reg, Name: "test"},
			func(l []byte) {
				pid, _ := strconv.Atoi(string(l))
				grandchild <- pid
			})
	}()
	pid := <-grandchild
	// The entry is written right after the start, which can come after
	// the child's first output.
	deadline := time.Now().Add(5 * time.Second)
	for len(reg.Groups()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("registry holds %v while the child runs, want one group", reg.Groups())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Stopped || ex.Signal != syscall.SIGKILL {
		t.Errorf("exit = %+v, want stopped by SIGKILL", ex)
	}
	waitGone(t, pid)
	if groups := reg.Groups(); len(groups) != 0 {
		t.Errorf("registry holds %v after the child exited, want no group", groups)
	}
}

// A process writes as many registry files as it ran children at once: the
// file of a child that exited is written over by the next one. A vacant
// file of a dead process is removed by the next Reap, and never names a
// group to kill.
func TestRegistryReusesFiles(t *testing.T) {
	reg, err := OpenRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := Run(context.Background(), Spec{Path: "/bin/true", Registry: reg}, nil); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(reg.Dir())
	if len(entries) != 1 {
		t.Fatalf("5 children one after another left %d registry files, want 1", len(entries))
	}
	if groups := reg.Groups(); len(groups) != 0 {
		t.Errorf("a vacant file names groups %v", groups)
	}
	if found, err := reg.Reap(context.Background()); err != nil || len(found) != 0 {
		t.Errorf("reap by the owner = %v, %v; want nothing found", found, err)
	}
	if entries, _ := os.ReadDir(reg.Dir()); len(entries) != 1 {
		t.Errorf("the owner's reap removed its own vacant file")
	}

	b, _ := json.Marshal(entry{Owner: deadOwner(t)})
	if err := os.WriteFile(filepath.Join(reg.Dir(), "1-1.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := reg.Reap(context.Background())
	if err != nil || len(found) != 0 {
		t.Errorf("reap of a dead owner's vacant file = %v, %v; want nothing found", found, err)
	}
	if _, err := os.Stat(filepath.Join(reg.Dir(), "1-1.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dead owner's vacant file is still there (%v)", err)
	}
}

// waitGone waits until pid is no longer a running process. A killed
// grandchild is reparented to init, which reaps it at once; until then it
// is a zombie, which counts as gone.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && strings.HasPrefix(string(b[i+1:]), " Z")
}

// startOrphan starts a sleeping process group as an agent CLI would be,
// and writes the registry entry a dead owner would have left.
func startOrphan(t *testing.T, reg *Registry, owner identity, childStart func(uint64) uint64) (exited <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("/bin/sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	start, err := startTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	e := entry{Child: identity{Pid: cmd.Process.Pid, Start: childStart(start)}, Pgid: cmd.Process.Pid, Owner: owner, Name: "orphan"}
	b, _ := json.Marshal(e)
	if err := os.WriteFile(filepath.Join(reg.Dir(), strconv.Itoa(cmd.Process.Pid)+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return done
}

// deadOwner is the identity of a process that has exited.
func deadOwner(t *testing.T) identity {
	t.Helper()
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return identity{Pid: cmd.Process.Pid, Start: 1}
}

func TestReap(t *testing.T) {
	same := func(s uint64) uint64 { return s }
	tests := []struct {
		name       string
		owner      func(*Registry) identity
		childStart func(uint64) uint64
		wantKilled bool
		wantKept   bool
	}{
		{"dead owner: killed", func(*Registry) identity { return deadOwner(t) }, same, true, false},
		{"live owner: left alone", func(r *Registry) identity { return r.self }, same, false, true},
		{"pid reused: entry dropped, process spared", func(*Registry) identity { return deadOwner(t) },
			func(s uint64) uint64 { return s + 12345 }, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := OpenRegistry(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			exited := startOrphan(t, reg, tc.owner(reg), tc.childStart)
			found, err := reg.Reap(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			killed := len(found) == 1 && found[0].Killed
			if killed != tc.wantKilled {
				t.Errorf("reap found %+v, want killed=%v", found, tc.wantKilled)
			}
			if tc.wantKilled {
				select {
				case <-exited:
				case <-time.After(5 * time.Second):
					t.Error("the orphan is still running")
				}
			} else {
				select {
				case <-exited:
					t.Error("a process that was not ours to kill died")
				default:
				}
			}
			entries, _ := os.ReadDir(reg.Dir())
			if kept := len(entries) == 1; kept != tc.wantKept {
				t.Errorf("entries left = %d, want kept=%v", len(entries), tc.wantKept)
			}
		})
	}
}

// An entry written by another user, or planted as a symlink, is never acted
// on: the process group it names is spared and the entry stays.
func TestReapIgnoresForeignEntries(t *testing.T) {
	plant := map[string]func(t *testing.T, path string){
		"symlink": func(t *testing.T, path string) {
			real := path + ".real"
			if err := os.Rename(path, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, path); err != nil {
				t.Fatal(err)
			}
		},
		"another user's": func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range plant {
		t.Run(name, func(t *testing.T) {
			reg, err := OpenRegistry(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			exited := startOrphan(t, reg, deadOwner(t), func(s uint64) uint64 { return s })
			entries, _ := os.ReadDir(reg.Dir())
			plant(t, filepath.Join(reg.Dir(), entries[0].Name()))
			found, err := reg.Reap(context.Background())
			if err != nil || len(found) != 0 {
				t.Errorf("Reap = %+v, %v; want nothing acted on", found, err)
			}
			select {
			case <-exited:
				t.Error("the group a foreign entry names was killed")
			default:
			}
			if _, err := os.Lstat(filepath.Join(reg.Dir(), entries[0].Name())); err != nil {
				t.Errorf("the foreign entry was removed: %v", err)
			}
		})
	}
}

// The registry's directory must be ours, like every state directory.
func TestRegistryRefusesASymlinkedDir(t *testing.T) {
	link := filepath.Join(t.TempDir(), "children")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRegistry(link, nil); err == nil {
		t.Error("OpenRegistry accepted a symlinked directory")
	}
}

// A child's entry brackets its start time as /proc gives it, without
// reading /proc: Reap can tell the child from a later process that reuses
// its pid.
func TestRegistryBracketsTheChildsStart(t *testing.T) {
	reg := openRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	pids := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = Run(ctx, Spec{Path: "/bin/sh", Args: []string{"-c", "echo $$; exec sleep 60"}, Registry: reg, Name: strings.Repeat("long name ", 200)},
			func(l []byte) { pid, _ := strconv.Atoi(string(l)); pids <- pid })
	}()
	defer func() { cancel(); <-done }()
	pid := <-pids
	start, err := startTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	var e entry
	waitFor(t, "the child's entry", func() bool {
		entries, _ := readEntries(reg.path())
		for _, x := range entries {
			if x.Child.Pid == pid {
				e = x
				return true
			}
		}
		return false
	})
	if !e.Child.startedAt(start) || e.Child.StartMax-e.Child.Start > 100 {
		t.Errorf("the entry brackets the start with [%d, %d], /proc says %d", e.Child.Start, e.Child.StartMax, start)
	}
	if e.Child.startedAt(start+e.Child.StartMax-e.Child.Start+1) || e.Child.startedAt(e.Child.Start-1) {
		t.Error("the bracket takes in start times outside it")
	}
	if !strings.HasPrefix(e.Name, "long name") || !strings.HasSuffix(e.Name, "…") {
		t.Errorf("a long name is recorded as %q, want it cut to fit its slot", e.Name)
	}
}

// A dead owner's file is reaped entry by entry and removed; a live
// owner's file is left alone, even with no child in it.
func TestReapOfARegistryFile(t *testing.T) {
	reg := openRegistry(t)
	if _, err := Run(context.Background(), Spec{Path: "/bin/true", Registry: reg}, nil); err != nil {
		t.Fatal(err)
	}
	ours := reg.path()

	cmd := exec.Command("/bin/sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	before := bootTicks()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	after := bootTicks()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	owner := deadOwner(t)
	live, _ := json.Marshal(entry{Child: identity{Pid: cmd.Process.Pid, Start: before, StartMax: after}, Pgid: cmd.Process.Pid, Owner: owner, Name: "orphan"})
	dead := filepath.Join(reg.Dir(), fmt.Sprintf("%d-%d%s", owner.Pid, owner.Start, childrenSuffix))
	content := append(append(bytes.Repeat([]byte(" "), slotSize-1), '\n'), live...)
	if err := os.WriteFile(dead, append(content, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}

	found, err := reg.Reap(context.Background())
	if err != nil || len(found) != 1 || !found[0].Killed || found[0].Pid != cmd.Process.Pid {
		t.Fatalf("Reap = %+v, %v; want the dead owner's child killed", found, err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Error("the dead owner's child is still running")
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dead owner's file is still there (%v)", err)
	}
	if _, err := os.Stat(ours); err != nil {
		t.Errorf("Reap removed the file of its live owner: %v", err)
	}
}

// waitFor waits until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A child gets our environment, the variables added for it over ours
// (later ones winning, each once), and PWD when it runs in a directory.
func TestChildEnvironment(t *testing.T) {
	t.Setenv("PROC_TEST_A", "ours")
	t.Setenv("PROC_TEST_B", "ours")
	dir := t.TempDir()
	tests := []struct {
		name string
		spec Spec
		want []string
	}{
		{"ours", Spec{}, []string{"PROC_TEST_A=ours", "PROC_TEST_B=ours"}},
		{"added over ours", Spec{ExtraEnv: []string{"PROC_TEST_A=x", "PROC_TEST_C=1", "PROC_TEST_A=y"}},
			[]string{"PROC_TEST_A=y", "PROC_TEST_B=ours", "PROC_TEST_C=1"}},
		{"in a directory", Spec{Dir: dir}, []string{"PROC_TEST_A=ours", "PWD=" + dir}},
		{"a whole environment", Spec{Env: []string{"PROC_TEST_A=1", "PROC_TEST_A=2"}, ExtraEnv: []string{"PROC_TEST_B=3"}},
			[]string{"PROC_TEST_A=2", "PROC_TEST_B=3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Path = "/usr/bin/env"
			seen := map[string]int{}
			if _, err := Run(context.Background(), spec, func(l []byte) {
				if k, _, _ := strings.Cut(string(l), "="); strings.HasPrefix(k, "PROC_TEST_") || k == "PWD" {
					seen[string(l)]++
				}
			}); err != nil {
				t.Fatal(err)
			}
			for _, kv := range tc.want {
				if seen[kv] != 1 {
					t.Errorf("%s is set %d times in %v", kv, seen[kv], seen)
				}
			}
			if tc.spec.Env != nil && len(seen) != len(tc.want) {
				t.Errorf("the child's environment holds %v, want only %v", seen, tc.want)
			}
		})
	}
}

// How a child ended reads as a sentence after its name.
func TestExitString(t *testing.T) {
	tests := []struct {
		ex   Exit
		want string
	}{
		{Exit{Code: 3}, "exited with status 3"},
		{Exit{Code: -1, Signal: syscall.SIGKILL}, "was killed by SIGKILL"},
		{Exit{Code: -1, Signal: syscall.SIGTERM}, "was killed by SIGTERM"},
	}
	for _, tc := range tests {
		if got := tc.ex.String(); got != tc.want {
			t.Errorf("%+v reads %q, want %q", tc.ex, got, tc.want)
		}
	}
}
