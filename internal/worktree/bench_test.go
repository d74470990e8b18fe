//go:build unix

package worktree_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/worktree"
)

// BenchmarkIsolation10k is what isolation costs an agent call on a
// repository of 10,000 files (100 directories of 100 small files), beside
// plain git as the floor. Target: set-up plus tear-down under 300 ms.
//
//	go test -run '^$' -bench Isolation10k -benchtime 10x ./internal/worktree/
//
// Figures (ms/call of wall time, and cpu-ms/call: the CPU time of git and
// of this process, which holds better on a loaded machine):
//   - floor-add: git worktree add -b, alone; floor-add-remove: add, then
//     git worktree remove --force and git branch -D.
//   - call-waits: what an isolated call that changes nothing waits for:
//     HEAD, a unique branch and directory, the checkout, and Settle's
//     status check. Its removal runs in the background (remove).
//   - call-total: call-waits plus the removal, one after the other.
//   - edit-waits: a call that edits one file: set-up, then Settle's
//     commit and diff stat; the worktree is kept.
func BenchmarkIsolation10k(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	repo := bigRepo(b, 100, 100)
	r, err := worktree.Open(context.Background(), repo)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	base, err := r.Head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	parent := b.TempDir()
	n := 0
	name := func() string { n++; return fmt.Sprintf("w%d", n) }
	plainAdd := func(b *testing.B) (dir, branch string) {
		w := name()
		dir, branch = filepath.Join(parent, w), "plain/"+w
		benchGit(b, repo, "worktree", "add", "--quiet", "-b", branch, dir, base)
		return dir, branch
	}
	plainRemove := func(b *testing.B, dir, branch string) {
		benchGit(b, repo, "worktree", "remove", "--force", dir)
		benchGit(b, repo, "branch", "-q", "-D", branch)
	}
	setUp := func(b *testing.B) *worktree.Tree {
		head, err := r.Head(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t, err := r.Add(ctx, worktree.AddSpec{Parent: parent, Name: name(), BranchPrefix: "dynworkflow/bench/", Base: head})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.WorkDir(); err != nil {
			b.Fatal(err)
		}
		return t
	}
	settle := func(b *testing.B, t *worktree.Tree) worktree.Outcome {
		out, err := t.Settle(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	remove := func(b *testing.B, t *worktree.Tree, head string) {
		if err := t.Remove(ctx, head, true); err != nil {
			b.Fatal(err)
		}
	}
	// m measures the timed parts of a sub-benchmark: wall time, and CPU
	// time of this process and of the git processes it waited for, which
	// is the figure that holds on a machine whose CPUs are contended.
	var m meter
	report := func(b *testing.B) {
		b.ReportMetric(float64(m.wall.Microseconds())/1000/float64(b.N), "ms/call")
		b.ReportMetric(float64(m.cpu.Microseconds())/1000/float64(b.N), "cpu-ms/call")
		m = meter{}
	}

	b.Run("floor-add", func(b *testing.B) {
		for range b.N {
			var dir, branch string
			m.measure(func() { dir, branch = plainAdd(b) })
			b.StopTimer()
			plainRemove(b, dir, branch)
			b.StartTimer()
		}
		report(b)
	})
	b.Run("floor-add-remove", func(b *testing.B) {
		for range b.N {
			m.measure(func() {
				dir, branch := plainAdd(b)
				plainRemove(b, dir, branch)
			})
		}
		report(b)
	})
	b.Run("call-waits", func(b *testing.B) {
		for range b.N {
			var t *worktree.Tree
			var out worktree.Outcome
			m.measure(func() {
				t = setUp(b)
				out = settle(b, t)
			})
			if out.Changed {
				b.Fatal("an untouched worktree settled as changed")
			}
			b.StopTimer()
			remove(b, t, out.Head)
			b.StartTimer()
		}
		report(b)
	})
	b.Run("remove", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			t := setUp(b)
			out := settle(b, t)
			b.StartTimer()
			m.measure(func() { remove(b, t, out.Head) })
		}
		report(b)
	})
	b.Run("call-total", func(b *testing.B) {
		for range b.N {
			m.measure(func() {
				t := setUp(b)
				remove(b, t, settle(b, t).Head)
			})
		}
		report(b)
	})
	b.Run("edit-waits", func(b *testing.B) {
		for range b.N {
			var t *worktree.Tree
			var out worktree.Outcome
			m.measure(func() {
				t = setUp(b)
				if err := os.WriteFile(filepath.Join(t.Dir, "d0", "f0.txt"), []byte("edited\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				out = settle(b, t)
			})
			if !out.Committed {
				b.Fatal("the edit was not committed")
			}
			b.StopTimer()
			remove(b, t, out.Head)
			b.StartTimer()
		}
		report(b)
	})
}

// meter adds up the wall and CPU time of measured sections.
type meter struct{ wall, cpu time.Duration }

func (m *meter) measure(f func()) {
	cpu0, t0 := cpuTime(), time.Now()
	f()
	m.wall += time.Since(t0)
	m.cpu += cpuTime() - cpu0
}

// cpuTime is the user and system time of this process and of its
// children that were waited for.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// bigRepo makes a repository of dirs × files small files, committed.
func bigRepo(b *testing.B, dirs, files int) string {
	b.Helper()
	dir := b.TempDir()
	for d := range dirs {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range files {
			text := fmt.Sprintf("package d%d // file %d\n\nconst x%d = %d\n", d, f, f, d*files+f)
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.txt", f)), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchGit(b, dir, "init", "-q")
	benchGit(b, dir, "config", "gc.auto", "0")
	benchGit(b, dir, "add", "-A")
	benchGit(b, dir, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "10k files")
	// Packed, as a cloned or long-lived repository is, and without an
	// automatic gc starting in the background in the middle of a figure:
	// checking out 10,000 loose objects costs several times more.
	benchGit(b, dir, "gc", "--quiet")
	return dir
}

func benchGit(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
