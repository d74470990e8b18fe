package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/web"
)

// The Node runtime's npm package ships its own HTTP client,
// StandaloneRuntimeClient (dist/standalone-client.js), and its CLI finds a
// project's live server through runtime.json (discoverStandaloneRuntime).
// These tests drive that client, unchanged, against the Node runtime's own
// serve and against ours, and compare what each of its methods did.

// seedDriver is a Node program that drives StandaloneRuntimeClient through
// every method and prints one row per call: the method, what came of it
// (normalised so that the two servers can be compared: statuses, counts,
// labels, the shape of results, never the agents' text), and a detail
// for the reader.
const seedDriver = `
import { discoverStandaloneRuntime } from CLIENT;
const [cwd, executor] = process.argv.slice(2);
const rows = [];
const row = (method, outcome, detail = "") => rows.push({ method, outcome, detail: String(detail).slice(0, 160) });
const done = () => { process.stdout.write(JSON.stringify(rows) + "\n"); process.exit(0); };
async function step(method, fn, judge) {
  try {
    const value = await fn();
    const [outcome, detail] = judge(value);
    row(method, outcome, detail);
    return value;
  } catch (error) {
    row(method, "threw", error && error.message);
    return undefined;
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn) {
  for (let i = 0; i < 600; i++) {
    const v = await fn();
    if (v) return v;
    await sleep(50);
  }
  throw new Error("timed out waiting for " + what);
}
const agentsOf = (run) => run.agents.length + " agents " + run.agents.map((a) => a.label + ":" + a.status).sort().join(",");
const shape = (v) => v === null || typeof v !== "object" ? typeof v : "{" + Object.keys(v).sort().map((k) => k + ":" + shape(v[k])).join(",") + "}";

const client = await discoverStandaloneRuntime(cwd, { timeoutMs: 5000 });
row("discoverStandaloneRuntime", client ? "found" : "null");
if (!client) done();
const options = { defaultExecutor: executor, concurrency: 2, agentRetries: 0 };

await step("health", () => client.health(), (h) => [h.ok && h.protocolVersion === 1 && h.cwd === cwd ? "ok" : "bad", JSON.stringify(h)]);
await step("overview", () => client.overview(), (o) => [Array.isArray(o.runs) && Array.isArray(o.checkpoints) && o.project.cwd === cwd &&
  o.runtime.protocolVersion === 1 ? "ok" : "bad", o.runs.length + " runs"]);
await step("state", () => client.state(), (s) => [Array.isArray(s.runs) && Array.isArray(s.checkpoints) && s.project.cwd === cwd ? "ok" : "bad", s.runs.length + " runs"]);

// A run of agents, followed to its end.
const agents = await step("startRun", () => client.startRun({ script: ` + "`${AGENTS}`" + `, args: { who: "seed" }, options }),
  (r) => [typeof r.runId === "string" && r.runId !== "" ? "runId" : "bad", r.runId]);
await step("waitForSettled", () => client.waitForSettled(agents.runId, { pollIntervalMs: 50 }),
  (r) => [r.status + "; " + agentsOf(r) + "; result " + shape(r.result), r.runId]);
await step("getRun", () => client.getRun(agents.runId), (r) => [r.status + "; " + r.workflowName + "; " + agentsOf(r) +
  "; prompts " + r.agents.map((a) => a.prompt).sort().join("|") + "; result " + shape(r.result) + "; " + typeof r.updatedAt, r.runId]);
await step("overview (the run)", () => client.overview(), (o) => {
  const s = o.runs.find((x) => x.runId === agents.runId);
  return [s ? s.status + "; " + s.workflowName + "; " + s.completedAgentCount + "/" + s.agentCount : "missing", ""];
});
await step("startRun (bad script)", () => client.startRun({ script: "export const meta = { name: 'x', description: 'y' }\nconst = 1", options }),
  (r) => ["runId", r.runId]);

// A run that asks a checkpoint, answered through the client.
const gate = await step("startRun (checkpoint)", () => client.startRun({ script: ` + "`${GATE}`" + `, options }), (r) => ["runId", r.runId]);
const pending = await step("state (checkpoint)", () => until("the checkpoint", async () => (await client.state()).checkpoints.find((c) => c.runId === gate.runId)),
  (c) => [c.prompt + "; kind " + (c.options.kind ?? "confirm") + "; " + typeof c.id + "; " + typeof c.createdAt, c.id]);
await step("respondToCheckpoint", () => client.respondToCheckpoint(pending.id, true), (ok) => [String(ok), ""]);
await step("waitForSettled (checkpoint)", () => client.waitForSettled(gate.runId, { pollIntervalMs: 50 }),
  (r) => [r.status + "; result " + JSON.stringify(r.result), ""]);
await step("respondToCheckpoint (answered)", () => client.respondToCheckpoint(pending.id, true), (ok) => [String(ok), ""]);
await step("respondToCheckpoint (unknown)", () => client.respondToCheckpoint("no-such-checkpoint", true), (ok) => [String(ok), ""]);

// A run held at a checkpoint: paused, resumed, stopped, deleted.
const held = await step("startRun (held)", () => client.startRun({ script: ` + "`${HELD}`" + `, options }), (r) => ["runId", r.runId]);
const waiting = async () => until("the held run's checkpoint", async () => (await client.state()).checkpoints.find((c) => c.runId === held.runId));
await waiting();
await step("getRun (held)", () => client.getRun(held.runId), (r) => [r.status + "; " + agentsOf(r), ""]);
await step("pause", () => client.pause(held.runId), (ok) => [String(ok), ""]);
await step("waitForSettled (paused)", () => client.waitForSettled(held.runId, { pollIntervalMs: 50 }), (r) => [r.status, ""]);
await step("pause (paused)", () => client.pause(held.runId), (ok) => [String(ok), ""]);
await step("resume", () => client.resume(held.runId), (ok) => [String(ok), ""]);
await step("state (checkpoint again)", waiting, (c) => [c.prompt, ""]);
await step("stop", () => client.stop(held.runId), (ok) => [String(ok), ""]);
await step("waitForSettled (stopped)", () => client.waitForSettled(held.runId, { pollIntervalMs: 50 }), (r) => [r.status, ""]);
await step("resume (stopped)", () => client.resume(held.runId), (ok) => [String(ok), ""]);
await step("delete", () => client.delete(held.runId), (ok) => [String(ok), ""]);
await step("getRun (deleted)", () => client.getRun(held.runId), (r) => [r.status, ""]);
await step("delete (deleted)", () => client.delete(held.runId), (ok) => [String(ok), ""]);
await step("pause (unknown run)", () => client.pause("no-such-run"), (ok) => [String(ok), ""]);
await step("stop (unknown run)", () => client.stop("no-such-run"), (ok) => [String(ok), ""]);
await step("resume (unknown run)", () => client.resume("no-such-run"), (ok) => [String(ok), ""]);
await step("delete (agents run)", () => client.delete(agents.runId), (ok) => [String(ok), ""]);
done();
`

// The scripts the driver starts; plain JavaScript both runtimes run.
const (
	seedAgentsScript = `export const meta = { name: "seed_client", description: "Driven by the Node runtime's client", phases: [{ title: "Ask" }, { title: "Check" }] };
const hello = await agent("Say hello to " + args.who, { label: "hello", phase: "Ask" });
const parts = await parallel([1, 2].map((i) => () => agent("part " + i, { label: "part" + i, phase: "Check" })));
return { hello, parts, count: parts.length };
`
	seedGateScript = `export const meta = { name: "seed_gate", description: "Asks before it ships" };
const ship = await checkpoint("Ship it?", { kind: "confirm" });
return { ship };
`
	seedHeldScript = `export const meta = { name: "seed_held", description: "Waits at a checkpoint" };
const warm = await agent("Warm up", { label: "warm" });
const go = await checkpoint("Hold here?", { kind: "confirm" });
return { go, warm: typeof warm };
`
)

// seedRow is one call of the driver.
type seedRow struct {
	Method  string `json:"method"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

// drive runs the driver against the server of project cwd.
func (n *nodeSeed) drive(e *e2etest.Env, executor string) []seedRow {
	n.T.Helper()
	client, _ := json.Marshal("file://" + filepath.Join(n.pkg, "dist", "standalone-client.js"))
	js := strings.NewReplacer("CLIENT", string(client), "${AGENTS}", jsTemplate(seedAgentsScript),
		"${GATE}", jsTemplate(seedGateScript), "${HELD}", jsTemplate(seedHeldScript)).Replace(seedDriver)
	path := filepath.Join(n.T.TempDir(), "driver.mjs")
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		n.T.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.node, path, e.Dir, executor)
	cmd.Env = n.Environ(e)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		n.T.Fatalf("the driver failed: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var rows []seedRow
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		n.T.Fatalf("the driver printed %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	return rows
}

// jsTemplate escapes s for a JavaScript template literal.
func jsTemplate(s string) string {
	return strings.NewReplacer("\\", "\\\\", "`", "\\`", "${", "\\${").Replace(s)
}

// environ is the Node runtime's environment in e: e's state root, the
// fake codex first on PATH.
func (n *nodeSeed) Environ(e *e2etest.Env) []string {
	return append(os.Environ(), "PATH="+n.Bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DYNAMIC_WORKFLOWS_HOME="+e.State)
}

// nodeServe starts the Node runtime's serve for e's project and waits for
// its runtime.json; the test's cleanup stops it.
func (n *nodeSeed) serve(e *e2etest.Env) web.Descriptor {
	n.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, n.node, filepath.Join(n.pkg, "dist", "standalone-cli.js"), "serve", "--port", "0",
		"--executor", "codex", "--state-dir", e.State, "--cwd", e.Dir)
	cmd.Dir, cmd.Env = e.Dir, n.Environ(e)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		n.T.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	n.T.Cleanup(func() { cancel(); <-exited })
	path := store.RuntimePath(e.State, store.ProjectID(e.Dir))
	var d web.Descriptor
	e2etest.WaitUntil(n.T, "the Node runtime's runtime.json", func() bool {
		select {
		case <-exited:
			n.T.Fatalf("the Node runtime's serve exited:\n%s", out.String())
		default:
		}
		var err error
		d, err = web.ReadDescriptor(path)
		return err == nil && d.PID == cmd.Process.Pid
	})
	return d
}

// The Node runtime's own client gets the same outcome from every one of
// its methods against our serve as against the Node runtime's serve.
func TestSeedClientAgainstBothServers(t *testing.T) {
	n := findNodeSeed(t)

	theirs := e2etest.NewEnv(t)
	n.serve(theirs)
	nodeRows := n.drive(theirs, "codex")

	ours := e2etest.NewEnv(t)
	s := e2etest.Serve(ours, "--executor", "simulate")
	ourRows := n.drive(ours, "simulate")

	var table strings.Builder
	fmt.Fprintf(&table, "%-32s | %-60s | %s\n", "method", "Node runtime's serve", "dynworkflow serve")
	for i := range max(len(nodeRows), len(ourRows)) {
		var a, b seedRow
		if i < len(nodeRows) {
			a = nodeRows[i]
		}
		if i < len(ourRows) {
			b = ourRows[i]
		}
		fmt.Fprintf(&table, "%-32s | %-60s | %s\n", a.Method, a.Outcome, b.Outcome)
	}
	t.Logf("StandaloneRuntimeClient, method by server:\n%s", table.String())
	if len(nodeRows) != len(ourRows) {
		t.Fatalf("the driver made %d calls against the Node runtime and %d against ours", len(nodeRows), len(ourRows))
	}
	for i := range nodeRows {
		a, b := nodeRows[i], ourRows[i]
		if a.Method != b.Method || a.Outcome != b.Outcome {
			t.Errorf("%s: the Node runtime's serve gave %q (%s); ours gave %q (%s)", a.Method, a.Outcome, a.Detail, b.Outcome, b.Detail)
		}
	}
	_ = s
}

// The Node runtime's CLI finds our serve through runtime.json and works
// through it: run, list, show, pause, resume, stop and delete.
func TestNodeCLIUsesOurServe(t *testing.T) {
	n := findNodeSeed(t)
	e := e2etest.NewEnv(t)
	s := e2etest.Serve(e, "--executor", "simulate")
	agents := e.Write("agents.workflow.js", seedAgentsScript)
	held := e.Write("held.workflow.js", seedHeldScript)

	// Without --executor the run takes our serve's default, simulate.
	r := n.run(e, "run", agents, "--args", `{"who":"node cli"}`, "--attach", "--json")
	e2etest.ExpectCode(t, r, 0)
	var settled struct {
		RunID  string `json:"runId"`
		Status string `json:"status"`
		Agents []struct {
			Label, Prompt, Status string
		} `json:"agents"`
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &settled); err != nil || settled.Status != "completed" || len(settled.Agents) != 3 ||
		settled.Agents[0].Prompt != "Say hello to node cli" || settled.Result["count"] != float64(2) {
		t.Fatalf("node run --attach through our serve: %v\n%s", err, r)
	}
	// It ran in our serve: our API has it.
	if d, err := s.Client.Run(context.Background(), settled.RunID); err != nil || d.Summary.Status != "completed" {
		t.Fatalf("our serve does not know the run the Node CLI started: %v", err)
	}

	r = n.run(e, "list", "--json")
	e2etest.ExpectCode(t, r, 0)
	if !strings.Contains(r.Stdout, `"runId": "`+settled.RunID+`"`) || !strings.Contains(r.Stdout, `"completedAgentCount": 3`) {
		t.Errorf("node list through our serve:\n%s", r)
	}
	r = n.run(e, "show", settled.RunID)
	e2etest.ExpectCode(t, r, 0)
	for _, want := range []string{"seed_client (" + settled.RunID + ")", "Status: completed", "[done] hello · simulate", "Say hello to node cli"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("node show through our serve lacks %q:\n%s", want, r.Stdout)
		}
	}

	r = n.run(e, "run", held, "--json")
	e2etest.ExpectCode(t, r, 0)
	var started struct {
		RunID        string `json:"runId"`
		DashboardURL string `json:"dashboardUrl"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &started); err != nil || started.RunID == "" || !strings.HasPrefix(started.DashboardURL, s.Desc.URL) {
		t.Fatalf("node run through our serve: %v\n%s", err, r)
	}
	s.WaitCheckpoint(started.RunID)
	e2etest.ExpectCode(t, n.run(e, "pause", started.RunID), 0)
	s.WaitRun(started.RunID, "paused")
	e2etest.ExpectCode(t, n.run(e, "resume", started.RunID), 0)
	s.WaitCheckpoint(started.RunID)
	e2etest.ExpectCode(t, n.run(e, "stop", started.RunID), 0)
	s.WaitRun(started.RunID, "stopped")
	if r := n.run(e, "pause", started.RunID); r.Code == 0 || !strings.Contains(r.Stderr, "Could not pause") {
		t.Errorf("node pause of a stopped run:\n%s", r)
	}
	e2etest.ExpectCode(t, n.run(e, "delete", started.RunID), 0)
	if _, err := s.Client.Run(context.Background(), started.RunID); !web.IsStatus(err, 404) {
		t.Errorf("the run the Node CLI deleted: %v", err)
	}
}

// Our CLI finds a live serve of the Node runtime: serve refuses to take
// the project over, naming it; run runs here and says so; pause, resume,
// stop and delete of the Node runtime's runs, and the answers to its
// checkpoints, go to it.
func TestOurCLIFindsTheNodeServe(t *testing.T) {
	n := findNodeSeed(t)
	e := e2etest.NewEnv(t)
	d := n.serve(e)

	r := e.DW("serve")
	if r.Code != 1 || !strings.Contains(r.Stderr, fmt.Sprintf("the Node runtime's serve (pid %d) owns this project at http://", d.PID)) ||
		!strings.Contains(r.Stderr, "npx -p @fish59fish/dynamic-workflows dynworkflow run FILE") {
		t.Errorf("serve beside a live Node serve:\n%s", r)
	}
	if got, err := web.ReadDescriptor(store.RuntimePath(e.State, store.ProjectID(e.Dir))); err != nil || got.PID != d.PID {
		t.Errorf("runtime.json after our serve refused: %+v, %v", got, err)
	}

	ours := e.Write("ours.workflow.js", seedAgentsScript)
	r = e.DW("run", ours, "--args", `{"who":"go"}`, "--executor", "simulate", "--json")
	e2etest.ExpectCode(t, r, 0)
	if !strings.Contains(r.Stderr, "the project's live runtime is the Node runtime's serve") {
		t.Errorf("run beside a live Node serve says nothing of it:\n%s", r)
	}

	// A Node run waiting at a checkpoint, started with its own CLI.
	r = n.run(e, "run", e.Write("held.workflow.js", seedHeldScript), "--executor", "codex", "--json")
	e2etest.ExpectCode(t, r, 0)
	var started struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &started); err != nil {
		t.Fatalf("node run: %v\n%s", err, r)
	}
	id := started.RunID
	checkpoint := func() map[string]any {
		var cps []map[string]any
		e2etest.WaitUntil(t, "the Node run's checkpoint in dynworkflow checkpoints", func() bool {
			r := e.DWOK("checkpoints", "--json")
			cps = nil
			_ = json.Unmarshal([]byte(r.Stdout), &cps)
			return len(cps) == 1 && cps[0]["runId"] == id
		})
		return cps[0]
	}
	cp := checkpoint()
	if cp["prompt"] != "Hold here?" || cp["kind"] != "confirm" {
		t.Errorf("the Node checkpoint as we list it: %v", cp)
	}
	r = e.DWOK("pause", id)
	if !strings.Contains(r.Stdout, "paused "+id) || !strings.Contains(r.Stderr, fmt.Sprintf("in the Node runtime (pid %d)", d.PID)) {
		t.Errorf("pause of the Node run:\n%s", r)
	}
	e2etest.WaitUntil(t, "the Node run to be paused", func() bool { return e.Show(id).Summary.Status == "paused" })
	e.DWOK("resume", id)
	checkpoint()
	r = e.DWOK("respond", id, "yes")
	if !strings.Contains(r.Stdout, "answered") {
		t.Errorf("respond to the Node run's checkpoint:\n%s", r)
	}
	e2etest.WaitUntil(t, "the Node run to complete", func() bool { return e.Show(id).Summary.Status == "completed" })
	var result map[string]any
	_ = json.Unmarshal(e.Show(id).Result, &result)
	if result["go"] != true {
		t.Errorf("the Node run's result %v; the answer did not reach it", result)
	}
	if r := e.DW("pause", id); r.Code == 0 || !strings.Contains(r.Stderr, "could not pause") {
		t.Errorf("pause of the completed Node run:\n%s", r)
	}
	e.DWOK("delete", id)
	if r := e.DW("show", id); r.Code == 0 {
		t.Errorf("the Node run is still there after delete:\n%s", r)
	}
}
