package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// flaky answers every call, failing a call labelled "flaky" transiently
// on its first attempt and one labelled "broken" for good, and keeps the
// environment each call was given.
type flaky struct {
	mu  sync.Mutex
	env map[string][]string // by path
}

func (*flaky) Name() string { return "flaky" }

func (f *flaky) Run(_ context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	f.mu.Lock()
	f.env[req.Path] = req.Env
	f.mu.Unlock()
	observe(executors.Progress{History: &executors.HistoryItem{Kind: "tool_call", Name: "shell", Text: "secret command"}})
	usage := executors.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 0.01}
	switch {
	case strings.Contains(req.Prompt, "flaky") && req.Attempt == 1:
		return executors.Result{Usage: usage}, &executors.Error{Class: executors.Transient, Message: "overloaded"}
	case strings.Contains(req.Prompt, "broken"):
		return executors.Result{Usage: usage}, errors.New("the agent gave up")
	}
	return executors.Result{Text: "done: " + req.Prompt, Usage: usage, Provider: "test", Model: "m-answered"}, nil
}

const script = `
export const meta = { name: 'traced', description: 'a traced run' }
const a = await parallel(['one', 'two', 'three'].map(n => () => agent('scan ' + n, { label: 'scan-' + n, phase: 'Scan' })))
await agent('flaky fix', { label: 'fix', phase: 'Fix', model: 'm-asked' })
await agent('broken fix', { label: 'broken', phase: 'Fix' })
const ok = await checkpoint('ship it?', { default: true })
return a.length
`

// keeper keeps every span exported to it, through Shutdown.
type keeper struct {
	mu    sync.Mutex
	spans tracetest.SpanStubs
}

func (k *keeper) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.spans = append(k.spans, tracetest.SpanStubsFromReadOnlySpans(spans)...)
	return nil
}

func (*keeper) Shutdown(context.Context) error { return nil }

type harness struct {
	rt   *engine.Runtime
	exp  *keeper
	tr   *Tracer
	exec *flaky
	dir  string
}

// run runs the traced script to its end, which must be completion.
func (h *harness) run(ctx context.Context, t *testing.T) *engine.Run {
	t.Helper()
	sc, err := h.rt.Hosts().Load(lang.Source{Path: filepath.Join(h.dir, "traced.workflow.js"), Text: []byte(script)})
	if err != nil {
		t.Fatal(err)
	}
	run, err := h.rt.Start(ctx, engine.StartRequest{Script: sc, Options: options()})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := run.Wait(ctx); err != nil || s.Status != engine.StatusCompleted {
		t.Fatalf("run: %v %v", s.Status, err)
	}
	return run
}

func newHarness(t *testing.T, dir string) *harness {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	ex := &flaky{env: map[string][]string{}}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(ex),
		Cwd: dir, Tracing: true})
	if err != nil {
		t.Fatal(err)
	}
	exp := &keeper{}
	tr := newTracer(exp, resource.Empty(), nil)
	tr.Follow(rt.Events())
	return &harness{rt: rt, exp: exp, tr: tr, exec: ex, dir: dir}
}

// flush ends the tracer and returns every span it exported.
func (h *harness) flush(t *testing.T) []tracetest.SpanStub {
	t.Helper()
	if err := h.tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h.exp.spans
}

func options() engine.Options {
	o := engine.DefaultOptions()
	o.Executor = "flaky"
	o.RetryBackoff = 20 * time.Millisecond
	o.AgentRetries = 2
	return o
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(s tracetest.SpanStub, key string) string {
	v, _ := attr(s, key)
	return v.String()
}

func TestTheTraceIsShapedLikeTheWorkflow(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir)
	ctx := context.Background()
	h.run(ctx, t)
	spans := h.flush(t)

	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	roots := byName["run traced"]
	if len(roots) != 1 {
		t.Fatalf("want one root span, got %d among %d spans", len(roots), len(spans))
	}
	root := roots[0]
	traceID := root.SpanContext.TraceID()
	for _, s := range spans {
		if s.SpanContext.TraceID() != traceID {
			t.Errorf("span %q is in another trace", s.Name)
		}
	}
	if root.Parent.IsValid() {
		t.Errorf("the root has a parent: %v", root.Parent)
	}
	if got := str(root, "dynworkflow.run.status"); got != "completed" {
		t.Errorf("root status = %q", got)
	}
	if got := str(root, "gen_ai.usage.input_tokens"); got != "600" {
		t.Errorf("root input tokens = %s, want 600 (six attempts of 100)", got)
	}
	phases := map[string]tracetest.SpanStub{}
	for _, name := range []string{"phase Scan", "phase Fix"} {
		if len(byName[name]) != 1 {
			t.Fatalf("want one %q span, got %d", name, len(byName[name]))
		}
		ph := byName[name][0]
		if ph.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("%s is not a child of the root", name)
		}
		phases[name] = ph
	}
	for _, n := range []string{"one", "two", "three"} {
		cs := byName["invoke_agent scan-"+n]
		if len(cs) != 1 {
			t.Fatalf("want one span for scan-%s, got %d", n, len(cs))
		}
		c := cs[0]
		if c.Parent.SpanID() != phases["phase Scan"].SpanContext.SpanID() {
			t.Errorf("scan-%s is not in phase Scan", n)
		}
		if str(c, "gen_ai.operation.name") != "invoke_agent" || str(c, "gen_ai.agent.name") != "scan-"+n ||
			str(c, "dynworkflow.call.outcome") != "finished" || str(c, "dynworkflow.call.executor") != "flaky" ||
			str(c, "gen_ai.usage.output_tokens") != "10" || str(c, "gen_ai.response.model") != "m-answered" {
			t.Errorf("scan-%s attributes: %v", n, c.Attributes)
		}
		if len(c.Events) != 1 || c.Events[0].Name != "gen_ai.tool.call" {
			t.Errorf("scan-%s events: %+v", n, c.Events)
		}
		for _, e := range c.Events {
			for _, kv := range e.Attributes {
				if strings.Contains(kv.Value.String(), "secret") {
					t.Errorf("a tool's arguments were exported: %v", kv)
				}
			}
		}
		// The span has the id the agent's process was given.
		path := str(c, "dynworkflow.call.path")
		want := "TRACEPARENT=00-" + traceID.String() + "-" + c.SpanContext.SpanID().String() + "-01"
		if env := h.exec.env[path]; len(env) != 1 || env[0] != want {
			t.Errorf("the agent of %s got env %q, want %q", path, env, want)
		}
	}
	fix := byName["invoke_agent fix"]
	if len(fix) != 1 || str(fix[0], "dynworkflow.call.attempts") != "2" || str(fix[0], "gen_ai.request.model") != "m-asked" {
		t.Fatalf("fix span: %+v", fix)
	}
	retries := byName["retry"]
	if len(retries) != 1 || retries[0].Parent.SpanID() != fix[0].SpanContext.SpanID() ||
		str(retries[0], "dynworkflow.retry.class") != "transient" {
		t.Fatalf("retry spans: %+v", retries)
	}
	// The backoff of 20ms is drawn in the upper half of its step (see
	// callpolicy.Backoff): the span lasts the wait the call was given.
	wait := str(retries[0], "dynworkflow.retry.backoff_ms")
	if d := retries[0].EndTime.Sub(retries[0].StartTime); wait != strconv.FormatInt(d.Milliseconds(), 10) ||
		d < 10*time.Millisecond || d > 20*time.Millisecond {
		t.Errorf("the retry span lasts %v with a backoff of %sms, want them equal, within the 20ms step's upper half", d, wait)
	}
	broken := byName["invoke_agent broken"]
	if len(broken) != 1 || str(broken[0], "dynworkflow.call.outcome") != "failed" || broken[0].Status.Code.String() != "Error" {
		t.Fatalf("broken span: %+v", broken)
	}
	cp := byName["checkpoint"]
	if len(cp) != 1 || str(cp[0], "dynworkflow.checkpoint.source") != "headless-default" {
		t.Fatalf("checkpoint spans: %+v", cp)
	}
	ids := map[string]string{}
	for _, s := range spans {
		id := s.SpanContext.SpanID().String()
		if other, dup := ids[id]; dup {
			t.Errorf("%s and %s share the span id %s", s.Name, other, id)
		}
		ids[id] = s.Name
	}
	for _, s := range spans {
		if s.EndTime.Before(s.StartTime) {
			t.Errorf("%s ends before it starts", s.Name)
		}
		if s.Parent.IsValid() && s.Name != "retry" {
			parent := findSpan(spans, s.Parent.SpanID().String())
			if parent == nil {
				t.Errorf("%s has no parent in the trace", s.Name)
			} else if s.StartTime.Before(parent.StartTime) || s.EndTime.After(parent.EndTime) {
				t.Errorf("%s [%v, %v] is outside its parent %s [%v, %v]", s.Name, s.StartTime, s.EndTime, parent.Name, parent.StartTime, parent.EndTime)
			}
		}
	}
}

func findSpan(spans []tracetest.SpanStub, id string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].SpanContext.SpanID().String() == id {
			return &spans[i]
		}
	}
	return nil
}

func TestAResumeLinksToTheEarlierExecutions(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHarness(t, dir)
	run := h.run(ctx, t)
	first := h.flush(t)

	// A new process: the links come from the journal.
	h2 := newHarness(t, dir)
	again, err := h2.rt.Resume(ctx, run.ID(), engine.ResumeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := again.Wait(ctx); err != nil || s.Stats.Replayed != 4 {
		t.Fatalf("resume: %+v %v", s.Stats, err)
	}
	second := h2.flush(t)
	var root1, root2 *tracetest.SpanStub
	for i := range first {
		if first[i].Name == "run traced" {
			root1 = &first[i]
		}
	}
	replayed := 0
	for i := range second {
		switch {
		case second[i].Name == "run traced":
			root2 = &second[i]
		case str(second[i], "dynworkflow.call.replayed") == "true" && strings.HasPrefix(second[i].Name, "invoke_agent"):
			replayed++
		}
	}
	if root1 == nil || root2 == nil {
		t.Fatal("a root span is missing")
	}
	if root2.SpanContext.TraceID() == root1.SpanContext.TraceID() {
		t.Error("the resume reused the first execution's trace")
	}
	if len(root2.Links) != 1 || root2.Links[0].SpanContext.SpanID() != root1.SpanContext.SpanID() ||
		root2.Links[0].SpanContext.TraceID() != root1.SpanContext.TraceID() {
		t.Errorf("the resume's links: %+v, want the first root %v", root2.Links, root1.SpanContext)
	}
	if str(*root2, "dynworkflow.run.resume_rule") != "crash" || str(*root2, "dynworkflow.run.execution") != "1" {
		t.Errorf("resume root attributes: %v", root2.Attributes)
	}
	if replayed != 4 {
		t.Errorf("%d replayed call spans, want 4 (the failed call runs again)", replayed)
	}
}

func TestTracingOffAddsNothing(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	ex := &flaky{env: map[string][]string{}}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(ex), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	sub := rt.Events().Subscribe(1024, func(e engine.Event) bool { return e.Type == engine.EventRunStarted })
	defer sub.Close()
	sc, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(dir, "t.workflow.js"), Text: []byte(script)})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Start(context.Background(), engine.StartRequest{Script: sc, Options: options()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := (<-sub.C).Payload.(engine.StartedPayload); p.Trace != nil {
		t.Errorf("run.started carries a trace with tracing off: %+v", p.Trace)
	}
	for path, env := range ex.env {
		if len(env) != 0 {
			t.Errorf("%s got env %q with tracing off", path, env)
		}
	}
	detail, err := rt.Inspect(run.ID())
	if err == nil {
		b, _ := json.Marshal(detail)
		if strings.Contains(string(b), "traceId") {
			t.Error("the run's detail names a trace with tracing off")
		}
	}
}

// A run this process saw no event of (one on Temporal) is exported from
// its detail once it ended, by the same rules: the same tree.
func TestARunIsExportedFromItsDetail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHarness(t, dir)
	run := h.run(ctx, t)
	again, err := h.rt.Resume(ctx, run.ID(), engine.ResumeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := h.rt.Inspect(run.ID())
	if err != nil {
		t.Fatal(err)
	}
	// A tracer that saw nothing of the run.
	exp := &keeper{}
	tr := newTracer(exp, resource.Empty(), nil)
	tr.ExportLatest(d)
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range exp.spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	roots := byName["run traced"]
	if len(roots) != 1 {
		t.Fatalf("%d roots among %d spans", len(roots), len(exp.spans))
	}
	root := roots[0]
	want := engine.ExecutionTraceContext(run.ID(), 1)
	if root.SpanContext.TraceID().String() != want.TraceID || root.SpanContext.SpanID().String() != want.SpanID {
		t.Errorf("root %v, want the derived %+v", root.SpanContext, want)
	}
	first := engine.ExecutionTraceContext(run.ID(), 0)
	if len(root.Links) != 1 || root.Links[0].SpanContext.TraceID().String() != first.TraceID {
		t.Errorf("links %+v, want the first execution's %+v", root.Links, first)
	}
	replayed, live := 0, 0
	for _, s := range exp.spans {
		if !strings.HasPrefix(s.Name, "invoke_agent ") {
			continue
		}
		if s.Parent.SpanID() == root.SpanContext.SpanID() {
			t.Errorf("%s is outside its phase", s.Name)
		}
		switch str(s, "dynworkflow.call.outcome") {
		case "replayed":
			replayed++
		case "failed":
			live++
			if s.SpanContext.SpanID().String() != engine.CallSpanID(want.TraceID, str(s, "dynworkflow.call.path")) {
				t.Errorf("%s does not have its call's span id", s.Name)
			}
		}
	}
	if replayed != 4 || live != 1 {
		t.Errorf("%d replayed and %d live call spans, want 4 and 1 (the broken call ran again)", replayed, live)
	}
	if len(byName["phase Scan"]) != 1 || len(byName["phase Fix"]) != 1 {
		t.Errorf("phase spans: %d Scan, %d Fix", len(byName["phase Scan"]), len(byName["phase Fix"]))
	}
	if str(root, "dynworkflow.run.status") != "completed" {
		t.Errorf("root status %q", str(root, "dynworkflow.run.status"))
	}
}
