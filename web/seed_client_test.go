package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// seedClient is a client written against the Node runtime's README (its
// "HTTP API" section) and nothing else: the documented start body, the
// bearer token, and the SSE envelope {sequence, timestamp, type, runId,
// payload}, with the event names mapped to ours as our README's table
// says (agentStart is call.started, agentEnd call.finished, complete a
// run.status of completed). It follows a run and shows each agent's
// prompt and result from the stream alone.
type seedClient struct {
	base, token string
}

// seedEnvelope is the README's SSE event.
type seedEnvelope struct {
	Sequence  int64           `json:"sequence"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	RunID     string          `json:"runId"`
	Payload   json.RawMessage `json:"payload"`
}

// shownAgent is what the client shows of one agent.
type shownAgent struct {
	Label, Prompt string
	Result        json.RawMessage
	Preview       string
	Truncated     bool
	Done          bool
}

// follow starts script with the README's start body and reads the event
// stream until the run completes, returning the agents it showed by call.
func (c seedClient) follow(ctx context.Context, t *testing.T, script string) (runID string, agents map[string]*shownAgent, order []string) {
	t.Helper()
	// Subscribe first, so that no event of the run is missed.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/events: %v %v", res, err)
	}
	defer res.Body.Close()

	body, _ := json.Marshal(map[string]any{
		"script": script,
		"args":   map[string]any{"scope": "src"},
		"options": map[string]any{
			"defaultExecutor": "simulate",
			"concurrency":     8,
			"agentRetries":    1,
		},
	})
	start, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/runs", strings.NewReader(string(body)))
	start.Header.Set("Authorization", "Bearer "+c.token)
	start.Header.Set("Content-Type", "application/json")
	sres, err := http.DefaultClient.Do(start)
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		RunID string `json:"runId"`
	}
	err = json.NewDecoder(sres.Body).Decode(&started)
	sres.Body.Close()
	if sres.StatusCode != http.StatusAccepted || err != nil || started.RunID == "" {
		t.Fatalf("POST /api/runs with the README's body: %d, %v", sres.StatusCode, err)
	}

	agents = map[string]*shownAgent{}
	agent := func(path string) *shownAgent {
		if agents[path] == nil {
			agents[path] = &shownAgent{}
			order = append(order, path)
		}
		return agents[path]
	}
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<22)
	var data strings.Builder
	for lines.Scan() {
		line := lines.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data.WriteString(d)
			continue
		}
		if line != "" || data.Len() == 0 {
			continue // id:, event:, retry: and comments; or a blank line
		}
		var ev seedEnvelope
		if err := json.Unmarshal([]byte(data.String()), &ev); err != nil {
			t.Fatalf("an event is not the README's envelope: %v: %s", err, data.String())
		}
		data.Reset()
		if ev.RunID != started.RunID {
			continue
		}
		var p struct {
			Path          string          `json:"path"`
			Label         string          `json:"label"`
			Prompt        string          `json:"prompt"`
			Result        json.RawMessage `json:"result"`
			ResultPreview string          `json:"resultPreview"`
			Truncated     bool            `json:"truncated"`
			Status        string          `json:"status"`
		}
		_ = json.Unmarshal(ev.Payload, &p)
		switch ev.Type {
		case "call.started": // agentStart
			a := agent(p.Path)
			a.Label, a.Prompt, a.Truncated = p.Label, p.Prompt, p.Truncated
		case "call.finished": // agentEnd
			a := agent(p.Path)
			a.Result, a.Preview, a.Done = p.Result, p.ResultPreview, true
		case "run.status": // complete, error, paused, stopped
			if p.Status == "completed" {
				return started.RunID, agents, order
			}
			t.Fatalf("the run ended %s", p.Status)
		}
	}
	t.Fatalf("the stream ended before the run completed: %v", lines.Err())
	return "", nil, nil
}

// Must show: an SSE client written against the Node runtime's README
// follows a run and shows each agent's prompt and result.
func TestSeedREADMEClientFollowsARun(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	long := strings.Repeat("Read every file of the change carefully. ", 80) // over the event bound
	script := `export const meta = { name: 'audit', description: 'A run a seed client follows', phases: [{ title: 'Review' }] }
const scope = args.scope
const plan = await agent('Plan the audit of ' + scope, { label: 'plan' })
const findings = await parallel(['auth', 'billing'].map(area => () =>
  agent('Audit the ' + area + ' module of ' + scope, { label: 'audit ' + area,
    schema: { type: 'object', properties: { issues: { type: 'integer' } }, required: ['issues'] } })))
const summary = await agent(` + "`" + long + "`" + ` + ' Summarize: ' + JSON.stringify(findings), { label: 'summary' })
return { plan, findings, summary }
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runID, agents, order := seedClient{base: f.http.URL, token: testToken}.follow(ctx, t, script)

	// What the client showed, as a user would read it.
	var shown strings.Builder
	for _, path := range order {
		a := agents[path]
		result := string(a.Result)
		if result == "" {
			result = a.Preview + "…"
		}
		fmt.Fprintf(&shown, "%s\n  prompt: %.60s\n  result: %.60s\n", a.Label, a.Prompt, result)
	}
	t.Logf("the client showed:\n%s", shown.String())

	// Checked against the run itself.
	d := f.waitStatus(runID, "completed")
	if len(order) != 4 || len(d.Calls) != 4 {
		t.Fatalf("the client showed %d agents, the run has %d calls", len(order), len(d.Calls))
	}
	for _, c := range d.Calls {
		a := agents[c.Path]
		if a == nil || !a.Done {
			t.Fatalf("call %s (%s) was not shown with its result", c.Path, c.Label)
		}
		if a.Label != c.Label {
			t.Errorf("%s: label %q, want %q", c.Path, a.Label, c.Label)
		}
		switch {
		case a.Truncated:
			if c.Label != "summary" || !strings.HasPrefix(c.Prompt, a.Prompt) || len(a.Prompt) >= len(c.Prompt) || len(a.Prompt) == 0 {
				t.Errorf("%s: the truncated prompt %q is not a start of the whole one", c.Path, a.Prompt)
			}
		case a.Prompt != c.Prompt:
			t.Errorf("%s: prompt %q, want %q", c.Path, a.Prompt, c.Prompt)
		}
		if string(a.Result) != string(c.Result) {
			t.Errorf("%s: result %s, want %s", c.Path, a.Result, c.Result)
		}
	}
	for _, c := range d.Calls {
		if a := agents[c.Path]; strings.HasPrefix(c.Label, "audit ") && !strings.Contains(string(a.Result), `"issues"`) {
			t.Errorf("schema agent %s shows result %s", c.Label, a.Result)
		}
	}
}

// The start body takes the Node runtime's option names beside ours.
func TestStartTakesTheNodeRuntimesOptionNames(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	script := "export const meta = { name: 'n', description: 'd' }\nreturn await agent('hi')"
	tests := []struct {
		options string
		status  int
		want    string // in the error message
	}{
		{`{"defaultExecutor": "simulate", "concurrency": 8, "agentRetries": 1}`, http.StatusAccepted, ""},
		{`{"defaultExecutor": "simulate", "maxAgents": 5, "agentTimeoutMs": null, "tokenBudget": null, "autoResume": false}`, http.StatusAccepted, ""},
		{`{"executor": "simulate", "defaultExecutor": "simulate"}`, http.StatusAccepted, ""},
		{`{"executor": "simulate", "defaultExecutor": "codex"}`, http.StatusBadRequest, `executor "simulate" and defaultExecutor "codex" disagree`},
		{`{"defaultExecutor": "no-such-executor"}`, http.StatusBadRequest, "no-such-executor"},
		{`{"concurency": 8}`, http.StatusBadRequest, `unknown option "concurency"; the options are executor, concurrency`},
		{`{"concurrency": "8"}`, http.StatusBadRequest, "option concurrency"},
	}
	for _, tc := range tests {
		res := f.do(request{method: http.MethodPost, path: "/api/runs", body: `{"script": ` + jsonString(script) + `, "options": ` + tc.options + `}`})
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal(res.body, &e)
		if res.status != tc.status || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("options %s: %d %s, want %d with %q", tc.options, res.status, res.body, tc.status, tc.want)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
