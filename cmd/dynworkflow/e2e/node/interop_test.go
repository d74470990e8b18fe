package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/nodeseed"
)

// The Node runtime (npm @fish59fish/dynamic-workflows, pinned in .ci/run)
// and dynworkflow share ~/.pi/workflows. These tests run both, for real,
// over one state root.

// nodeSeed is a way to run the Node runtime: node and its package.
type nodeSeed struct {
	T    *testing.T
	node string
	pkg  string // .../node_modules/@fish59fish/dynamic-workflows
	Bin  string // a directory with a fake codex, first on its PATH
}

// findNodeSeed finds node and the package, skipping the test when either
// is missing, failing under CI=true, where .ci/run installs them.
func findNodeSeed(t *testing.T) *nodeSeed {
	t.Helper()
	seed := nodeseed.Find(t)
	bin := t.TempDir()
	// The Node runtime's default executor is Pi, which needs its SDK: its
	// runs here use codex, played by a script that answers in codex's JSONL.
	fake := `#!/bin/sh
if [ "$1" = "--version" ]; then echo "codex-cli 0.0.0 (interop fake)"; exit 0; fi
last=$(cat | tail -n 1 | tr -d '"\\')
printf '{"type":"thread.started","thread_id":"fake"}\n'
printf '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"ECHO: %s"}}\n' "$last"
printf '{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":5,"output_tokens":10}}\n'
`
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	// The Node runtime's CLI gives a live server 750 ms to answer its
	// health check (discoverStandaloneRuntime's default) and otherwise
	// runs locally: on a loaded machine its own start of fetch can take
	// longer. Its CLI runs here with that one timer stretched, so that the
	// tests do not depend on the machine being idle.
	patience := `const realSetTimeout = globalThis.setTimeout;
globalThis.setTimeout = function (fn, ms, ...rest) { return realSetTimeout(fn, ms === 750 ? 30000 : ms, ...rest); };
`
	if err := os.WriteFile(filepath.Join(bin, "patience.mjs"), []byte(patience), 0o644); err != nil {
		t.Fatal(err)
	}
	return &nodeSeed{T: t, node: seed.Node, pkg: seed.Pkg, Bin: bin}
}

// run runs the Node runtime's CLI in e's project and state root.
func (n *nodeSeed) run(e *e2etest.Env, args ...string) e2etest.Result {
	n.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2etest.CmdTimeout)
	defer cancel()
	full := append([]string{"--import", "file://" + filepath.Join(n.Bin, "patience.mjs"), filepath.Join(n.pkg, "dist", "standalone-cli.js")}, args...)
	full = append(full, "--state-dir", e.State, "--cwd", e.Dir)
	cmd := exec.CommandContext(ctx, n.node, full...)
	cmd.Dir = e.Dir
	cmd.Env = append(os.Environ(), "PATH="+n.Bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DYNAMIC_WORKFLOWS_HOME="+e.State)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r, err := e2etest.ResultOf(append([]string{"(node)"}, args...), cmd, err, stdout.String(), stderr.String())
	if err != nil {
		n.T.Fatalf("node dynworkflow %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// projectKeys asks the Node runtime for the project id of each directory.
func (n *nodeSeed) projectKeys(dirs []string) []string {
	n.T.Helper()
	in, _ := json.Marshal(dirs)
	script := `import { workflowProjectKey } from ` + jsString(filepath.Join(n.pkg, "dist", "workflow-paths.js")) + `;
process.stdout.write(JSON.stringify(JSON.parse(process.argv[1]).map(workflowProjectKey)));`
	out, err := exec.Command(n.node, "--input-type=module", "-e", script, string(in)).Output()
	if err != nil {
		n.T.Fatalf("node workflowProjectKey: %v", err)
	}
	var keys []string
	if err := json.Unmarshal(out, &keys); err != nil || len(keys) != len(dirs) {
		n.T.Fatalf("node workflowProjectKey gave %s (%v)", out, err)
	}
	return keys
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestProjectIDIsTheNodeRuntimes(t *testing.T) {
	n := findNodeSeed(t)
	dirs := []string{"/", "/work/My_Proj.v2", "/work/My Project!!", "/x/UPPER lower", "/x/a - b", "/x/--a--",
		"/x/.hidden", "/x/...", "/x/trailing/", "/x/with.dots_and_underscores", "/x/Éclair", "/x/straße",
		"/x/İstanbul", "/x/Kelvin\u212a", "/x/日本語", "/x/emoji 🙂 dir", "/x/cafe\u0301", "/x/tab\there",
		"/x/" + strings.Repeat("Long_Name.", 8), "/x/" + strings.Repeat("é", 60), "/x/a/../b", "/x//double//slash"}
	keys := n.projectKeys(dirs)
	for i, dir := range dirs {
		if got := store.ProjectID(dir); got != keys[i] {
			t.Errorf("ProjectID(%q) = %q; the Node runtime says %q", dir, got, keys[i])
		}
	}
}

const interopOurs = `export const meta = {
  name: 'go_side',
  description: 'A run of dynworkflow',
  phases: [{ title: 'Ask' }, { title: 'Check' }],
}
const hello = await agent('Say hello to the Node runtime', { label: 'hello', phase: 'Ask' })
const verdict = await agent('Is this fine?', {
  label: 'verdict', phase: 'Check',
  schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
})
const both = await parallel([1, 2].map(i => () => agent('part ' + i, { phase: 'Check' })))
return { hello, verdict, both }
`

const interopNodes = `export const meta = { name: "node_side", description: "A run of the Node runtime", phases: [{ title: "Ask" }] };
const a = await agent("Say hi", { label: "hi" });
const b = await parallel([1, 2].map((i) => () => agent("par " + i, { label: "p" + i })));
return { a, b };
`

// Both runtimes in one state root, for a project named with '_' and '.':
// each lists and shows the other's runs, and both use one project directory.
func TestInteropWithTheNodeRuntime(t *testing.T) {
	t.Parallel()
	n := findNodeSeed(t)
	e := e2etest.NewEnv(t)
	e.Dir = filepath.Join(e.Dir, "My_Proj.v2")
	if err := os.Mkdir(e.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ours := e.RunCompleted(e.Write("ours.workflow.js", interopOurs))
	r := n.run(e, "run", e.Write("node.workflow.js", interopNodes), "--executor", "codex", "--json")
	e2etest.ExpectCode(t, r, 0)
	var nodeRun struct {
		RunID  string `json:"runId"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &nodeRun); err != nil || nodeRun.Status != "completed" {
		t.Fatalf("the Node runtime's run did not complete (%v):\n%s", err, r)
	}

	// One project directory, the one the Node runtime computes.
	projects, _ := filepath.Glob(filepath.Join(e.State, "projects", "*"))
	want := filepath.Join(e.State, "projects", n.projectKeys([]string{e.Dir})[0])
	if len(projects) != 1 || projects[0] != want {
		t.Fatalf("project directories %v, want only %s", projects, want)
	}
	for _, f := range []string{ours.RunID + ".jsonl", ours.RunID + ".json", nodeRun.RunID + ".json"} {
		if _, err := os.Stat(filepath.Join(want, "runs", f)); err != nil {
			t.Errorf("%s is not in the shared project directory: %v", f, err)
		}
	}

	t.Run("the Node runtime lists and shows ours", func(t *testing.T) {
		r := n.run(e, "list", "--json")
		e2etest.ExpectCode(t, r, 0)
		var listed []struct {
			RunID               string   `json:"runId"`
			WorkflowName        string   `json:"workflowName"`
			Status              string   `json:"status"`
			Phases              []string `json:"phases"`
			AgentCount          int      `json:"agentCount"`
			CompletedAgentCount int      `json:"completedAgentCount"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &listed); err != nil {
			t.Fatalf("node list --json: %v\n%s", err, r)
		}
		found := false
		for _, s := range listed {
			if s.RunID != ours.RunID {
				continue
			}
			found = true
			if s.WorkflowName != "go_side" || s.Status != "completed" || s.AgentCount != 4 || s.CompletedAgentCount != 4 ||
				strings.Join(s.Phases, ",") != "Ask,Check" {
				t.Errorf("node list shows our run as %+v", s)
			}
		}
		if !found {
			t.Fatalf("node list --json misses our run %s:\n%s", ours.RunID, r.Stdout)
		}
		if r := n.run(e, "list"); r.Code != 0 || !strings.Contains(r.Stdout, ours.RunID+"\tcompleted") {
			t.Errorf("node list does not show our run:\n%s", r)
		}

		r = n.run(e, "show", ours.RunID, "--json")
		e2etest.ExpectCode(t, r, 0)
		var shown struct {
			Status string `json:"status"`
			Agents []struct {
				Label  string          `json:"label"`
				Prompt string          `json:"prompt"`
				Status string          `json:"status"`
				Result json.RawMessage `json:"result"`
			} `json:"agents"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &shown); err != nil {
			t.Fatalf("node show --json: %v\n%s", err, r)
		}
		if shown.Status != "completed" || len(shown.Agents) != 4 {
			t.Fatalf("node show --json: status %q, %d agents:\n%s", shown.Status, len(shown.Agents), r.Stdout)
		}
		if a := shown.Agents[0]; a.Label != "hello" || a.Prompt != "Say hello to the Node runtime" || a.Status != "done" || len(a.Result) == 0 {
			t.Errorf("node show's first agent: %+v", a)
		}
		if r := n.run(e, "show", ours.RunID); r.Code != 0 || !strings.Contains(r.Stdout, "Say hello to the Node runtime") {
			t.Errorf("node show does not print our run's prompts:\n%s", r)
		}
		// It must not run ours again from the start.
		if r := n.run(e, "resume", ours.RunID); r.Code == 0 {
			t.Errorf("the Node runtime resumed our run:\n%s", r)
		}
	})

	t.Run("we list and show the Node runtime's", func(t *testing.T) {
		var theirs e2etest.Summary
		var foreign string
		r := e.DWOK("list", "--json")
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil {
			t.Fatal(err)
		}
		for _, item := range raw {
			var s struct {
				e2etest.Summary
				Foreign string `json:"foreign"`
			}
			_ = json.Unmarshal(item, &s)
			if s.RunID == nodeRun.RunID {
				theirs, foreign = s.Summary, s.Foreign
			}
		}
		if theirs.RunID == "" {
			t.Fatalf("list --json misses the Node runtime's run:\n%s", r)
		}
		if theirs.Status != "completed" || theirs.Name != "node_side" || theirs.Stats.Agents != 3 || foreign != "node" {
			t.Errorf("list shows the Node runtime's run as %+v, foreign %q", theirs, foreign)
		}
		d := e.Show(nodeRun.RunID)
		if len(d.Calls) != 3 {
			t.Fatalf("show --json has %d calls, want 3: %+v", len(d.Calls), d.Calls)
		}
		for _, c := range d.Calls {
			var text string
			_ = json.Unmarshal(c.Result, &text)
			if c.Status != "done" || c.Prompt == "" || !strings.HasPrefix(text, "ECHO: ") {
				t.Errorf("call %+v", c)
			}
		}
		r = e.DW("resume", nodeRun.RunID)
		if r.Code == 0 || !strings.Contains(r.Stderr, "belongs to the Node runtime") {
			t.Errorf("resume of the Node runtime's run:\n%s", r)
		}
		if r := e.DW("delete", nodeRun.RunID); r.Code == 0 {
			t.Errorf("delete of the Node runtime's run succeeded:\n%s", r)
		}
		if _, err := os.Stat(filepath.Join(want, "runs", nodeRun.RunID+".json")); err != nil {
			t.Errorf("the Node runtime's run file is gone: %v", err)
		}
	})

	// While our run executes, the Node runtime's list (which marks runs
	// left running by a dead process as paused, taking their lock file)
	// sees it owned by a live process and leaves it alone.
	t.Run("a run of ours executing while the Node runtime lists", func(t *testing.T) {
		slow := e.Write("slow.workflow.js", `export const meta = { name: 'slow', description: 'd' }
return await agent('take a while [gate:slow]', { executor: 'gate' })
`)
		gates := e2etest.NewGates(t)
		before := e.JournalIDs()
		p := e.Start("run", slow, "--json", gates.Flag)
		id := p.WaitNewJournal(before)
		e2etest.WaitUntil(t, "the slow run's snapshot", func() bool {
			_, err := os.Stat(filepath.Join(want, "runs", id+".json"))
			return err == nil
		})
		r := n.run(e, "list", "--json")
		e2etest.ExpectCode(t, r, 0)
		if !strings.Contains(r.Stdout, `"runId": "`+id+`"`) {
			t.Errorf("node list --json misses the running run:\n%s", r.Stdout)
		}
		gates.Release("slow")
		if res := p.Wait(); res.Code != 0 {
			t.Fatalf("our run failed after the Node runtime listed it:\n%s", res)
		}
		if s := e.Listed(id); s.Status != "completed" {
			t.Errorf("our run ended %s", s.Status)
		}
	})
}
