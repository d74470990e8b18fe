package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// A cloned repository ships .dynworkflow/executors.json: a command
// executor as the default, a codex binary of its own, and a pi that is
// sh -c. Nothing it names may run, not even for doctor's --version, until
// the user allows the file; every command says so in one line naming the
// file and the command that allows it. Once allowed it is used; changed
// (by a git pull, by an agent), it is refused again.
func TestAProjectsExecutorConfigRunsNothingUntilAllowed(t *testing.T) {
	e := e2etest.NewEnv(t)
	ran := t.TempDir()
	mark := func(name string) string {
		return fmt.Sprintf("#!/bin/sh\necho \"$@\" >> %s\ncat >/dev/null\necho hi from %s\n", filepath.Join(ran, name), name)
	}
	for name, text := range map[string]string{"tools/helper.sh": mark("helper"), "tools/codex": mark("codex")} {
		if err := os.Chmod(e.Write(name, text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := `{"defaultExecutor": "helper",
  "commands": {"helper": "./tools/helper.sh -- {prompt}"},
  "executors": {"codex": {"binary": "./tools/codex"},
                "pi": {"binary": "sh", "args": ["-c", "echo pi >> ` + filepath.Join(ran, "pi") + `; echo hi"]}}}`
	path := e.Write(".dynworkflow/executors.json", config)
	// The user's own script, outside the repository.
	own := writeScript(e, "own.workflow.js", quickWorkflow)
	nothingRan := func(when string) {
		t.Helper()
		if entries, _ := os.ReadDir(ran); len(entries) > 0 {
			var names []string
			for _, en := range entries {
				names = append(names, en.Name())
			}
			t.Fatalf("%s ran what the project's file names: %v", when, names)
		}
	}
	oneLine := func(r e2etest.Result, changed bool) {
		t.Helper()
		var lines []string
		for _, l := range strings.Split(r.Stdout+r.Stderr, "\n") {
			if strings.Contains(l, "is not allowed") {
				lines = append(lines, l)
			}
		}
		state := "new to you"
		if changed {
			state = "changed since you allowed it"
		}
		if len(lines) != 1 || !strings.Contains(lines[0], path) || !strings.Contains(lines[0], state) ||
			!strings.Contains(lines[0], "dynworkflow allow --cwd "+e.Dir) {
			t.Errorf("want one line naming %s, saying %q and giving the command that allows it:\n%s", path, state, r)
		}
	}

	r := e.DW("doctor")
	e2etest.ExpectCode(t, r, 1)
	nothingRan("doctor")
	oneLine(r, false)
	if strings.Contains(r.Stdout, "helper") || strings.Contains(r.Stdout, "tools/codex") {
		t.Errorf("doctor reports the project file's executors as configured:\n%s", r.Stdout)
	}

	for _, args := range [][]string{{"run", own}, {"run", own, "--executor", "pi"}, {"run", own, "--executor", "codex"}} {
		r := e.DW(args...)
		e2etest.ExpectCode(t, r, 1)
		nothingRan(strings.Join(args, " "))
		oneLine(r, false)
	}
	r = e.DW("serve", "--port", "0")
	e2etest.ExpectCode(t, r, 1)
	nothingRan("serve")
	oneLine(r, false)
	// A command that only looks goes on, after the line.
	r = e.DWOK("list")
	oneLine(r, false)

	// The user reviews the file and allows it.
	r = e.DWOK("allow")
	for _, want := range []string{"allowed " + path, "command helper: ./tools/helper.sh -- {prompt}", "codex binary: ./tools/codex", "pi args: -c"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("allow does not show %q:\n%s", want, r.Stdout)
		}
	}
	if r := e.DWOK("allow", "--list"); !strings.Contains(r.Stdout, path) || !strings.Contains(r.Stdout, "allowed") {
		t.Errorf("allow --list:\n%s", r)
	}
	r = e.DWOK("run", own)
	// Its template passes the prompt as an argument, readable by any
	// local user: the run says so.
	if !strings.Contains(r.Stderr, "command executor helper passes the prompt as an argument") || !strings.Contains(r.Stderr, "{prompt_file}") {
		t.Errorf("no warning about {prompt} in the arguments:\n%s", r)
	}
	if b, err := os.ReadFile(filepath.Join(ran, "helper")); err != nil || !strings.Contains(string(b), "quick") {
		t.Fatalf("the allowed command executor did not run: %q, %v", b, err)
	}
	if err := os.RemoveAll(ran); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ran, 0o755); err != nil {
		t.Fatal(err)
	}

	// An agent (or a pull) changes the file: refused again.
	e.Write(".dynworkflow/executors.json", strings.Replace(config, "-- {prompt}", "--evil -- {prompt}", 1))
	r = e.DW("run", own)
	e2etest.ExpectCode(t, r, 1)
	nothingRan("run of a changed file")
	oneLine(r, true)
	if r := e.DWOK("allow", "--list"); !strings.Contains(r.Stdout, "changed or gone since allowed") {
		t.Errorf("allow --list does not say the file changed:\n%s", r)
	}

	// deny withdraws an approval.
	e.Write(".dynworkflow/executors.json", config)
	e.DWOK("run", own)
	e.DWOK("deny")
	r = e.DW("run", own)
	e2etest.ExpectCode(t, r, 1)
	oneLine(r, false)
}

// A repository's .dynworkflow/backend.json would send a plain run's
// script, args and prompts to a server it names, and make a worker without
// flags poll it. Until the user allows it, nothing connects there.
func TestAProjectsBackendFileSendsNothingUntilAllowed(t *testing.T) {
	e := e2etest.NewEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	path := e.Write(".dynworkflow/backend.json", fmt.Sprintf(`{"backend":"temporal","temporal":{"address":%q}}`, ln.Addr().String()))
	own := writeScript(e, "own.workflow.js", quickWorkflow)
	// The worker is the build with Temporal's: this binary hands it over.
	e2etest.NeedCompanion(t)
	for _, args := range [][]string{{"run", own, "--args", `{"apiKey":"SECRET-ARG"}`}, {"worker"}} {
		r := e.DW(args...)
		e2etest.ExpectCode(t, r, 1)
		if !strings.Contains(r.Stderr, path+" is not allowed") || !strings.Contains(r.Stderr, "dynworkflow allow --cwd "+e.Dir) {
			t.Errorf("%s: want the line naming %s and the command that allows it:\n%s", args[0], path, r)
		}
		// The process has exited: a connection it made is waiting.
		if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if c, err := ln.Accept(); err == nil {
			c.Close()
			t.Fatalf("%s connected to the server the project's backend file names", args[0])
		}
	}
	// A command that only looks ignores the file, after the line: a run
	// id the project does not have is not looked for on the server.
	r := e.DW("show", "not-here")
	if !strings.Contains(r.Stderr, path+" is not allowed") || !strings.Contains(r.Stderr, "not-here") {
		t.Errorf("show does not say the backend file is ignored:\n%s", r)
	}
	if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Fatal("show connected to the server the project's backend file names")
	}
}

// A repository's .dynworkflow/workflows/review.workflow.js has the name of
// the user's own saved workflow review: run review refuses it, naming
// both, until the user allows it. A project workflow with a name of its
// own needs nothing.
func TestAProjectsWorkflowDoesNotShadowTheUsersUntilAllowed(t *testing.T) {
	e := e2etest.NewEnv(t)
	users := filepath.Join(e.State, "saved", "review.workflow.js")
	if err := os.MkdirAll(filepath.Dir(users), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(users, []byte(`export const meta = {name: "review", description: "mine"}
return "the user's review"`), 0o644); err != nil {
		t.Fatal(err)
	}
	project := e.Write(".dynworkflow/workflows/review.workflow.js", `export const meta = {name: "review", description: "the repository's"}
return "the repository's review"`)
	e.Write(".claude/workflows/other.workflow.js", `export const meta = {name: "other", description: "its own name"}
return "other"`)
	r := e.DW("run", "review", "--json")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stderr, project+" is not allowed") || !strings.Contains(r.Stderr, users) || !strings.Contains(r.Stderr, "dynworkflow allow --cwd") {
		t.Errorf("want one line naming the project's workflow, the user's and the command that allows it:\n%s", r)
	}
	if o := e2etest.ParseOutcome(t, e.DWOK("run", "other", "--json")); string(o.Result) != `"other"` {
		t.Errorf("a project workflow with its own name: %s", o.Result)
	}
	r = e.DWOK("allow")
	if !strings.Contains(r.Stdout, "allowed "+project) {
		t.Errorf("allow:\n%s", r)
	}
	var result string
	if err := json.Unmarshal(e2etest.ParseOutcome(t, e.DWOK("run", "review", "--json")).Result, &result); err != nil || result != "the repository's review" {
		t.Errorf("after allow, run review gave %q (%v)", result, err)
	}
}

// An agent under workspace-write writes .dynworkflow/executors.json in
// the project (a wrapper as the default executor); the user's next run
// must not run it.
func TestAnAgentsExecutorConfigIsNotRunByTheNextRun(t *testing.T) {
	e := e2etest.NewEnv(t)
	ran := t.TempDir()
	agent := agentScript(e, "agent.sh", `cat >/dev/null
mkdir -p .dynworkflow tools
printf '#!/bin/sh\necho wrapped >> `+filepath.Join(ran, "wrapper")+`\ncat\n' > tools/wrap.sh
chmod +x tools/wrap.sh
printf '{"defaultExecutor": "wrap", "commands": {"wrap": "./tools/wrap.sh"}}' > .dynworkflow/executors.json
echo done
`)
	own := writeScript(e, "own.workflow.js", quickWorkflow)
	e.DWOK("run", own, "--command-executor", "agent="+agent, "--executor", "agent")
	if _, err := os.Stat(filepath.Join(e.Dir, ".dynworkflow", "executors.json")); err != nil {
		t.Fatalf("the agent did not write the file: %v", err)
	}
	r := e.DW("run", own)
	e2etest.ExpectCode(t, r, 1)
	if entries, _ := os.ReadDir(ran); len(entries) > 0 {
		t.Fatal("the next run ran the wrapper an agent configured")
	}
	if !strings.Contains(r.Stderr, filepath.Join(e.Dir, ".dynworkflow", "executors.json")+" is not allowed") {
		t.Errorf("no line naming the file:\n%s", r)
	}
}
