package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/internal/clitest"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// The end-to-end tests of issue 9: real agents doing real work, through
// the real binary, the real CLIs and the fake model server.

// agentDetail is the part of `show --json` these tests read.
type agentDetail struct {
	Options struct {
		Executor       string `json:"executor"`
		ExecutorSource string `json:"executorSource"`
		Concurrency    int    `json:"concurrency"`
		AgentRetries   int    `json:"agentRetries"`
		Model          string `json:"model"`
		Permissions    string `json:"permissions"`
	} `json:"options"`
	Calls []struct {
		Path        string          `json:"path"`
		Status      string          `json:"status"`
		Executor    string          `json:"executor"`
		Model       string          `json:"model"`
		Permissions string          `json:"permissions"`
		Result      json.RawMessage `json:"result"`
		History     []struct {
			Kind    string `json:"kind"`
			Role    string `json:"role"`
			Text    string `json:"text"`
			IsError bool   `json:"isError"`
		} `json:"history"`
	} `json:"calls"`
	Failures         []failureGroup `json:"failures"`
	SimulatedAnswers bool           `json:"simulatedAnswers"`
	Executors        []struct {
		Name    string   `json:"name"`
		Kind    string   `json:"kind"`
		Command []string `json:"command"`
	} `json:"executors"`
}

type failureGroup struct {
	Class     string `json:"class"`
	Message   string `json:"message"`
	Count     int    `json:"count"`
	FirstPath string `json:"firstPath"`
}

// agentOutcome is the part of `run --json` these tests read.
type agentOutcome struct {
	e2etest.Outcome
	Failures         []failureGroup `json:"failures"`
	Executor         string         `json:"executor"`
	SimulatedAnswers bool           `json:"simulatedAnswers"`
}

func showAgents(e *e2etest.Env, id string) agentDetail {
	e.T.Helper()
	r := e.DWOK("show", id, "--json")
	var d agentDetail
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		e.T.Fatalf("show --json: %v\n%s", err, r)
	}
	return d
}

func parseAgentOutcome(t *testing.T, r e2etest.Result) agentOutcome {
	t.Helper()
	var o agentOutcome
	if err := json.Unmarshal([]byte(r.Stdout), &o); err != nil || o.RunID == "" {
		t.Fatalf("stdout is not a --json outcome (%v):\n%s", err, r)
	}
	return o
}

// writeConfig writes the project's executor configuration, and allows it
// as its user would.
func writeConfig(e *e2etest.Env, v any) {
	e.T.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		e.T.Fatal(err)
	}
	e.WriteAllowed(".dynworkflow/executors.json", string(b))
}

// fakeAgents starts a fake model server and configures, in the project's
// executor configuration, every given CLI to use it: what a user does
// with `dynworkflow fake-model --write-config`.
func fakeAgents(t *testing.T, e *e2etest.Env, clis ...string) *fakemodel.Server {
	t.Helper()
	for _, c := range clis {
		clitest.Binary(t, c)
	}
	srv, err := fakemodel.Start(fakemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	executorsConf := map[string]any{}
	for _, c := range clis {
		env, err := fakemodel.ClientEnv(c, srv.URL(), filepath.Join(t.TempDir(), c))
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		conf := map[string]any{"env": vars}
		name := map[string]string{clitest.Codex: "codex", clitest.Claude: "claude-code", clitest.Pi: "pi"}[c]
		if c == clitest.Pi {
			conf["model"] = clitest.PiModel
		}
		executorsConf[name] = conf
	}
	writeConfig(e, map[string]any{"executors": executorsConf})
	return srv
}

const writerWorkflow = `export const meta = { name: 'writer', description: 'an agent that writes a file' }
return await agent('write the file ' + args.marker, { label: 'writer' })
`

// TestAgentsWriteUnderTheirPolicy is Must-show 1: for each CLI, with the
// default policy the fake model's write lands in the project, with its
// content; with --permissions read-only it does not, and the call's
// history shows the refusal. show records the policy of each call.
func TestAgentsWriteUnderTheirPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cli, executor string }{
		{clitest.Codex, "codex"}, {clitest.Claude, "claude-code"}, {clitest.Pi, "pi"},
	} {
		t.Run(tc.executor, func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			fakeAgents(t, e, tc.cli)
			script := e.Write("writer.workflow.js", writerWorkflow)
			written := filepath.Join(e.Dir, fakemodel.WriteFile)
			args := fmt.Sprintf(`{"marker":%q}`, fakemodel.Marker(fakemodel.Write))

			o := e2etest.ParseOutcome(t, e.DWOK("run", script, "--json", "--executor", tc.executor, "--args", args))
			got, err := os.ReadFile(written)
			if err != nil || string(got) != fakemodel.WriteContent {
				t.Fatalf("after a default-policy run, %s holds %q (%v), want %q", written, got, err, fakemodel.WriteContent)
			}
			if c := showAgents(e, o.RunID).Calls[0]; c.Permissions != "workspace-write" {
				t.Errorf("show records permissions %q, want workspace-write", c.Permissions)
			}

			if err := os.Remove(written); err != nil {
				t.Fatal(err)
			}
			o = e2etest.ParseOutcome(t, e.DWOK("run", script, "--json", "--executor", tc.executor, "--args", args, "--permissions", "read-only"))
			if _, err := os.Stat(written); !os.IsNotExist(err) {
				t.Fatalf("a read-only agent wrote %s", written)
			}
			c := showAgents(e, o.RunID).Calls[0]
			if c.Permissions != "read-only" {
				t.Errorf("show records permissions %q, want read-only", c.Permissions)
			}
			refusal := false
			for _, h := range c.History {
				refusal = refusal || h.Kind == "tool_result" && h.IsError ||
					h.Kind == "message" && h.Role == "assistant" && strings.Contains(h.Text, "read-only")
			}
			if !refusal {
				t.Errorf("the read-only call's history does not show the refusal: %+v", c.History)
			}
		})
	}
}

// fanOutN is a workflow of args.n agent calls that counts the answers.
const fanOutN = `export const meta = { name: 'fan', description: 'args.n agents' }
const out = await parallel(Array.from({ length: args.n }, (_, i) => () => agent('task ' + i)))
return out.filter(a => a !== null).length
`

// TestUnavailableExecutorPausesTheRun is Must-show 2, on one 100-agent
// run of the real codex, which meets both causes in turn. First its binary
// is missing: no agent is launched, the run pauses with exit 2 and a
// message naming the executor, the cause and the fix. Once the binary is
// there, resume goes on until the model starts answering 401 in the
// middle: the run pauses within 2 seconds of the first 401, having
// launched no more than the concurrency limit of agents after it, again
// with exit 2 and the fix. Once the key is accepted again, resume
// completes the run with every finished call replayed.
func TestUnavailableExecutorPausesTheRun(t *testing.T) {
	e := e2etest.NewEnv(t)
	srv := fakeAgents(t, e, clitest.Codex)
	good, _ := os.ReadFile(filepath.Join(e.Dir, ".dynworkflow", "executors.json"))
	var conf map[string]map[string]map[string]any
	if err := json.Unmarshal(good, &conf); err != nil {
		t.Fatal(err)
	}
	conf["executors"]["codex"]["binary"] = filepath.Join(t.TempDir(), "codex-is-not-here")
	writeConfig(e, conf)
	if native := nativeCodex(); native != "" {
		// The same Codex without its Node launcher: half the CPU a call, and
		// this test runs a hundred of them.
		conf["executors"]["codex"]["binary"] = native
		good, _ = json.Marshal(conf)
		conf["executors"]["codex"]["binary"] = filepath.Join(t.TempDir(), "codex-is-not-here")
	}
	script := e.Write("fan.workflow.js", fanOutN)
	// 100 agents, not the 200 this test once ran: the 401 comes after 16
	// answers either way, and the rest only lengthened the last resume,
	// the package's longest serial step.
	const concurrency, agents = 8, 100

	// 1. The binary is missing.
	r := e.DW("run", script, "--json", "--executor", "codex", "--concurrency", fmt.Sprint(concurrency), "--args", fmt.Sprintf(`{"n":%d}`, agents))
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	id, journal := o.RunID, e.JournalPath(o.RunID)
	for _, want := range []string{"executor codex is unavailable", "codex-is-not-here not found", "Fix: install Codex"} {
		if !strings.Contains(o.PauseReason, want) {
			t.Errorf("pause reason %q lacks %q", o.PauseReason, want)
		}
	}
	recs, _ := e2etest.ReadJournal(t, journal)
	if started := len(e2etest.StartedAfter(recs, 0)); started > concurrency {
		t.Errorf("%d calls were started, want at most the concurrency, %d", started, concurrency)
	}
	if len(srv.Requests()) != 0 || o.Stats.Failed != 0 {
		t.Errorf("with no binary, %d requests reached the model and %d calls failed; want none", len(srv.Requests()), o.Stats.Failed)
	}

	// 2. The binary is back; the model starts refusing the key mid-run.
	e.WriteAllowed(".dynworkflow/executors.json", string(good))
	p := e.Start("resume", id, "--json")
	p.WaitFinished(journal, 16)
	srv.Force(fakemodel.Err401)
	r = p.Wait()
	e2etest.ExpectCode(t, r, 2)
	o = e2etest.ParseOutcome(t, r)
	for _, want := range []string{"executor codex is unavailable", "401", "Fix: log in with `codex login`"} {
		if !strings.Contains(o.PauseReason, want) {
			t.Errorf("pause reason %q lacks %q", o.PauseReason, want)
		}
	}
	reqs := srv.Requests()
	first := -1
	for i, q := range reqs {
		if q.Scenario == fakemodel.Err401 {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("the server answered no 401")
	}
	if after := len(reqs) - first; after > concurrency {
		t.Errorf("%d agents reached the model from the first 401 on, want at most the concurrency, %d", after, concurrency)
	}
	pause := endTime(t, journal).Sub(reqs[first].Time)
	t.Logf("paused %v after the first 401 (%d of %d calls had finished)", pause.Round(time.Millisecond), o.Stats.Live, agents)
	if pause > 2*time.Second {
		t.Errorf("the run paused %v after the first 401, want within 2s", pause)
	}
	recs, _ = e2etest.ReadJournal(t, journal)
	finished := e2etest.FinishedAgents(recs)

	// 3. The key is accepted again.
	srv.Force("")
	r = dwSlow(e, "resume", id, "--json", "--concurrency", "16")
	e2etest.ExpectCode(t, r, 0)
	resumed := e2etest.ParseOutcome(t, r)
	if string(resumed.Result) != fmt.Sprint(agents) || resumed.Stats.Replayed != len(finished) {
		t.Fatalf("resume: result %s, %d replayed; want %d answers and the %d finished calls replayed:\n%s",
			resumed.Result, resumed.Stats.Replayed, agents, len(finished), r)
	}
	e2etest.NoReRun(t, journal, finished)
}

// TestUnavailableExecutorText: a run paused for an unavailable executor
// says why and how to go on in its text output too.
func TestUnavailableExecutorText(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	writeConfig(e, map[string]any{"executors": map[string]any{"codex": map[string]any{"binary": filepath.Join(t.TempDir(), "no-codex")}}})
	r := e.DW("run", e.Write("fan.workflow.js", fanOutN), "--executor", "codex", "--args", `{"n":3}`)
	e2etest.ExpectCode(t, r, 2)
	for _, want := range []string{"executor codex is unavailable", "no-codex not found", "Fix: install Codex", "resume with: dynworkflow resume"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the text output lacks %q:\n%s", want, r)
		}
	}
	// list cuts the long reason, so that it does not widen every row;
	// show prints it whole.
	list := e.DWOK("list").Stdout
	if !regexp.MustCompile(`paused\s.*\sexecutor codex is unavailable`).MatchString(list) || strings.Contains(list, "Fix: install Codex") {
		t.Errorf("list should show the start of the pause reason, cut:\n%s", list)
	}
	if show := e.DWOK("show", "last").Stdout; !strings.Contains(show, "Fix: install Codex") {
		t.Errorf("show should print the whole pause reason:\n%s", show)
	}
}

// nativeCodex is the native codex binary that the npm package's launcher
// (a Node script) runs, or "" when it cannot be found beside it.
func nativeCodex() string {
	launcher, err := exec.LookPath("codex")
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(launcher); err == nil {
		launcher = real
	}
	// node_modules/@openai/codex/bin/codex.js -> node_modules/@openai/codex-*/vendor/*/bin/codex
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(launcher), "..", "..", "codex-*", "vendor", "*", "bin", "codex"))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}

// dwSlow runs the binary for a command that runs a couple of hundred real
// agent CLIs: a few CPU-seconds each on a shared machine.
func dwSlow(e *e2etest.Env, args ...string) e2etest.Result {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := e.Command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r, err := e2etest.ResultOf(args, cmd, err, stdout.String(), stderr.String())
	if err != nil || ctx.Err() != nil {
		e.T.Fatalf("dynworkflow %s: %v, %v:\n%s", strings.Join(args, " "), err, ctx.Err(), r)
	}
	e.CheckRace(r)
	return r
}

// endTime is when the journal's last end record was written.
func endTime(t *testing.T, path string) time.Time {
	t.Helper()
	var ended time.Time
	for _, line := range bytes.Split(mustRead(t, path), []byte("\n")) {
		var rec struct {
			Type string `json:"type"`
			Time int64  `json:"t"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "end" {
			ended = time.UnixMilli(rec.Time)
		}
	}
	if ended.IsZero() {
		t.Fatalf("%s has no end record", path)
	}
	return ended
}

// TestServeOptionsAreDefaults is Must-show 3: the options serve was
// given are the defaults of the runs it starts, forwarded or from the
// API, and the API takes the seed's documented start body.
func TestServeOptionsAreDefaults(t *testing.T) {
	e := e2etest.NewEnv(t)
	fakeAgents(t, e, clitest.Codex)
	script := e.Write("quick.workflow.js", quickWorkflow)
	s := e2etest.Serve(e, "--executor", "codex", "--concurrency", "4")
	defer func() { s.Signal(os.Interrupt); s.Wait() }()

	forwarded := strings.TrimSpace(e.DWOK("run", script).Stdout)
	s.WaitRun(forwarded, "completed")
	d := showAgents(e, forwarded)
	if d.Options.Executor != "codex" || d.Options.Concurrency != 4 || d.Calls[0].Executor != "codex" {
		t.Errorf("a forwarded run got executor %q (calls on %q), concurrency %d; want serve's codex and 4",
			d.Options.Executor, d.Calls[0].Executor, d.Options.Concurrency)
	}

	post := func(body string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.Desc.URL+"/api/runs", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.Desc.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var started struct {
			RunID string `json:"runId"`
		}
		if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &started) != nil {
			t.Fatalf("POST /api/runs %s: %d %s", body, resp.StatusCode, b)
		}
		s.WaitRun(started.RunID, "completed")
		return started.RunID
	}
	text, _ := json.Marshal(quickWorkflow)
	seed := post(`{"script": ` + string(text) + `, "args": {"scope": "src"}, "options": {"defaultExecutor": "codex", "concurrency": 8, "agentRetries": 1}}`)
	d = showAgents(e, seed)
	if d.Options.Executor != "codex" || d.Options.Concurrency != 8 || d.Options.AgentRetries != 1 {
		t.Errorf("the seed's start body gave %+v, want codex, concurrency 8, agentRetries 1", d.Options)
	}
	bare := post(`{"path": ` + fmt.Sprintf("%q", script) + `}`)
	d = showAgents(e, bare)
	if d.Options.Executor != "codex" || d.Options.Concurrency != 4 || d.Calls[0].Executor != "codex" {
		t.Errorf("a start body without options gave %+v, want serve's codex and 4", d.Options)
	}
}

// echoWorkflow answers with what the command executor was given.
const echoWorkflow = `export const meta = { name: 'echo', description: 'shows the settings a call ran with' }
return await agent('hi', args.opts)
`

// TestConfigurationPrecedence is Must-show 4, through the binary: each
// layer overrides the next — the call's option over the run's flag over
// the project file over the user file over the built-in — for the
// executor, the model and the permissions. A command executor echoes what
// it was given, so the answer is what reached the agent.
func TestConfigurationPrecedence(t *testing.T) {
	template := `sh -c 'echo "$0 $1 $2"' {model} {permissions} ` // the third word names the executor
	commands := map[string]string{"one": template + "one", "two": template + "two", "three": template + "three", "four": template + "four"}
	user := map[string]any{"defaultExecutor": "one", "commands": commands,
		"executors": map[string]any{"one": map[string]any{"model": "user-model", "permissions": "read-only"},
			"two": map[string]any{"model": "user-model", "permissions": "read-only"}}}
	project := map[string]any{"defaultExecutor": "two",
		"executors": map[string]any{"two": map[string]any{"model": "project-model", "permissions": "full-access"},
			"three": map[string]any{"model": "project-model", "permissions": "full-access"}}}
	tests := []struct {
		name          string
		user, project map[string]any
		flags         []string
		call          string
		want          string
		source        string
	}{
		{name: "built-in", user: map[string]any{"commands": commands}, want: "", source: "default"},
		{name: "user file", user: user, want: "user-model read-only one", source: "user config"},
		{name: "project file over user file", user: user, project: project, want: "project-model full-access two", source: "project config"},
		{name: "run flags over files", user: user, project: project, flags: []string{"--executor", "three", "--model", "flag-model", "--permissions", "read-only"},
			want: "flag-model read-only three", source: "flag"},
		{name: "call options over flags", user: user, project: project, flags: []string{"--executor", "three", "--model", "flag-model", "--permissions", "read-only"},
			call: `{"executor": "four", "model": "call-model", "permissions": "workspace-write"}`, want: "call-model workspace-write four", source: "flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := e2etest.NewEnv(t)
			if tc.user != nil {
				b, _ := json.Marshal(tc.user)
				if err := os.MkdirAll(filepath.Join(e.Config, "dynworkflow"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(e.Config, "dynworkflow", "executors.json"), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.project != nil {
				writeConfig(e, tc.project)
			}
			call := tc.call
			if call == "" {
				call = "{}"
			}
			script := e.Write("echo.workflow.js", echoWorkflow)
			o := parseAgentOutcome(t, e.DWOK(append([]string{"run", script, "--json", "--args", `{"opts":` + call + `}`}, tc.flags...)...))
			var got string
			if err := json.Unmarshal(o.Result, &got); err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				// Nothing configured: the simulated executor answered.
				if !strings.HasPrefix(got, "simulated answer") || !o.SimulatedAnswers {
					t.Fatalf("answer %q (simulated answers %v), want the simulated executor's", got, o.SimulatedAnswers)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("the agent got %q, want %q", got, tc.want)
			}
			d := showAgents(e, o.RunID)
			c := d.Calls[0]
			if rec := c.Model + " " + c.Permissions + " " + c.Executor; rec != tc.want {
				t.Errorf("show records %q, want %q", rec, tc.want)
			}
			if d.Options.ExecutorSource != tc.source {
				t.Errorf("the run's executor came from %q, want %q", d.Options.ExecutorSource, tc.source)
			}
		})
	}
}

// TestFailureSummary is Must-show 5: a run with failed calls ends with the
// failures grouped by cause (count, first call path, message), in text
// and in --json.
func TestFailureSummary(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	script := e.Write("mixed.workflow.js", `export const meta = { name: 'mixed', description: 'some calls fail' }
const out = await parallel(Array.from({ length: 9 }, (_, i) => () =>
  agent(i % 3 === 0 ? '[simulate:fail] broken ' : i % 3 === 1 ? 'fine ' + i : '[simulate:transient] flaky', { retries: 0 })))
return out.filter(x => x !== null).length`)
	r := e.DWOK("run", script, "--executor", "simulate")
	for _, want := range []string{"6 calls failed, by cause", "3× terminal", "first /par.0/0/agent.0", "3× transient", "first /par.0/2/agent.0", "[simulate:fail]"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the end of the run lacks %q:\n%s", want, r.Stderr)
		}
	}
	o := parseAgentOutcome(t, e.DWOK("run", script, "--executor", "simulate", "--json"))
	if len(o.Failures) != 2 || o.Failures[0].Count != 3 || o.Failures[1].Count != 3 || o.Failures[0].FirstPath != "/par.0/0/agent.0" {
		t.Fatalf("--json failures %+v, want two causes of 3 calls, the first at /par.0/0/agent.0", o.Failures)
	}
	if d := showAgents(e, o.RunID); len(d.Failures) != 2 {
		t.Errorf("show --json failures %+v, want the same two causes", d.Failures)
	}
	if r := e.DWOK("show", o.RunID); !strings.Contains(r.Stdout, "6 calls failed, by cause") {
		t.Errorf("show does not summarize the failures:\n%s", r.Stdout)
	}
}

// TestSimulatedAnswersAreMarked: a run that nobody pointed at an executor
// says, live and in show, that its answers are simulated; one that asked
// for the simulator by name does not.
func TestSimulatedAnswersAreMarked(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	script := e.Write("quick.workflow.js", quickWorkflow)
	r := e.DWOK("run", script)
	if !strings.Contains(r.Stderr, "simulated answers: no executor was chosen") || !strings.Contains(r.Stderr, "· simulated answers") {
		t.Errorf("a run on the simulator by default does not say so:\n%s", r.Stderr)
	}
	o := parseAgentOutcome(t, e.DWOK("run", script, "--json"))
	if !o.SimulatedAnswers {
		t.Error("--json does not carry simulatedAnswers")
	}
	if r := e.DWOK("show", o.RunID); !strings.Contains(r.Stdout, "simulated answers") {
		t.Errorf("show does not say the answers are simulated:\n%s", r.Stdout)
	}
	r = e.DWOK("run", script, "--executor", "simulate")
	if strings.Contains(r.Stderr, "simulated answers") {
		t.Errorf("a run that asked for the simulator is marked anyway:\n%s", r.Stderr)
	}
}

// TestResumeFindsCommandExecutor: a run that used --command-executor
// resumes without being given it again: the journal has its definition.
func TestResumeFindsCommandExecutor(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	script := e.Write("c.workflow.js", `export const meta = { name: 'c', description: 'a command executor' }
const a = await agent('first')
const b = await agent('second [simulate:ratelimit=1ms]', { executor: 'simulate' })
return [a, b]`)
	r := e.DW("run", script, "--json", "--command-executor", `fake=sh -c 'echo "answer from fake"'`, "--executor", "fake")
	e2etest.ExpectCode(t, r, 2)
	o := e2etest.ParseOutcome(t, r)
	d := showAgents(e, o.RunID)
	found := false
	for _, x := range d.Executors {
		found = found || x.Name == "fake" && x.Kind == "command" && strings.Join(x.Command, " ") == `sh -c echo "answer from fake"`
	}
	if !found {
		t.Fatalf("the journal does not define the command executor: %+v", d.Executors)
	}
	// Resume with the rate-limited call edited out; no --command-executor.
	edited := e.Write("c2.workflow.js", strings.Replace(string(mustRead(t, script)), "second [simulate:ratelimit=1ms]", "second", 1))
	r = e.DW("resume", o.RunID, "--json", "--script", edited)
	e2etest.ExpectCode(t, r, 0)
	if o := e2etest.ParseOutcome(t, r); o.Stats.Replayed != 1 || !strings.Contains(string(o.Result), "answer from fake") {
		t.Fatalf("resume without --command-executor: %s", r)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDoctorReportsConfiguration: doctor prints each executor's effective
// values with their sources, and exits 1 with the fix when an executor the
// configuration uses is unusable; executors nobody uses do not fail it.
func TestDoctorReportsConfiguration(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	r := e.DW("doctor", "--json")
	var rep struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
			Fix    string `json:"fix"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 || !rep.OK {
		t.Fatalf("doctor with nothing configured: %v\n%s", err, r)
	}
	writeConfig(e, map[string]any{"defaultExecutor": "codex",
		"executors": map[string]any{"codex": map[string]any{"binary": "/nonexistent/codex", "model": "gpt-x", "permissions": "read-only"}}})
	r = e.DW("doctor")
	e2etest.ExpectCode(t, r, 1)
	for _, want := range []string{"default executor     codex (project file)", "--  executor codex", "/nonexistent/codex not found",
		"model        gpt-x (project file)", "permissions  read-only (project file)", "install Codex"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("doctor's report lacks %q:\n%s", want, r.Stdout)
		}
	}
	e.WriteAllowed(".dynworkflow/executors.json", "{\n  \"executors\": {\"codex\": {\"modle\": \"x\"}}\n}\n")
	r = e.DW("doctor")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stdout, ".dynworkflow/executors.json:2:") || !strings.Contains(r.Stdout, `unknown field "modle"`) {
		t.Errorf("doctor does not name the bad line:\n%s", r.Stdout)
	}
	r = e.DW("run", e.Write("q.workflow.js", quickWorkflow))
	e2etest.ExpectCode(t, r, 1)
	if !bytes.Contains([]byte(r.Stderr), []byte(".dynworkflow/executors.json:2:")) {
		t.Errorf("run does not name the bad line:\n%s", r)
	}
	if r := e.DW("list"); r.Code != 0 || !strings.Contains(r.Stderr, "warning") {
		t.Errorf("list must still work, with a warning, when the executor configuration is broken:\n%s", r)
	}
}
