package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/gittest"
)

// These tests run isolated agents through the real binary, in real git
// repositories, with agents that write files through the command
// executor. They set HOME and git's configuration variables, so they do
// not run in parallel.

// gitEnv makes e's project a git repository with files committed, and
// keeps the user's git configuration (and identity) out of every git the
// test and the binary run.
func gitEnv(t *testing.T, files map[string]string) *e2etest.Env {
	t.Helper()
	gittest.Isolate(t)
	e := e2etest.NewEnv(t)
	git(e, "init", "-q", "-b", "main")
	git(e, "config", "user.name", "Tester")
	git(e, "config", "user.email", "tester@example.com")
	for name, text := range files {
		e.Write(name, text)
	}
	git(e, "add", "-A")
	git(e, "commit", "-q", "-m", "first")
	return e
}

func git(e *e2etest.Env, args ...string) string {
	e.T.Helper()
	return gittest.Git(e.T, e.Dir, args...)
}

// checkout is what must never change in the main checkout.
func checkout(e *e2etest.Env) string {
	e.T.Helper()
	branch, _ := exec.Command("git", "-C", e.Dir, "symbolic-ref", "-q", "--short", "HEAD").Output()
	return git(e, "rev-parse", "HEAD") + " " + strings.TrimSpace(string(branch)) + "\n" +
		git(e, "status", "--porcelain", "--untracked-files=all") + "\n" + git(e, "diff")
}

// writeScript writes a workflow outside the repository, so that the main
// checkout holds only what the test put there.
func writeScript(e *e2etest.Env, name, text string) string {
	e.T.Helper()
	p := filepath.Join(e.State, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.T.Fatal(err)
	}
	return p
}

// keptWorktree is an entry of show --json's worktrees.
type keptWorktree struct {
	Path        string `json:"path"`
	Label       string `json:"label"`
	Status      string `json:"status"`
	Dir         string `json:"dir"`
	Branch      string `json:"branch"`
	Base        string `json:"base"`
	Head        string `json:"head"`
	Committed   bool   `json:"committed"`
	Interrupted bool   `json:"interrupted"`
	Files       int    `json:"files"`
}

type isolatedDetail struct {
	Calls []struct {
		Path     string        `json:"path"`
		Status   string        `json:"status"`
		Worktree *keptWorktree `json:"worktree"`
	} `json:"calls"`
	Worktrees []keptWorktree `json:"worktrees"`
}

func showIsolated(e *e2etest.Env, id string) isolatedDetail {
	e.T.Helper()
	r := e.DWOK("show", id, "--json")
	var d isolatedDetail
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		e.T.Fatalf("show --json: %v\n%s", err, r)
	}
	return d
}

// Must-show 1: eight parallel isolated agents each write the same file;
// each change lands on its own branch from the current HEAD, the main
// checkout is untouched, and every change is recoverable afterwards.
func TestEightIsolatedAgentsWriteTheSameFile(t *testing.T) {
	e := gitEnv(t, map[string]string{"shared.txt": "original\n", "notes.txt": "committed\n"})
	// The user is on a branch of their own, with edits they have not
	// committed: the agents start from the commit, and never see or touch
	// the edits.
	git(e, "checkout", "-q", "-b", "work")
	e.Write("notes.txt", "uncommitted\n")
	e.Write("scratch.txt", "untracked\n")
	base := git(e, "rev-parse", "HEAD")
	before := checkout(e)
	script := writeScript(e, "eight.workflow.js", `export const meta = {name: "eight", description: "eight writers"}
return await parallel([0,1,2,3,4,5,6,7].map(i => () => agent("written by agent " + i, {label: "writer-" + i, isolation: "worktree"})))`)

	o := e.RunCompleted(script, "--command-executor", `sh -c 'cat > shared.txt; cat notes.txt'`, "--executor", "command", "--concurrency", "8")
	e2etest.SameJSON(t, "result", o.Result, json.RawMessage(`["committed","committed","committed","committed","committed","committed","committed","committed"]`))
	if after := checkout(e); after != before {
		t.Fatalf("the main checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	d := showIsolated(e, o.RunID)
	if len(d.Worktrees) != 8 {
		t.Fatalf("%d kept worktrees, want 8", len(d.Worktrees))
	}
	for _, w := range d.Worktrees {
		i := strings.TrimPrefix(w.Label, "writer-")
		if w.Branch != "dynworkflow/"+o.RunID+"/writer-"+i || w.Base != base {
			t.Errorf("worktree %+v: want branch dynworkflow/%s/writer-%s from %s", w, o.RunID, i, base)
		}
		// Recoverable: the branch has the agent's file, on top of the base.
		if got := git(e, "show", w.Branch+":shared.txt"); got != "written by agent "+i {
			t.Errorf("%s: shared.txt = %q", w.Branch, got)
		}
		if got := git(e, "rev-parse", w.Branch+"^"); got != base {
			t.Errorf("%s: parent %s, want %s", w.Branch, got, base)
		}
	}
	// The listing shows all eight, unmerged, with their diff stats.
	r := e.DWOK("worktrees", o.RunID)
	if n := strings.Count(r.Stdout, "1 file, +1 -1  unmerged"); n != 8 {
		t.Errorf("worktrees lists %d unmerged one-line changes, want 8:\n%s", n, r.Stdout)
	}
	// The API has them too, per call and per run.
	s := e2etest.Serve(e)
	api, err := s.Client.Run(context.Background(), o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(api.Worktrees) != 8 || api.Worktrees[0].Branch != d.Worktrees[0].Branch || api.Worktrees[0].Head == "" {
		t.Errorf("GET /api/runs/%s: worktrees %+v", o.RunID, api.Worktrees)
	}
	for _, c := range api.Calls {
		if c.Worktree == nil || c.Worktree.Status != "kept" || c.Worktree.Files != 1 {
			t.Errorf("GET /api/runs/%s: call %s has worktree %+v", o.RunID, c.Path, c.Worktree)
		}
	}
	s.Signal(syscall.SIGINT)
	e2etest.ExpectCode(t, s.Wait(), 0)

	// Any of them can be taken.
	git(e, "stash", "-q", "--include-untracked")
	git(e, "merge", "-q", "--no-edit", d.Worktrees[3].Branch)
	if got, _ := os.ReadFile(filepath.Join(e.Dir, "shared.txt")); string(got) != "written by agent "+strings.TrimPrefix(d.Worktrees[3].Label, "writer-") {
		t.Errorf("after merging %s, shared.txt = %q", d.Worktrees[3].Branch, got)
	}
}

// Must-show 2, through the binary.
func TestAnIsolatedAgentThatChangesNothingLeavesNothing(t *testing.T) {
	e := gitEnv(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(e, "look.workflow.js", `export const meta = {name: "look", description: "reads only"}
return await agent("look", {label: "reader", isolation: "worktree"})`)
	o := e.RunCompleted(script, "--command-executor", `sh -c 'cat >/dev/null; cat a.txt'`, "--executor", "command")
	e2etest.SameJSON(t, "result", o.Result, json.RawMessage(`"a"`))
	if got := git(e, "branch", "--list", "dynworkflow/*"); got != "" {
		t.Errorf("branches left behind: %s", got)
	}
	if got := git(e, "worktree", "list"); strings.Count(got, "\n") != 0 {
		t.Errorf("worktrees left behind:\n%s", got)
	}
	if dirs, _ := filepath.Glob(filepath.Join(e.State, "projects", "*", "worktrees", "*")); len(dirs) != 0 {
		t.Errorf("directories left behind: %v", dirs)
	}
	d := showIsolated(e, o.RunID)
	if w := d.Calls[0].Worktree; w == nil || w.Status != "removed" {
		t.Errorf("the call's worktree: %+v, want removed", w)
	}
}

// Must-show 3: uncommitted and untracked edits survive a SIGKILL of
// dynworkflow mid-agent: after resume the interrupted call's partial edits
// are on a kept branch, and the re-run gets a fresh worktree.
func TestPartialEditsSurviveASIGKILL(t *testing.T) {
	e := gitEnv(t, map[string]string{"a.txt": "a\n"})
	flag := t.TempDir()
	// "fast" writes and answers at once. "slow", the first time, edits a
	// tracked file, creates an untracked one, tells the test, and hangs;
	// the second time it answers at once without touching anything.
	template := `sh -c 'p=$(cat); if [ "$p" = fast ]; then echo f > fast.txt; echo fast; exit 0; fi; ` +
		`if [ -e ` + flag + `/once ]; then echo again; exit 0; fi; ` +
		`echo partial >> a.txt; echo new > b.txt; touch ` + flag + `/once; exec sleep 60'`
	flags := []string{"--command-executor", template, "--executor", "command", "--concurrency", "2"}
	script := writeScript(e, "kill.workflow.js", `export const meta = {name: "kill", description: "one fast, one slow"}
return await parallel([() => agent("fast", {label: "fast", isolation: "worktree"}), () => agent("slow", {label: "slow", isolation: "worktree"})])`)

	before := e.JournalIDs()
	p := e.Start(append([]string{"run", script, "--json"}, flags...)...)
	id := p.WaitNewJournal(before)
	p.WaitFinished(e.JournalPath(id), 1)
	e2etest.WaitUntil(t, "the slow agent to make its edits", func() bool {
		_, err := os.Stat(filepath.Join(flag, "once"))
		return err == nil
	})
	p.Signal(syscall.SIGKILL)
	if r := p.Wait(); r.Signal != syscall.SIGKILL {
		t.Fatalf("not killed:\n%s", r)
	}
	// The edits are only in the directory now, and the listing says so.
	slowDir := ""
	for _, w := range showIsolated(e, id).Calls {
		if w.Worktree != nil && w.Worktree.Status == "active" {
			slowDir = w.Worktree.Dir
		}
	}
	if slowDir == "" {
		t.Fatal("show does not name the interrupted call's worktree")
	}
	if st := gittest.Git(t, slowDir, "status", "--porcelain"); !strings.Contains(st, "a.txt") || !strings.Contains(st, "b.txt") {
		t.Fatalf("the slow agent's edits are not in its worktree:\n%s", st)
	}
	if r := e.DWOK("worktrees", id); !strings.Contains(r.Stdout, "unsettled") {
		t.Errorf("worktrees does not call the interrupted one unsettled:\n%s", r.Stdout)
	}

	r := e.DW(append([]string{"resume", id, "--json"}, flags...)...)
	e2etest.ExpectCode(t, r, 0)
	o := e2etest.ParseOutcome(t, r)
	e2etest.SameJSON(t, "result", o.Result, json.RawMessage(`["fast","again"]`))
	if o.Stats.Replayed != 1 || o.Stats.Live != 1 {
		t.Errorf("replayed %d live %d, want the fast call replayed and the slow one run again", o.Stats.Replayed, o.Stats.Live)
	}
	d := showIsolated(e, id)
	var interrupted, fast *keptWorktree
	for i, w := range d.Worktrees {
		switch {
		case w.Interrupted:
			interrupted = &d.Worktrees[i]
		case w.Label == "fast":
			fast = &d.Worktrees[i]
		}
	}
	if interrupted == nil || interrupted.Dir != slowDir || !interrupted.Committed || interrupted.Files != 2 {
		t.Fatalf("kept worktrees %+v: want the slow call's, interrupted, its two files committed", d.Worktrees)
	}
	if got := git(e, "show", interrupted.Branch+":a.txt"); got != "a\npartial" {
		t.Errorf("a.txt on %s = %q", interrupted.Branch, got)
	}
	if got := git(e, "show", interrupted.Branch+":b.txt"); got != "new" {
		t.Errorf("b.txt on %s = %q", interrupted.Branch, got)
	}
	if fast == nil || git(e, "show", fast.Branch+":fast.txt") != "f" {
		t.Errorf("the fast call's kept branch is missing: %+v", d.Worktrees)
	}
	for _, c := range d.Calls {
		if strings.Contains(c.Path, "/1/") && (c.Worktree == nil || c.Worktree.Dir == slowDir || c.Worktree.Status != "removed") {
			t.Errorf("the re-run's worktree %+v: want a fresh one (not %s), removed as it changed nothing", c.Worktree, slowDir)
		}
	}
	if st := gittest.Git(t, slowDir, "status", "--porcelain"); st != "" {
		t.Errorf("the interrupted worktree still has uncommitted edits:\n%s", st)
	}
}

// Must-show 5: worktrees clean removes merged worktrees, and refuses
// unmerged work without --force.
func TestWorktreesCleanRefusesUnmergedWork(t *testing.T) {
	e := gitEnv(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(e, "two.workflow.js", `export const meta = {name: "two", description: "two writers"}
return await parallel(["one", "two"].map(n => () => agent(n, {label: n, isolation: "worktree"})))`)
	o := e.RunCompleted(script, "--command-executor", `sh -c 'n=$(cat); echo $n > $n.txt; echo $n'`, "--executor", "command")
	one, two := "dynworkflow/"+o.RunID+"/one", "dynworkflow/"+o.RunID+"/two"
	git(e, "merge", "-q", "--no-edit", one)

	r := e.DWOK("worktrees", "clean")
	if !strings.Contains(r.Stdout, "removed "+one) || !strings.Contains(r.Stdout, "kept    "+two+": not merged") {
		t.Errorf("clean without names:\n%s", r.Stdout)
	}
	r = e.DW("worktrees", "clean", o.RunID, "two")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stderr, "refusing to remove unmerged work without --force") {
		t.Errorf("no refusal on stderr:\n%s", r)
	}
	if got := git(e, "branch", "--list", two); got == "" {
		t.Fatal("the unmerged branch was deleted without --force")
	}
	// Uncommitted edits in a kept worktree are refused too.
	var dir string
	for _, w := range showIsolated(e, o.RunID).Worktrees {
		if w.Branch == two {
			dir = w.Dir
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(e, "merge", "-q", "--no-edit", two)
	r = e.DW("worktrees", "clean", o.RunID, two)
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stdout, "uncommitted edits") {
		t.Errorf("clean of a worktree with uncommitted edits:\n%s", r)
	}
	r = e.DWOK("worktrees", "clean", two, "--force")
	if !strings.Contains(r.Stdout, "removed "+two) {
		t.Errorf("clean --force:\n%s", r.Stdout)
	}
	if got := git(e, "branch", "--list", "dynworkflow/*"); got != "" {
		t.Errorf("branches left: %s", got)
	}
	if r := e.DWOK("worktrees"); r.Stdout != "" || !strings.Contains(r.Stderr, "no kept worktrees") {
		t.Errorf("worktrees after clean:\n%s", r)
	}
}

// Without git, an isolated call pauses the run with what to do; it never
// runs in the shared checkout.
func TestIsolationWithoutGitPausesTheRun(t *testing.T) {
	e := gitEnv(t, map[string]string{"a.txt": "a\n"})
	bin := t.TempDir()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sh, filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	script := writeScript(e, "one.workflow.js", `export const meta = {name: "one", description: "one writer"}
return await agent("x", {isolation: "worktree"})`)
	r := e.DW("run", script, "--json", "--command-executor", `sh -c 'echo x > out.txt; echo done'`, "--executor", "command")
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	if !strings.Contains(o.PauseReason, "no git binary on PATH") {
		t.Errorf("pause reason %q", o.PauseReason)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "out.txt")); !os.IsNotExist(err) {
		t.Error("the agent ran in the shared checkout")
	}
}
