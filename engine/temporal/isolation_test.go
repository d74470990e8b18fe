package temporal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/command"
	"github.com/dynworkflow/dynworkflow/internal/gittest"
	"github.com/dynworkflow/dynworkflow/internal/worktree"
)

// gitProject writes files into a new git repository with one commit, and
// the script beside them; it returns the script's path.
func gitProject(t *testing.T, files map[string]string, script string) string {
	t.Helper()
	gittest.Isolate(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	gittest.Git(t, dir, "config", "user.name", "Tester")
	gittest.Git(t, dir, "config", "user.email", "tester@example.com")
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "first")
	path := filepath.Join(dir, "iso.workflow.js")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// commandSet is a "command" executor running template in the agent's
// directory.
func commandSet(t *testing.T, template string) *executors.Set {
	t.Helper()
	spec, err := command.ParseSpec(template)
	if err != nil {
		t.Fatal(err)
	}
	return executors.NewSet(command.New(spec, agentcli.Config{}))
}

// isolatedWorker is a worker whose state root the test knows.
func isolatedWorker(t *testing.T, c *Client, name string, set *executors.Set) (stateRoot string) {
	t.Helper()
	stateRoot = t.TempDir()
	w := NewWorker(c, &Activities{Executors: set, Hosts: hosts(), StateRoot: stateRoot, Identity: name, Logger: testLog(t)},
		WorkerOptions{TaskQueue: c.Config().TaskQueue, Identity: name})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return stateRoot
}

func commandOpts() engine.Options {
	o := engine.DefaultOptions()
	o.Executor = "command"
	return o
}

// TestIsolatedCallsOnTemporalKeepTheirEditsOnTheirOwnBranches runs
// isolated agents on a worker that shares the project's file system: each
// works in a worktree of its own made from the commit the project is on,
// its edits are committed on its own branch in the project's repository,
// an agent that changes nothing leaves no branch, and the project's
// checkout is never touched.
func TestIsolatedCallsOnTemporalKeepTheirEditsOnTheirOwnBranches(t *testing.T) {
	c := newClient(t) // before gitProject moves HOME, where the dev server is found
	path := gitProject(t, map[string]string{"shared.txt": "original\n", "notes.txt": "committed\n"},
		`export const meta = {name: "iso", description: "isolated agents on Temporal"}
const edits = await parallel([0, 1, 2].map(i => () => agent("agent " + i, {label: "writer " + i, isolation: "worktree"})))
const look = await agent("look", {label: "reader", isolation: "worktree"})
return {edits, look}`)
	dir := filepath.Dir(path)
	// A writer writes its prompt into shared.txt; the reader changes
	// nothing. Each answers with what it saw of notes.txt.
	root := isolatedWorker(t, c, "w1", commandSet(t, `sh -c 'p=$(cat); case "$p" in agent*) echo "$p" > shared.txt;; esac; cat notes.txt'`))
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("uncommitted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	status := gittest.Git(t, dir, "status", "--porcelain")

	in := startFile(t, c, path, "", commandOpts(), false)
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusCompleted {
		t.Fatalf("run %s (%s) %s", st.Status, st.PauseReason, st.Error)
	}
	if want := `{"edits":["committed","committed","committed"],"look":"committed"}`; string(st.Result) != want {
		t.Fatalf("result %s, want %s: each agent starts from the HEAD commit, not the user's uncommitted edits", st.Result, want)
	}
	if got := gittest.Git(t, dir, "status", "--porcelain"); got != status || gittest.Git(t, dir, "rev-parse", "HEAD") != base {
		t.Fatalf("the project's checkout changed: status %q, was %q", got, status)
	}
	d, err := c.Detail(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Worktrees) != 3 {
		t.Fatalf("%d kept worktrees, want 3: %+v", len(d.Worktrees), d.Worktrees)
	}
	for _, w := range d.Worktrees {
		i := strings.TrimPrefix(w.Label, "writer ")
		if want := "dynworkflow/" + in.RunID + "/writer-" + i; w.Branch != want {
			t.Errorf("branch %s, want %s", w.Branch, want)
		}
		if w.Base != base || !w.Committed || w.Files != 1 || w.Interrupted {
			t.Errorf("worktree %+v: want base %s, committed, 1 file", w.Worktree, base)
		}
		if got := gittest.Git(t, dir, "show", w.Branch+":shared.txt"); got != "agent "+i {
			t.Errorf("%s: shared.txt = %q, want %q", w.Branch, got, "agent "+i)
		}
		if got := gittest.Git(t, dir, "rev-parse", w.Branch); got != w.Head {
			t.Errorf("%s is at %s, the run says %s", w.Branch, got, w.Head)
		}
	}
	for _, call := range d.Calls {
		want := "kept"
		if call.Label == "reader" {
			want = "removed"
		}
		if call.Worktree == nil || call.Worktree.Status != want {
			t.Errorf("call %s (%s): worktree %+v, want %s", call.Path, call.Label, call.Worktree, want)
		}
	}
	if got := gittest.Git(t, dir, "branch", "--list", "dynworkflow/*/reader*"); got != "" {
		t.Errorf("the reader changed nothing, and its branch is left: %s", got)
	}
	if got := gittest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 4 {
		t.Errorf("want the project and the three kept worktrees, git has:\n%s", got)
	}
	// `dynworkflow worktrees` on the machine of the worker lists them, as
	// made on a worker, with their unmerged edits.
	local, err := store.Open(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: local, Hosts: hosts(), Executors: simulated(), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := rt.Worktrees(context.Background(), in.RunID)
	if err != nil || len(listed) != 3 {
		t.Fatalf("worktrees of the run: %+v, %v; want the 3 kept", listed, err)
	}
	for _, w := range listed {
		if !w.Worker || w.Active || w.Merged || !w.Exists || w.Now.Files != 1 {
			t.Errorf("listed %+v: want made on a worker, settled, unmerged, 1 file", w)
		}
	}
	// Nothing but the kept worktrees is left on the worker: no record of
	// an attempt under way, no empty directory.
	_ = filepath.WalkDir(store.WorkerWorktreesDir(root, store.ProjectID(dir), in.RunID), func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".json") {
			t.Errorf("an attempt's record is left: %s", p)
		}
		return nil
	})
}

// TestAPausedIsolatedCallOnTemporalKeepsItsPartialEdits pauses a run while
// an isolated agent is editing: its worker commits the partial edits on the
// attempt's branch, marked interrupted, and the call runs again on resume
// in a new worktree from the project's commit.
func TestAPausedIsolatedCallOnTemporalKeepsItsPartialEdits(t *testing.T) {
	c := newClient(t)
	path := gitProject(t, map[string]string{"a.txt": "a\n"},
		`export const meta = {name: "iso", description: "a paused isolated agent"}
return await agent("edit", {label: "editor", isolation: "worktree"})`)
	dir := filepath.Dir(path)
	flags := t.TempDir()
	isolatedWorker(t, c, "w1", commandSet(t, `sh -c 'cat >/dev/null; if [ -e `+flags+`/once ]; then cat a.txt; exit 0; fi; echo partial >> a.txt; touch `+flags+`/once; exec sleep 60'`))
	in := startFile(t, c, path, "", commandOpts(), false)
	waitForPath(t, filepath.Join(flags, "once"))
	if err := c.Pause(context.Background(), in.RunID, "a test asked"); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c, in.RunID); st.Status != engine.StatusPaused {
		t.Fatalf("after pause: %s %s", st.Status, st.Error)
	}
	branch := "dynworkflow/" + in.RunID + "/editor"
	// The worker settles the attempt once its cancellation reaches it.
	deadline := time.Now().Add(time.Minute)
	for gittest.Git(t, dir, "rev-parse", branch) == gittest.Git(t, dir, "rev-parse", "HEAD") {
		if time.Now().After(deadline) {
			t.Fatalf("the paused agent's partial edits were not committed on %s", branch)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := gittest.Git(t, dir, "show", branch+":a.txt"); got != "a\npartial" {
		t.Fatalf("%s: a.txt = %q, want the partial edit", branch, got)
	}
	if msg := gittest.Git(t, dir, "log", "-1", "--format=%s", branch); !strings.Contains(msg, "interrupted") {
		t.Errorf("the commit of partial edits says %q", msg)
	}

	if _, err := c.Resume(context.Background(), in.RunID, ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusCompleted || string(st.Result) != `"a"` {
		t.Fatalf("after resume: %s %s %s: the call must run again from the project's commit", st.Status, st.Result, st.Error)
	}
	if got := gittest.Git(t, dir, "show", branch+":a.txt"); got != "a\npartial" {
		t.Errorf("the resumed call moved the interrupted attempt's branch: a.txt = %q", got)
	}
}

// TestIsolationOnAWorkerWithoutTheProjectPausesTheRun: a worker that
// cannot see the project, or sees no git repository there, never runs the
// agent in a checkout of its own: the run pauses, saying which worker,
// why, and what to do.
func TestIsolationOnAWorkerWithoutTheProjectPausesTheRun(t *testing.T) {
	script := `export const meta = {name: "iso", description: "d"}
return await agent("edit", {isolation: "worktree"})`
	for _, tc := range []struct {
		name string
		cwd  func(dir string) string
		want []string
	}{
		{"no repository", func(dir string) string { return dir }, []string{"worker lonely", "is not in a git working tree", "git init"}},
		{"no project directory", func(dir string) string { return filepath.Join(dir, "elsewhere") },
			[]string{"worker lonely cannot see the project directory", "on a mount at the same path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScript(t, "iso.workflow.js", script)
			ran := filepath.Join(t.TempDir(), "ran")
			c := newClient(t)
			gittest.Isolate(t)
			isolatedWorker(t, c, "lonely", commandSet(t, `sh -c 'cat >/dev/null; touch `+ran+`; echo x'`))
			b, s, err := BundleFile(c.hosts, path)
			if err != nil {
				t.Fatal(err)
			}
			in, err := c.Start(context.Background(), StartRequest{Bundle: b, Script: s, Options: commandOpts(),
				Cwd: tc.cwd(filepath.Dir(path)), Heartbeat: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			st := wait(t, c, in.RunID)
			if st.Status != engine.StatusPaused {
				t.Fatalf("run %s %s, want paused", st.Status, st.Error)
			}
			for _, w := range tc.want {
				if !strings.Contains(st.PauseReason, w) {
					t.Errorf("the pause reason %q does not say %q", st.PauseReason, w)
				}
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the agent ran without its worktree")
			}
		})
	}
}

// TestAnAttemptLostWithItsWorkerIsSettledByTheNext: the worktree a worker
// that died left, with the agent's edits uncommitted, is committed and
// kept by the next attempt of the call, wherever it runs, before that
// attempt starts in a new worktree.
func TestAnAttemptLostWithItsWorkerIsSettledByTheNext(t *testing.T) {
	path := gitProject(t, map[string]string{"a.txt": "a\n"}, "")
	dir := filepath.Dir(path)
	a := &Activities{StateRoot: t.TempDir(), Identity: "w2", Logger: testLog(t)}
	runID := store.NewRunID("iso")
	in := AgentInput{Path: "0", Label: "editor", Cwd: dir, Isolation: "worktree"}
	ctx := context.Background()

	// The dead worker's attempt: its worktree, its record, and an edit.
	first, err := a.isolate(ctx, runID, in)
	if err != nil {
		t.Fatal(err)
	}
	dead := first.iso.Info()
	if err := os.WriteFile(filepath.Join(first.iso.WorkDir(), "a.txt"), []byte("half done\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	next, err := a.isolate(ctx, runID, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.earlier) != 1 {
		t.Fatalf("the next attempt settled %d earlier worktrees, want 1", len(next.earlier))
	}
	w := next.earlier[0]
	if !w.Kept() || !w.Interrupted || !w.Committed || w.Branch != dead.Branch {
		t.Errorf("the dead attempt's worktree became %+v, want kept, interrupted, committed on %s", w, dead.Branch)
	}
	if got := gittest.Git(t, dir, "show", dead.Branch+":a.txt"); got != "half done" {
		t.Errorf("%s: a.txt = %q, want the dead agent's edit", dead.Branch, got)
	}
	if next.iso.Info().Branch == dead.Branch || next.iso.Info().Base != dead.Base {
		t.Errorf("the next attempt runs in %+v, want a new branch from %s", next.iso.Info(), dead.Base)
	}
	if b, _ := os.ReadFile(filepath.Join(next.iso.WorkDir(), "a.txt")); string(b) != "a\n" {
		t.Errorf("the next attempt starts with a.txt = %q, want the project's commit", b)
	}
	// Settled once: a third attempt finds nothing more to settle.
	info := a.settle(ctx, next, false)
	if !info.Removed() {
		t.Errorf("an attempt that changed nothing: %+v, want removed", info)
	}
	third, err := a.isolate(ctx, runID, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(third.earlier) != 0 {
		t.Errorf("settled again: %+v", third.earlier)
	}
	// While the third attempt runs, `worktrees clean` leaves its worktree
	// alone, though it holds nothing yet.
	st, err := store.Open(a.StateRoot, dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: hosts(), Executors: simulated(), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	cleaned, err := rt.CleanWorktrees(ctx, runID, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cleaned {
		if c.Removed && c.Branch == third.iso.Info().Branch {
			t.Errorf("clean removed the worktree of an attempt under way: %+v", c)
		}
	}
	if _, err := os.Stat(third.iso.WorkDir()); err != nil {
		t.Errorf("the running attempt's worktree is gone: %v", err)
	}
	repo, err := worktree.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	heads, err := repo.BranchHeads(ctx, "dynworkflow/")
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 2 {
		t.Errorf("branches %v, want the dead attempt's and the third's", heads)
	}
}

func waitForPath(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAnAgentThatRewritesItsGitFileIsNotFollowed: an agent may write
// anything in its worktree, .git included. The worker runs no git command
// where .git points elsewhere: the answer stands, the worktree is kept as
// the agent left it with the reason, and its record is gone, so no later
// attempt takes it for a dead worker's.
func TestAnAgentThatRewritesItsGitFileIsNotFollowed(t *testing.T) {
	c := newClient(t)
	path := gitProject(t, map[string]string{"a.txt": "a\n"},
		`export const meta = {name: "iso", description: "a hostile agent"}
return await agent("edit", {label: "rogue", isolation: "worktree"})`)
	dir := filepath.Dir(path)
	elsewhere := t.TempDir()
	gittest.Git(t, elsewhere, "init", "-q")
	root := isolatedWorker(t, c, "w1", commandSet(t, `sh -c 'cat >/dev/null; echo edited >> a.txt; echo "gitdir: `+elsewhere+`/.git" > .git; echo done'`))
	in := startFile(t, c, path, "", commandOpts(), false)
	st := wait(t, c, in.RunID)
	if st.Status != engine.StatusCompleted || string(st.Result) != `"done"` {
		t.Fatalf("run %s %s %s: the agent's answer must stand", st.Status, st.Result, st.Error)
	}
	d, err := c.Detail(context.Background(), in.RunID)
	if err != nil {
		t.Fatal(err)
	}
	w := d.Calls[0].Worktree
	if w == nil || !w.Kept() || !strings.Contains(w.Error, "no longer points") {
		t.Fatalf("the rogue agent's worktree: %+v, want kept with the reason", w)
	}
	if got := gittest.Git(t, elsewhere, "log", "--oneline", "--all"); got != "" {
		t.Errorf("git ran in the repository the agent pointed at: %s", got)
	}
	_ = filepath.WalkDir(store.WorkerWorktreesDir(root, store.ProjectID(dir), in.RunID), func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".json") {
			t.Errorf("the settled attempt's record is left: %s", p)
		}
		return nil
	})
}
