package temporal_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/internal/collectortest"
	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// The agent of these runs is a real process that answers with the
// TRACEPARENT it was given, so a test can check that every agent process
// was handed the span of its own call.
const echoTraceParent = `echo=sh -c 'printf %s "$TRACEPARENT"'`

const tracedJS = `
export const meta = { name: 'traced-js', description: 'phases only through agent()' }
const scans = await parallel(['a', 'b', 'c'].map(n => () => agent('scan ' + n, { label: 'scan-' + n, phase: 'Scan' })))
const fix = await agent('fix it', { label: 'fix', phase: 'Fix' })
return { scans, fix }
`

const tracedStar = `
meta = {"name": "traced-star", "description": "the same in Starlark"}

def main(args):
    scans = parallel([lambda n=n: agent("scan " + n, label = "scan-" + n, phase = "Scan") for n in ["a", "b", "c"]])
    fix = agent("fix it", label = "fix", phase = "Fix")
    return {"scans": scans, "fix": fix}
`

// traceOf is the spans of one trace, with its root.
type traceOf struct {
	root  collectortest.Span
	spans []collectortest.Span
}

func traces(spans []collectortest.Span) map[string]*traceOf {
	out := map[string]*traceOf{}
	for _, s := range spans {
		tr := out[s.TraceID]
		if tr == nil {
			tr = &traceOf{}
			out[s.TraceID] = tr
		}
		tr.spans = append(tr.spans, s)
		if s.ParentSpanID == "" {
			tr.root = s
		}
	}
	return out
}

func (tr *traceOf) named(name string) []collectortest.Span {
	var out []collectortest.Span
	for _, s := range tr.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// phasedCall is a call's span and the phase it is in.
type phasedCall struct {
	collectortest.Span
	phase string
}

// calls checks the shape of the traced script's trace (two phases under
// the root, Scan with three calls, Fix with one, one span each) and
// returns the calls' spans by label.
func (tr *traceOf) calls(t *testing.T) map[string]phasedCall {
	t.Helper()
	phases := map[string]string{}
	for _, title := range []string{"Scan", "Fix"} {
		ph := tr.named("phase " + title)
		if len(ph) != 1 || ph[0].ParentSpanID != tr.root.SpanID {
			t.Fatalf("phase %s: %+v", title, ph)
		}
		phases[title] = ph[0].SpanID
	}
	out := map[string]phasedCall{}
	for _, label := range []string{"scan-a", "scan-b", "scan-c", "fix"} {
		cs := tr.named("invoke_agent " + label)
		if len(cs) != 1 {
			t.Fatalf("want one span for %s, got %d", label, len(cs))
		}
		phase := "Scan"
		if label == "fix" {
			phase = "Fix"
		}
		if cs[0].ParentSpanID != phases[phase] {
			t.Errorf("%s is not a child of phase %s", label, phase)
		}
		out[label] = phasedCall{cs[0], phase}
	}
	return out
}

// rootsDone is a WaitSpans condition: n root spans arrived.
func rootsDone(n int) func([]collectortest.Span) bool {
	return func(spans []collectortest.Span) bool {
		roots := 0
		for _, s := range spans {
			if s.ParentSpanID == "" {
				roots++
			}
		}
		return roots >= n
	}
}

// checkWorkflowTrace checks the tree of a traced run of tracedJS or
// tracedStar, and that each agent process got its own call's span.
func checkWorkflowTrace(t *testing.T, tr *traceOf, name string, answers map[string]string) {
	t.Helper()
	if tr.root.Name != "run "+name || tr.root.String("dynworkflow.run.status") != "completed" ||
		tr.root.Resource["service.name"] != "dynworkflow-e2e" {
		t.Fatalf("root span %q: %v, resource %v", tr.root.Name, tr.root.Attributes, tr.root.Resource)
	}
	if got := len(tr.spans); got != 7 {
		var names []string
		for _, s := range tr.spans {
			names = append(names, s.Name)
		}
		t.Fatalf("want 7 spans (run, 2 phases, 4 calls), got %d: %q", got, names)
	}
	for label, c := range tr.calls(t) {
		phase := c.phase
		for key, want := range map[string]string{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": label, "dynworkflow.phase": phase,
			"dynworkflow.call.executor": "echo", "dynworkflow.call.outcome": "finished", "dynworkflow.call.replayed": "false",
			"dynworkflow.call.permissions": "workspace-write", "dynworkflow.call.attempts": "1",
		} {
			if got := c.String(key); got != want {
				t.Errorf("%s: %s = %q, want %q", label, key, got, want)
			}
		}
		if c.Kind != 3 { // SPAN_KIND_CLIENT
			t.Errorf("%s has kind %d, want client", label, c.Kind)
		}
		want := "00-" + tr.root.TraceID + "-" + c.SpanID + "-01"
		if got := answers[label]; got != want {
			t.Errorf("the agent process of %s had TRACEPARENT %q, want its span %q", label, got, want)
		}
	}
}

// answers reads each call's answer (its agent's TRACEPARENT) by label.
func answers(e *e2etest.Env, id string) map[string]string {
	e.T.Helper()
	r := e.DWOK("show", id, "--json")
	var d struct {
		Calls []struct {
			Label  string          `json:"label"`
			Result json.RawMessage `json:"result"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		e.T.Fatalf("show --json: %v\n%s", err, r.Stdout)
	}
	out := map[string]string{}
	for _, c := range d.Calls {
		var s string
		_ = json.Unmarshal(c.Result, &s)
		out[c.Label] = s
	}
	return out
}

// withCompanion builds the companion (the build with the OpenTelemetry
// exporters, which the default build hands a traced command to) next to
// the binary under test, once.
func withCompanion(t *testing.T) {
	t.Helper()
	e2etest.NeedCompanion(t)
}

func traceTo(e *e2etest.Env, c *collectortest.Collector, protocol string) {
	endpoint := c.HTTPEndpoint
	if protocol == "grpc" {
		endpoint = c.GRPCEndpoint
	}
	e.Environ = append(e.Environ, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+protocol,
		"OTEL_SERVICE_NAME=dynworkflow-e2e", "OTEL_BSP_SCHEDULE_DELAY=100")
}

func TestTracedRunsReachARealCollector(t *testing.T) {
	bin := collectortest.Require(t)
	withCompanion(t)
	for _, tc := range []struct {
		name, file, script, protocol string
	}{
		{"traced-js", "t.workflow.js", tracedJS, "http/protobuf"},
		{"traced-star", "t.workflow.star", tracedStar, "grpc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := collectortest.Start(t, bin)
			e := e2etest.NewEnv(t)
			traceTo(e, col, tc.protocol)
			script := e.Write(tc.file, tc.script)
			out := e.RunCompleted(script, "--trace", "--command-executor", echoTraceParent, "--executor", "echo")
			spans := col.WaitSpans(t, "the run's root span", rootsDone(1))
			trs := traces(spans)
			if len(trs) != 1 {
				t.Fatalf("want one trace, got %d", len(trs))
			}
			for _, tr := range trs {
				if got := tr.root.String("dynworkflow.run.id"); got != out.RunID {
					t.Errorf("the root names run %q, want %q", got, out.RunID)
				}
				checkWorkflowTrace(t, tr, tc.name, answers(e, out.RunID))
			}
		})
	}
}

func TestAResumedRunsTraceLinksToTheFirst(t *testing.T) {
	col := collectortest.Start(t, collectortest.Require(t))
	withCompanion(t)
	e := e2etest.NewEnv(t)
	traceTo(e, col, "http/protobuf")
	script := e.Write("t.workflow.js", tracedJS)
	out := e.RunCompleted(script, "--trace", "--command-executor", echoTraceParent, "--executor", "echo")
	col.WaitSpans(t, "the first execution", rootsDone(1))
	e.DWOK("resume", out.RunID, "--trace", "--command-executor", echoTraceParent)
	spans := col.WaitSpans(t, "the resumed execution", rootsDone(2))
	trs := traces(spans)
	if len(trs) != 2 {
		t.Fatalf("want two traces, got %d", len(trs))
	}
	var first, second *traceOf
	for _, tr := range trs {
		switch tr.root.String("dynworkflow.run.execution") {
		case "0":
			first = tr
		case "1":
			second = tr
		}
	}
	if first == nil || second == nil {
		t.Fatal("an execution's trace is missing")
	}
	if len(second.root.Links) != 1 || second.root.Links[0].TraceID != first.root.TraceID ||
		second.root.Links[0].SpanID != first.root.SpanID {
		t.Fatalf("the resume links to %+v, want the first root %s/%s", second.root.Links, first.root.TraceID, first.root.SpanID)
	}
	if second.root.String("dynworkflow.run.resume_rule") != "crash" || second.root.String("dynworkflow.run.calls.replayed") != "4" {
		t.Errorf("resumed root: %v", second.root.Attributes)
	}
	var replayed []string
	for _, s := range second.spans {
		if strings.HasPrefix(s.Name, "invoke_agent ") {
			if s.String("dynworkflow.call.replayed") != "true" || s.String("dynworkflow.call.outcome") != "replayed" {
				t.Errorf("%s in the resume: %v", s.Name, s.Attributes)
			}
			replayed = append(replayed, s.String("gen_ai.agent.name"))
		}
	}
	slices.Sort(replayed)
	if !slices.Equal(replayed, []string{"fix", "scan-a", "scan-b", "scan-c"}) {
		t.Errorf("replayed call spans %q", replayed)
	}
	// The journal keeps both executions' traces, for later resumes.
	b, err := os.ReadFile(e.JournalPath(out.RunID))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for line := range strings.Lines(string(b)) {
		var x struct {
			Run    *struct{ Trace *struct{ TraceID string } } `json:"run"`
			Resume *struct{ Trace *struct{ TraceID string } } `json:"resume"`
		}
		_ = json.Unmarshal([]byte(line), &x)
		switch {
		case x.Run != nil && x.Run.Trace != nil:
			ids = append(ids, x.Run.Trace.TraceID)
		case x.Resume != nil && x.Resume.Trace != nil:
			ids = append(ids, x.Resume.Trace.TraceID)
		}
	}
	if !slices.Equal(ids, []string{first.root.TraceID, second.root.TraceID}) {
		t.Errorf("the journal's traces %q, want %q", ids, []string{first.root.TraceID, second.root.TraceID})
	}
}

func TestTracingIsOffUnlessAskedFor(t *testing.T) {
	col := collectortest.Start(t, collectortest.Require(t))
	withCompanion(t)
	e := e2etest.NewEnv(t)
	traceTo(e, col, "http/protobuf")
	script := e.Write("t.workflow.js", tracedJS)
	out := e.RunCompleted(script, "--command-executor", echoTraceParent, "--executor", "echo")
	for label, tp := range answers(e, out.RunID) {
		if tp != "" {
			t.Errorf("%s got TRACEPARENT %q with tracing off", label, tp)
		}
	}
	// A second, traced run: once its spans are in, the first run's would
	// be too, had it sent any.
	e.RunCompleted(script, "--trace", "--command-executor", echoTraceParent, "--executor", "echo")
	spans := col.WaitSpans(t, "the traced run", rootsDone(1))
	if n := len(traces(spans)); n != 1 {
		t.Errorf("the collector has %d traces, want only the traced run's", n)
	}
	// A variable set to turn telemetry off wins over the flag.
	e.Environ = append(e.Environ, "OTEL_SDK_DISABLED=true")
	off := e.RunCompleted(script, "--trace", "--command-executor", echoTraceParent, "--executor", "echo")
	for label, tp := range answers(e, off.RunID) {
		if tp != "" {
			t.Errorf("%s got TRACEPARENT %q with OTEL_SDK_DISABLED=true", label, tp)
		}
	}
}

func TestATracingSettingItCannotHonourIsAUsageError(t *testing.T) {
	e := e2etest.NewEnv(t)
	script := e.Write("t.workflow.js", tracedJS)
	e.Environ = append(e.Environ, "OTEL_EXPORTER_OTLP_PROTOCOL=http/json")
	r := e.DW("run", script, "--trace")
	e2etest.ExpectCode(t, r, 64)
	if !strings.Contains(r.Stderr, "http/protobuf") {
		t.Errorf("the error does not say what to use instead:\n%s", r)
	}
	if len(e.JournalIDs()) != 0 {
		t.Error("a run was created")
	}
}

// TestATemporalRunIsTraced runs a workflow on Temporal (a real dev server,
// a worker process, the companion build) with tracing on: the run this
// process followed is exported from its detail when it ends, with the
// same tree as a local run's, and a resume links to it.
func TestATemporalRunIsTraced(t *testing.T) {
	bin := collectortest.Require(t)
	e := newTemporalEnv(t)
	col := collectortest.Start(t, bin)
	traceTo(e.Env, col, "http/protobuf")
	e.startWorker()
	script := e.Write("t.workflow.js", strings.ReplaceAll(tracedJS, "traced-js", "traced-temporal"))
	out := e.RunCompleted(script, e.runFlags("--trace")...)
	spans := col.WaitSpans(t, "the Temporal run's trace", rootsDone(1))
	trs := traces(spans)
	if len(trs) != 1 {
		t.Fatalf("want one trace, got %d", len(trs))
	}
	var tr *traceOf
	for _, x := range trs {
		tr = x
	}
	want := engine.ExecutionTraceContext(out.RunID, 0)
	if tr.root.Name != "run traced-temporal" || tr.root.TraceID != want.TraceID || tr.root.SpanID != want.SpanID ||
		tr.root.String("dynworkflow.run.status") != "completed" || tr.root.String("dynworkflow.run.id") != out.RunID {
		t.Fatalf("root %s %s/%s %v, want the trace %+v", tr.root.Name, tr.root.TraceID, tr.root.SpanID, tr.root.Attributes, want)
	}
	for label, c := range tr.calls(t) {
		if c.String("dynworkflow.call.outcome") != "finished" ||
			c.String("gen_ai.agent.name") != label || c.String("dynworkflow.call.executor") != "simulate" {
			t.Errorf("%s: parent %s, %v", label, c.ParentSpanID, c.Attributes)
		}
		if c.SpanID != engine.CallSpanID(want.TraceID, c.String("dynworkflow.call.path")) {
			t.Errorf("%s does not have its call's span id", label)
		}
		if !c.Start.Before(c.End) && !c.Start.Equal(c.End) {
			t.Errorf("%s ends before it starts", label)
		}
	}

	// A resume on Temporal replays every call and links to the first.
	r := e.DW(append([]string{"resume", out.RunID, "--json", "--trace"}, e.flags()...)...)
	e2etest.ExpectCode(t, r, 0)
	spans = col.WaitSpans(t, "the resumed execution", rootsDone(2))
	second := engine.ExecutionTraceContext(out.RunID, 1)
	found := false
	for _, x := range traces(spans) {
		if x.root.TraceID != second.TraceID {
			continue
		}
		found = true
		if len(x.root.Links) != 1 || x.root.Links[0].TraceID != want.TraceID || x.root.Links[0].SpanID != want.SpanID {
			t.Errorf("the resume links to %+v, want %+v", x.root.Links, want)
		}
		replayed := 0
		for _, s := range x.spans {
			if s.String("dynworkflow.call.outcome") == "replayed" {
				replayed++
			}
		}
		if replayed != 4 {
			t.Errorf("%d replayed call spans in the resume, want 4", replayed)
		}
	}
	if !found {
		t.Errorf("no trace of the resume")
	}
}

// TestTheDefaultBuildHandsTracingOver checks what the build without the
// OpenTelemetry SDK does when tracing is asked for: it links none of it;
// without its companion, --trace is a usage error saying how to install
// it, and a variable alone (set for other programs too) runs untraced with
// a warning. With the companion, the first test of this file shows the
// runs traced.
func TestTheDefaultBuildHandsTracingOver(t *testing.T) {
	out, err := exec.Command(e2etest.GoTool(), "version", "-m", e2etest.Binary()).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "go.opentelemetry.io") || strings.Contains(line, "google.golang.org/grpc") {
			t.Errorf("the default build links %s", strings.TrimSpace(line))
		}
	}
	e := e2etest.NewEnv(t)
	leanAlone(t, e, "")
	script := e.Write("t.workflow.js", tracedJS)
	r := e.DW("run", script, "--trace")
	e2etest.ExpectCode(t, r, 64)
	if !strings.Contains(r.Stderr, installCommand) {
		t.Errorf("no way to install the companion in:\n%s", r)
	}
	if len(e.JournalIDs()) != 0 {
		t.Error("a run was created")
	}
	e.Environ = append(e.Environ, "OTEL_TRACES_EXPORTER=otlp")
	r = e.DW("run", script)
	e2etest.ExpectCode(t, r, 0)
	if !strings.Contains(r.Stderr, "running untraced") {
		t.Errorf("no warning that the run is untraced:\n%s", r)
	}
}
