package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/command"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/gittest"
)

// gitHarness is a runtime whose project is a git repository, with a
// "command" executor running template.
func gitHarness(t *testing.T, template string, files map[string]string) *harness {
	t.Helper()
	gittest.Isolate(t)
	spec, err := command.ParseSpec(template)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, simulate.Config{}, func(c *engine.Config) {
		c.Executors = executors.NewSet(simulate.New(simulate.Config{}), command.New(spec, agentcli.Config{}))
	})
	if files != nil {
		initRepo(t, h.dir, files)
	}
	return h
}

func initRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	gittest.Git(t, dir, "config", "user.name", "Tester")
	gittest.Git(t, dir, "config", "user.email", "tester@example.com")
	for name, text := range files {
		writeTestFile(t, filepath.Join(dir, name), text)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "first")
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func commandOptions() engine.Options {
	o := testOptions()
	o.Executor = "command"
	return o
}

// checkoutState is what must never change in the main checkout: its
// commit, its branch, its status and the content of its files.
func checkoutState(t *testing.T, dir string) string {
	t.Helper()
	branch, _ := exec.Command("git", "-C", dir, "symbolic-ref", "-q", "--short", "HEAD").Output()
	var b strings.Builder
	b.WriteString(gittest.Git(t, dir, "rev-parse", "HEAD") + " " + strings.TrimSpace(string(branch)) + "\n")
	b.WriteString(gittest.Git(t, dir, "status", "--porcelain", "--untracked-files=all") + "\n")
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(p + "=" + string(data) + "\n")
		}
		return nil
	})
	return b.String()
}

func inspect(t *testing.T, h *harness, id string) *engine.Detail {
	t.Helper()
	d, err := h.rt.Inspect(id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// failedCalls fails the test, saying why, when a call of the run failed.
func failedCalls(t *testing.T, h *harness, id string) {
	t.Helper()
	for _, c := range inspect(t, h, id).Calls {
		if c.Status != "done" {
			t.Errorf("call %s %s: %s", c.Path, c.Status, c.Error)
		}
	}
}

func TestParallelIsolatedAgentsKeepTheirEditsOnTheirOwnBranches(t *testing.T) {
	// Each agent writes its prompt into the same file, and answers with
	// what it saw of a file the user has edited but not committed.
	h := gitHarness(t, `sh -c 'cat > shared.txt; cat notes.txt'`,
		map[string]string{"shared.txt": "original\n", "notes.txt": "committed\n"})
	writeTestFile(t, filepath.Join(h.dir, "notes.txt"), "uncommitted\n")
	writeTestFile(t, filepath.Join(h.dir, "scratch.txt"), "untracked\n")
	s := h.write("par.workflow.js", `export const meta = {name: "par", description: "d"}
return await parallel([0,1,2,3,4,5,6,7].map(i => () => agent("agent " + i, {label: "writer " + i, isolation: "worktree"})))`)
	base := gittest.Git(t, h.dir, "rev-parse", "HEAD")
	before := checkoutState(t, h.dir)

	o := h.run(s, "", commandOptions())
	mustStatus(t, o, engine.StatusCompleted)
	failedCalls(t, h, o.RunID)

	var answers []string
	if err := json.Unmarshal(o.Result, &answers); err != nil || len(answers) != 8 {
		t.Fatalf("result %s", o.Result)
	}
	for i, a := range answers {
		if a != "committed" {
			t.Errorf("agent %d saw notes.txt = %q; a worktree starts from the HEAD commit, not the user's uncommitted edits", i, a)
		}
	}
	if after := checkoutState(t, h.dir); after != before {
		t.Fatalf("the main checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	d := inspect(t, h, o.RunID)
	if len(d.Worktrees) != 8 {
		t.Fatalf("%d kept worktrees, want 8: %+v", len(d.Worktrees), d.Worktrees)
	}
	branches := map[string]bool{}
	for _, w := range d.Worktrees {
		i := strings.TrimPrefix(w.Label, "writer ")
		if want := "dynworkflow/" + o.RunID + "/writer-" + i; w.Branch != want {
			t.Errorf("branch %s, want %s", w.Branch, want)
		}
		branches[w.Branch] = true
		if w.Base != base || !w.Committed || w.Files != 1 || w.Insertions != 1 || w.Deletions != 1 {
			t.Errorf("worktree %+v: want base %s, committed, 1 file +1 -1", w.Worktree, base)
		}
		if got := gittest.Git(t, h.dir, "show", w.Branch+":shared.txt"); got != "agent "+i {
			t.Errorf("%s: shared.txt = %q, want %q", w.Branch, got, "agent "+i)
		}
		if got := gittest.Git(t, h.dir, "rev-parse", w.Branch+"^"); got != base {
			t.Errorf("%s: parent %s, want the base %s", w.Branch, got, base)
		}
		if got := gittest.Git(t, h.dir, "rev-parse", w.Branch); got != w.Head {
			t.Errorf("%s is at %s, the journal says %s", w.Branch, got, w.Head)
		}
	}
	if len(branches) != 8 {
		t.Fatalf("branches are not distinct: %v", branches)
	}
	for _, c := range d.Calls {
		if c.Worktree == nil || c.Worktree.Status != "kept" {
			t.Errorf("call %s: worktree %+v, want kept", c.Path, c.Worktree)
		}
	}
}

func TestAnAgentThatChangesNothingLeavesNoWorktreeOrBranch(t *testing.T) {
	h := gitHarness(t, `sh -c 'cat > /dev/null; cat a.txt'`, map[string]string{"a.txt": "a\n"})
	s := h.write("read.workflow.js", `export const meta = {name: "read", description: "d"}
return await parallel([1,2,3].map(i => () => agent("look " + i, {isolation: "worktree"})))`)
	o := h.run(s, "", commandOptions())
	mustStatus(t, o, engine.StatusCompleted)
	if string(o.Result) != `["a","a","a"]` {
		t.Fatalf("result %s", o.Result)
	}
	if got := gittest.Git(t, h.dir, "branch", "--list", "dynworkflow/*"); got != "" {
		t.Errorf("branches left: %s", got)
	}
	if got := gittest.Git(t, h.dir, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", got)
	}
	if _, err := os.Stat(h.rt.Store().WorktreesDir(o.RunID)); !os.IsNotExist(err) {
		t.Errorf("the run's worktree directory is still there: %v", err)
	}
	d := inspect(t, h, o.RunID)
	if len(d.Worktrees) != 0 {
		t.Errorf("kept worktrees: %+v", d.Worktrees)
	}
	for _, c := range d.Calls {
		if c.Worktree == nil || c.Worktree.Status != "removed" {
			t.Errorf("call %s: worktree %+v, want removed", c.Path, c.Worktree)
		}
	}
}

func TestTheBaseIsTheCommitTheUserIsOn(t *testing.T) {
	h := gitHarness(t, `sh -c 'cat > out.txt'`, map[string]string{"a.txt": "main\n"})
	gittest.Git(t, h.dir, "checkout", "-q", "-b", "feature")
	writeTestFile(t, filepath.Join(h.dir, "a.txt"), "feature\n")
	gittest.Git(t, h.dir, "commit", "-q", "-am", "on feature")
	feature := gittest.Git(t, h.dir, "rev-parse", "HEAD")
	s := h.write("one.workflow.js", `export const meta = {name: "one", description: "d"}
return await agent("x", {label: "w", isolation: "worktree"})`)

	check := func(wantBase, wantA string) {
		t.Helper()
		before := checkoutState(t, h.dir)
		o := h.run(s, "", commandOptions())
		mustStatus(t, o, engine.StatusCompleted)
		d := inspect(t, h, o.RunID)
		if len(d.Worktrees) != 1 || d.Worktrees[0].Base != wantBase {
			t.Fatalf("worktrees %+v, want one based on %s", d.Worktrees, wantBase)
		}
		if got := gittest.Git(t, h.dir, "show", d.Worktrees[0].Branch+":a.txt"); got != wantA {
			t.Errorf("a.txt on the branch = %q, want %q", got, wantA)
		}
		if after := checkoutState(t, h.dir); after != before {
			t.Fatalf("the main checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	}
	// A non-default branch: its commit, not main's.
	check(feature, "feature")
	// A detached HEAD: the commit itself.
	first := gittest.Git(t, h.dir, "rev-parse", "main")
	gittest.Git(t, h.dir, "checkout", "-q", "--detach", first)
	check(first, "main")
}

func TestIsolationWithoutAGitProjectPausesTheRun(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	h := gitHarness(t, `sh -c 'cat > out.txt; touch `+marker+`; echo done'`, nil)
	s := h.write("one.workflow.js", `export const meta = {name: "one", description: "d"}
return await agent("x", {isolation: "worktree"})`)
	o := h.run(s, "", commandOptions())
	mustStatus(t, o, engine.StatusPaused)
	if !strings.Contains(o.PauseReason, "not in a git working tree") || !strings.Contains(o.PauseReason, "git init") {
		t.Errorf("pause reason %q does not say what is wrong and what to do", o.PauseReason)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the agent ran in the shared checkout")
	}
	// Fixed, the run resumes.
	initRepo(t, h.dir, map[string]string{"a.txt": "a\n"})
	o = h.resume(o.RunID, engine.ResumeRequest{})
	mustStatus(t, o, engine.StatusCompleted)
	if string(o.Result) != `"done"` {
		t.Errorf("result %s", o.Result)
	}
	if got := gittest.Git(t, h.dir, "status", "--porcelain"); strings.Contains(got, "out.txt") {
		t.Errorf("the agent wrote in the main checkout: %s", got)
	}
}

func TestAnEmptyRepositoryPausesTheRun(t *testing.T) {
	h := gitHarness(t, `sh -c 'cat'`, nil)
	gittest.Git(t, h.dir, "init", "-q")
	s := h.write("one.workflow.js", `export const meta = {name: "one", description: "d"}
return await agent("x", {isolation: "worktree"})`)
	o := h.run(s, "", commandOptions())
	mustStatus(t, o, engine.StatusPaused)
	if !strings.Contains(o.PauseReason, "no commit yet") {
		t.Errorf("pause reason %q", o.PauseReason)
	}
}

// waitForFile polls for a file an agent creates.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAPausedAgentsPartialEditsAreKeptAndTheRerunGetsANewWorktree(t *testing.T) {
	flag := t.TempDir()
	// First time: edit, create a file, tell the test, and hang. Second
	// time: answer at once.
	h := gitHarness(t, `sh -c 'cat >/dev/null; if [ -e `+flag+`/once ]; then echo second; exit 0; fi; echo partial >> a.txt; echo new > b.txt; touch `+flag+`/once; exec sleep 60'`,
		map[string]string{"a.txt": "a\n"})
	s := h.write("one.workflow.js", `export const meta = {name: "one", description: "d"}
return await agent("x", {label: "slow", isolation: "worktree"})`)
	r := h.start(s, "", commandOptions())
	waitForFile(t, filepath.Join(flag, "once"))
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	o := h.wait(r)
	mustStatus(t, o, engine.StatusPaused)

	d := inspect(t, h, o.RunID)
	if len(d.Worktrees) != 1 || !d.Worktrees[0].Interrupted || !d.Worktrees[0].Committed || d.Worktrees[0].Files != 2 {
		t.Fatalf("kept worktrees %+v, want the interrupted call's two files, committed", d.Worktrees)
	}
	first := d.Worktrees[0]
	if got := gittest.Git(t, h.dir, "show", first.Branch+":b.txt"); got != "new" {
		t.Errorf("b.txt on %s = %q", first.Branch, got)
	}
	if msg := gittest.Git(t, h.dir, "log", "-1", "--format=%s", first.Branch); !strings.Contains(msg, "interrupted") {
		t.Errorf("commit message %q does not say the agent was interrupted", msg)
	}

	o = h.resume(o.RunID, engine.ResumeRequest{})
	mustStatus(t, o, engine.StatusCompleted)
	d = inspect(t, h, o.RunID)
	c := d.Calls[0]
	if c.Worktree == nil || c.Worktree.Dir == first.Dir || c.Worktree.Branch == first.Branch || c.Worktree.Status != "removed" {
		t.Fatalf("the re-run's worktree %+v, want a new one, removed as it changed nothing", c.Worktree)
	}
	if got := gittest.Git(t, h.dir, "show", first.Branch+":a.txt"); got != "a\npartial" {
		t.Errorf("the interrupted call's branch lost its edits: a.txt = %q", got)
	}
}

func TestResumeWarnsWhenAKeptBranchMovedOrVanished(t *testing.T) {
	h := gitHarness(t, `sh -c 'cat > out.txt'`, map[string]string{"a.txt": "a\n"})
	s := h.write("two.workflow.js", `export const meta = {name: "two", description: "d"}
const a = await agent("one", {label: "one", isolation: "worktree"})
const b = await agent("two", {label: "two", isolation: "worktree"})
return [a, b]`)
	o := h.run(s, "", commandOptions())
	mustStatus(t, o, engine.StatusCompleted)
	d := inspect(t, h, o.RunID)
	if len(d.Worktrees) != 2 {
		t.Fatalf("worktrees %+v", d.Worktrees)
	}
	one, two := d.Worktrees[0], d.Worktrees[1]
	// The user adds a commit on one branch and deletes the other, unmerged.
	writeTestFile(t, filepath.Join(one.Dir, "fix.txt"), "fix\n")
	gittest.Git(t, one.Dir, "add", "fix.txt")
	gittest.Git(t, one.Dir, "commit", "-q", "-m", "fix")
	gittest.Git(t, h.dir, "worktree", "remove", "--force", two.Dir)
	gittest.Git(t, h.dir, "branch", "-D", two.Branch)

	o = h.resume(o.RunID, engine.ResumeRequest{})
	mustStatus(t, o, engine.StatusCompleted)
	if o.Stats.Replayed != 2 {
		t.Fatalf("replayed %d, want 2", o.Stats.Replayed)
	}
	var warnings []string
	for _, l := range inspect(t, h, o.RunID).Logs {
		if l.Level == "warn" {
			warnings = append(warnings, l.Message)
		}
	}
	all := strings.Join(warnings, "\n")
	if !strings.Contains(all, one.Branch+" moved from "+one.Head[:12]) {
		t.Errorf("no warning that %s moved:\n%s", one.Branch, all)
	}
	if !strings.Contains(all, two.Branch+" is gone") || !strings.Contains(all, "not merged") {
		t.Errorf("no warning that %s vanished unmerged:\n%s", two.Branch, all)
	}
}

func TestAWorktreeThatCouldNotBeRemovedIsListedAndCleaned(t *testing.T) {
	// The agent changes nothing but locks its worktree, so that removing
	// it fails.
	h := gitHarness(t, `sh -c 'cat >/dev/null; git worktree lock --reason "agent" . && echo locked'`, map[string]string{"a.txt": "a\n"})
	s := h.write("one.workflow.js", `export const meta = {name: "one", description: "d"}
return await agent("x", {label: "locker", isolation: "worktree"})`)
	o := h.run(s, "", commandOptions())
	mustStatus(t, o, engine.StatusCompleted)
	ctx := context.Background()
	states, err := h.rt.Worktrees(ctx, o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || !states[0].Leftover || !states[0].Exists || !states[0].Merged {
		t.Fatalf("Worktrees = %+v, want the unremoved one, listed as merged (nothing on its branch)", states)
	}
	gittest.Git(t, h.dir, "worktree", "unlock", states[0].Dir)
	res, err := h.rt.CleanWorktrees(ctx, o.RunID, nil, false)
	if err != nil || len(res) != 1 || !res[0].Removed {
		t.Fatalf("CleanWorktrees = %+v, %v", res, err)
	}
	if got := gittest.Git(t, h.dir, "branch", "--list", "dynworkflow/*"); got != "" {
		t.Errorf("branches left: %s", got)
	}
}
