package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLease(t *testing.T) {
	s := openT(t, t.TempDir())
	p := s.RunPaths("r")
	l, err := s.AcquireLease("r", "owner-a")
	if err != nil {
		t.Fatal(err)
	}
	checkMode(t, p.Lock, 0o600)
	if err := l.Check(); err != nil {
		t.Errorf("Check of a fresh lease = %v", err)
	}

	// A second owner, even in this process, is refused and told who owns it.
	_, err = s.AcquireLease("r", "owner-b")
	var leased *LeasedError
	if !errors.As(err, &leased) || !errors.Is(err, ErrLeased) {
		t.Fatalf("second AcquireLease = %v, want a *LeasedError", err)
	}
	if leased.Holder.PID != os.Getpid() || leased.Holder.Owner != "owner-a" || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Errorf("LeasedError = %v (%+v), want it to name pid %d and owner-a", err, leased.Holder, os.Getpid())
	}
	info, held, err := s.LeaseHolder("r")
	if err != nil || !held || info.Owner != "owner-a" {
		t.Errorf("LeaseHolder = %+v, %v, %v; want held by owner-a", info, held, err)
	}

	before := l.Info().ExpiresAt
	if err := l.Renew(); err != nil {
		t.Fatal(err)
	}
	if info, _, _ := s.LeaseHolder("r"); !info.ExpiresAt.After(before) || info.ExpiresAt.Before(time.Now().Add(LeaseTerm-time.Minute)) {
		t.Errorf("Renew left expiry at %v (was %v)", info.ExpiresAt, before)
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release = %v", err)
	}
	if err := l.Check(); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Check after Release = %v, want ErrLeaseLost", err)
	}
	if exists(p.Lock) {
		t.Errorf("Release left the lock file")
	}
	if _, held, err := s.LeaseHolder("r"); held || err != nil {
		t.Errorf("LeaseHolder after Release: held %v, %v", held, err)
	}
	l2, err := s.AcquireLease("r", "owner-b")
	if err != nil {
		t.Fatal(err)
	}
	l2.Release()
}

// TestLeaseLostToReplacement plays a run deleted and recreated behind the
// owner's back: the old owner's Check must fail, and its Release must not
// remove the new lock file.
func TestLeaseLostToReplacement(t *testing.T) {
	s := openT(t, t.TempDir())
	p := s.RunPaths("r")
	l, err := s.AcquireLease("r", "old")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p.Lock); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Check with the lock file removed = %v, want ErrLeaseLost", err)
	}
	l2, err := s.AcquireLease("r", "new")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release()
	if err := l.Check(); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Check with the lock file replaced = %v, want ErrLeaseLost", err)
	}
	if err := l.Renew(); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Renew with the lock file replaced = %v, want ErrLeaseLost", err)
	}
	l.Release()
	if err := l2.Check(); err != nil {
		t.Errorf("the old owner's Release broke the new lease: %v", err)
	}
}

func TestStaleLockFileIsFree(t *testing.T) {
	s := openT(t, t.TempDir())
	p := s.RunPaths("r")
	os.WriteFile(p.Lock, []byte(`{"pid":999999,"owner":"dead"}`), 0o644)
	info, held, err := s.LeaseHolder("r")
	if err != nil || held || info.Owner != "dead" {
		t.Errorf("LeaseHolder = %+v, %v, %v; want not held, last holder dead", info, held, err)
	}
	l, err := s.AcquireLease("r", "me")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	checkMode(t, p.Lock, 0o600)
	if info, _, _ := s.LeaseHolder("r"); info.Owner != "me" || info.PID != os.Getpid() {
		t.Errorf("lock file says %+v after acquiring", info)
	}
}

const (
	helperRootEnv = "STORE_TEST_LEASE_ROOT"
	helperRun     = "shared-run"
)

// TestLeaseHelperProcess is the child of TestLeaseAcrossProcesses: it takes
// the lease, says so on stdout and holds it until killed.
func TestLeaseHelperProcess(t *testing.T) {
	root := os.Getenv(helperRootEnv)
	if root == "" {
		t.Skip("helper process for TestLeaseAcrossProcesses")
	}
	s := openT(t, root)
	if _, err := s.AcquireLease(helperRun, "child"); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("held", os.Getpid())
	io.Copy(io.Discard, os.Stdin) // until the parent kills us or goes away
	os.Exit(0)
}

func TestLeaseAcrossProcesses(t *testing.T) {
	root := t.TempDir()
	s := openT(t, root)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperRootEnv+"="+root)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "held ") {
		if strings.HasPrefix(lines.Text(), "error") {
			t.Fatalf("child: %s", lines.Text())
		}
	}
	if want := fmt.Sprint("held ", cmd.Process.Pid); lines.Text() != want {
		t.Fatalf("child said %q, want %q", lines.Text(), want)
	}

	_, err = s.AcquireLease(helperRun, "parent")
	var leased *LeasedError
	if !errors.As(err, &leased) || leased.Holder.PID != cmd.Process.Pid || leased.Holder.Owner != "child" {
		t.Fatalf("AcquireLease while the child holds it = %v, want ErrLeased naming the child", err)
	}
	if info, held, err := s.LeaseHolder(helperRun); !held || err != nil || info.PID != cmd.Process.Pid {
		t.Errorf("LeaseHolder = %+v, %v, %v; want held by the child", info, held, err)
	}
	if err := s.DeleteRun(helperRun); !errors.Is(err, ErrLeased) {
		t.Errorf("DeleteRun of a leased run = %v, want ErrLeased", err)
	}

	// SIGKILL: no cleanup runs in the child; the kernel drops the flock.
	cmd.Process.Kill()
	cmd.Wait()
	killed = true
	info, held, err := s.LeaseHolder(helperRun)
	if held || err != nil || info.Owner != "child" {
		t.Errorf("LeaseHolder after the child died = %+v, %v, %v; want free, last held by the child", info, held, err)
	}
	l, err := s.AcquireLease(helperRun, "parent")
	if err != nil {
		t.Fatalf("AcquireLease after the child died: %v", err)
	}
	l.Release()
}

func TestDeleteRun(t *testing.T) {
	s := openT(t, t.TempDir())
	p := s.RunPaths("a")
	writeT(t, s, "a", 1)
	writeT(t, s, "a", 2)
	os.WriteFile(p.Journal, []byte("{}\n"), 0o600)
	os.WriteFile(p.Journal+".torn-1764000000000000000", []byte("x"), 0o600)
	os.WriteFile(p.Snapshot+".tmp", []byte("x"), 0o600)
	// A run whose id looks like a side file of run "a" must survive.
	writeT(t, s, "a.jsonl.torn-1", 1)

	l, err := s.AcquireLease("a", "owner")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRun("a"); !errors.Is(err, ErrLeased) {
		t.Errorf("DeleteRun of a leased run = %v, want ErrLeased", err)
	}
	if !exists(p.Snapshot) {
		t.Fatalf("a refused DeleteRun removed files")
	}
	l.Release()

	if err := s.DeleteRun("a"); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(s.RunsDir(), "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "a.jsonl.torn-1.json" {
		t.Errorf("after DeleteRun the runs directory holds %q", left)
	}
	if err := s.DeleteRun("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteRun = %v, want ErrNotFound", err)
	}
}
