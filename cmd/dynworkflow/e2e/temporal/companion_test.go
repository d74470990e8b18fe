package temporal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// The default build leaves the Temporal SDK out and hands what involves
// Temporal to its companion, dynworkflow-temporal. These tests hold it to
// that through the real binaries: what it links, what it does without the
// companion, and that a command handed over behaves as if typed to the
// companion.

// installCommand is what the default build tells a user to run when the
// companion is missing.
const installCommand = `go build -tags temporal -o "$(go env GOPATH)/bin/dynworkflow-temporal" ./cmd/dynworkflow`

// TestDefaultBuildLinksNoTemporal reads the module list Go records in the
// binary: the default build must not carry the Temporal SDK (about 20 MB of
// binary and 10 MB of memory at every start).
func TestDefaultBuildLinksNoTemporal(t *testing.T) {
	out, err := exec.Command(e2etest.GoTool(), "version", "-m", e2etest.Binary()).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("github.com/spf13/cobra")) {
		t.Fatalf("go version -m lists no dependencies:\n%s", out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "go.temporal.io") {
			t.Errorf("the default build links %s", strings.TrimSpace(line))
		}
	}
}

// leanAlone puts the default build in a directory of its own, with a PATH
// on which no companion is found, and returns the path it runs from.
func leanAlone(t *testing.T, e *e2etest.Env, companion string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "dynworkflow")
	linkOrCopy(t, e2etest.Binary(), bin)
	if companion != "" {
		linkOrCopy(t, companion, filepath.Join(dir, "dynworkflow-temporal"))
	}
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "dynworkflow-temporal")); err != nil {
			path = append(path, d)
		}
	}
	e.Bin = bin
	e.Environ = append(e.Environ, "PATH="+strings.Join(path, string(filepath.ListSeparator)))
	return bin
}

// linkOrCopy makes dst the file src: a hard link, or a copy across file
// systems.
func linkOrCopy(t *testing.T, src, dst string) {
	t.Helper()
	if os.Link(src, dst) == nil {
		return
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// putTemporalRun records a run on Temporal in the project's index, as the
// companion does when it starts one. The address answers nothing: the
// default build must never need to reach it.
func putTemporalRun(t *testing.T, e *e2etest.Env, id, status string) {
	t.Helper()
	now := time.Now().UTC()
	err := index.Open(filepath.Dir(e.RunsDir())).Put(index.Entry{
		RunID:   id,
		Config:  index.Config{Address: "127.0.0.1:9", Namespace: index.DefaultNamespace, TaskQueue: index.DefaultTaskQueue},
		Summary: store.Summary{RunID: id, Name: "remote", Status: status, StartedAt: now, UpdatedAt: now},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWithoutCompanion runs the default build where no companion is
// installed, in a project with a local run and a run on Temporal: every
// command that needs Temporal exits 64 and says how to install the
// companion; list shows the local runs and says how many it leaves out;
// the local run is untouched.
func TestWithoutCompanion(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	leanAlone(t, e, "")
	script := e.Write("one.workflow.js", `export const meta = { name: 'one', description: 'one agent' }
return await agent('hello')
`)
	local := e.RunCompleted(script)
	const remote = "zz-temporal-run"
	putTemporalRun(t, e, remote, "running")

	t.Run("list", func(t *testing.T) {
		for _, flags := range [][]string{nil, {"--json"}} {
			r := e.DWOK(append([]string{"list"}, flags...)...)
			if !strings.Contains(r.Stdout, local.RunID) || strings.Contains(r.Stdout, remote) {
				t.Errorf("want the local run listed and not the one on Temporal:\n%s", r)
			}
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "1 run on Temporal is not shown") || !strings.Contains(lines[0], installCommand) {
				t.Errorf("want one warning line that counts the run on Temporal and says how to install the companion:\n%s", r)
			}
		}
	})

	backendFile := `{"backend": "temporal"}`
	cases := []struct {
		name    string
		Args    []string
		Environ []string
		file    string // .dynworkflow/backend.json
	}{
		{name: "show", Args: []string{"show", remote}},
		{name: "show a prefix", Args: []string{"show", "zz-temp"}},
		{name: "show last", Args: []string{"show", "last"}},
		{name: "resume", Args: []string{"resume", remote}},
		{name: "pause", Args: []string{"pause", remote}},
		{name: "stop", Args: []string{"stop", remote}},
		{name: "delete", Args: []string{"delete", remote}},
		{name: "checkpoints", Args: []string{"checkpoints"}},
		{name: "respond", Args: []string{"respond", "cp-1", "yes"}},
		{name: "serve", Args: []string{"serve"}},
		{name: "worker", Args: []string{"worker", "--temporal-address", "127.0.0.1:9"}},
		{name: "run --backend temporal", Args: []string{"run", script, "--backend", "temporal"}},
		{name: "run with DYNWORKFLOW_BACKEND", Args: []string{"run", script}, Environ: []string{"DYNWORKFLOW_BACKEND=temporal"}},
		{name: "run with backend.json", Args: []string{"run", script}, file: backendFile},
		{name: "show an unknown id with backend.json", Args: []string{"show", "not-here"}, file: backendFile},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bf := filepath.Join(e.Dir, ".dynworkflow", "backend.json")
			if c.file != "" {
				e.WriteAllowed(".dynworkflow/backend.json", c.file)
				defer os.Remove(bf)
			}
			saved := e.Environ
			e.Environ = append(append([]string{}, e.Environ...), c.Environ...)
			defer func() { e.Environ = saved }()
			r := e.DW(append(c.Args, "--json")...)
			e2etest.ExpectCode(t, r, 64)
			if !strings.Contains(r.Stderr, "has no Temporal client") || !strings.Contains(r.Stderr, installCommand) {
				t.Errorf("want the reason and the install command:\n%s", r)
			}
			var body struct {
				Error struct{ Code string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &body); err != nil || body.Error.Code != "temporal_not_installed" {
				t.Errorf("want the error code temporal_not_installed in --json (%v):\n%s", err, r)
			}
		})
	}

	if d := e.Show(local.RunID); d.Summary.Status != "completed" {
		t.Errorf("the local run after all that: %+v", d.Summary)
	}
	if ids := e.JournalIDs(); len(ids) != 1 {
		t.Errorf("want only the first local run, found %v", ids)
	}
}

// TestCompanionWithoutTemporal installs a default build as the companion:
// the command is handed over once, and the second build, seeing that it was
// handed the command, fails instead of handing it back.
func TestCompanionWithoutTemporal(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	script := e.Write("one.workflow.js", `export const meta = { name: 'one', description: 'one agent' }
return await agent('hello')
`)
	e.RunCompleted(script)
	putTemporalRun(t, e, "zz-temporal-run", "completed")
	bin := leanAlone(t, e, e2etest.Binary())
	r := e.DW("show", "zz-temporal-run")
	e2etest.ExpectCode(t, r, 64)
	want := fmt.Sprintf("%s handed this command to %s as its companion dynworkflow-temporal, which is a build without Temporal too",
		bin, filepath.Join(filepath.Dir(bin), "dynworkflow-temporal"))
	if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, installCommand) {
		t.Fatalf("want %q and the install command:\n%s", want, r)
	}
}

// TestHandedToCompanion drives Temporal through the default build with the
// companion next to it: the worker and the run are the companion's
// processes under the pid the user started, a script on standard input
// reaches it, exit codes come back, list and show see the run, and the
// companion on its own (the one-binary install) sees the same.
func TestHandedToCompanion(t *testing.T) {
	t.Parallel()
	e := newTemporalEnv(t)
	companionBin, _ := e2etest.Companion()
	// The agents report whether they inherited the hand-over marker.
	w := e.startWorker(`--command-executor=env=sh -c 'echo "marker:$DYNWORKFLOW_HANDED_OVER."'`)
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", w.p.Cmd.Process.Pid)); err == nil && exe != companionBin {
		t.Errorf("the worker runs %s, not the companion %s", exe, companionBin)
	}

	run := func(stdin string, flags ...string) e2etest.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), e2etest.CmdTimeout)
		defer cancel()
		args := append([]string{"run", "-", "--json"}, e.runFlags(flags...)...)
		cmd := e.Command(ctx, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		r, err := e2etest.ResultOf(args, cmd, cmd.Run(), stdout.String(), stderr.String())
		if err != nil {
			t.Fatal(err)
		}
		e.CheckRace(r)
		return r
	}
	r := run(`export const meta = { name: 'piped', description: 'read from stdin' }
return await agent('who am I?')
`, "--executor", "env")
	e2etest.ExpectCode(t, r, 0)
	o := e2etest.ParseOutcome(t, r)
	if o.Status != "completed" || !strings.Contains(string(o.Result), "marker:.") {
		t.Fatalf("a script on stdin through the default build: %s", r)
	}
	failed := run(`export const meta = { name: 'failing', description: 'throws' }
throw new Error('on purpose')
`)
	e2etest.ExpectCode(t, failed, 1)

	if s := e.Listed(o.RunID); s.Status != "completed" || s.Name != "piped" {
		t.Errorf("list through the default build: %+v", s)
	}
	if d := e.Show(o.RunID[:len(o.RunID)-3]); d.Summary.RunID != o.RunID || len(d.Calls) != 1 {
		t.Errorf("show of a prefix through the default build: %+v", d)
	}
	full := &e2etest.Env{T: t, Dir: e.Dir, State: e.State, Config: e.Config, Bin: companionBin}
	if s := full.Listed(o.RunID); s.Status != "completed" {
		t.Errorf("list by the companion itself: %+v", s)
	}
}
