package jsvm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

// nopEnv answers every call at once with "ok": what remains is the host's
// own cost. With twice set, it answers agent calls twice, which a host must
// survive.
type nopEnv struct {
	scope lang.Scope
	twice bool
}

func (e nopEnv) Args() json.RawMessage { return nil }
func (e nopEnv) Root() lang.Scope      { return e.scope }
func (e nopEnv) Scheduler() lang.Scheduler {
	return lang.Goroutines{}
}
func (e nopEnv) Agent(_ context.Context, _ lang.Scope, _ string, _ lang.AgentOptions, done lang.Done) {
	done(json.RawMessage(`"ok"`), nil)
	if e.twice {
		done(json.RawMessage(`"again"`), nil)
	}
}
func (e nopEnv) Checkpoint(_ context.Context, _ lang.Scope, _ lang.CheckpointRequest, done lang.Done) {
	done(json.RawMessage(`true`), nil)
}
func (e nopEnv) Workflow(_ context.Context, _ lang.Scope, _ string, _ json.RawMessage, done lang.Done) {
	done(json.RawMessage(`null`), nil)
}
func (e nopEnv) Parallel(s lang.Scope, n int) ([]lang.Scope, error) {
	out := make([]lang.Scope, n)
	for i := range out {
		out[i] = s
	}
	return out, nil
}
func (e nopEnv) Pipeline(s lang.Scope, items, _ int) ([]lang.Scope, error) {
	return e.Parallel(s, items)
}
func (e nopEnv) Stage(item lang.Scope, _ int) lang.Scope { return item }
func (e nopEnv) BranchFailed(lang.Scope, error)          {}
func (e nopEnv) Phase(lang.Scope, string)                {}
func (e nopEnv) Log(lang.Scope, string, string)          {}
func (e nopEnv) Budget() lang.Budget                     { return &langtest.Budget{} }
func (e nopEnv) Cwd() string                             { return "/project" }

// BenchmarkAgentCall measures the host's overhead per agent() call: one op
// is a run of 1,000 calls in one parallel(), including the fresh VM.
func BenchmarkAgentCall(b *testing.B) {
	const calls = 1000
	s, err := load(okMeta + `const r = await parallel(Array.from({ length: 1000 }, (_, i) => () => agent('p' + i, { label: 'l' + i })))
return r.length`)
	if err != nil {
		b.Fatal(err)
	}
	env := nopEnv{scope: langtest.NewEnv().Root()}
	b.ReportAllocs()
	for b.Loop() {
		out, err := s.Run(context.Background(), env)
		if err != nil || string(out) != "1000" {
			b.Fatalf("run = %s, %v", out, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// BenchmarkTextAnswer is what the host spends handing the script a text
// answer of 100 KB (one op is one call): on Temporal, a worker does this
// again for every answer each time it replays a run's history.
func BenchmarkTextAnswer(b *testing.B) {
	answer, _ := json.Marshal(strings.Repeat("a line of an agent's answer, with a \"quote\"\n", 2200))
	s, err := load(okMeta + "return (await agent('x')).length")
	if err != nil {
		b.Fatal(err)
	}
	env := langtest.NewEnv()
	env.Answer = func(context.Context, langtest.Call) (json.RawMessage, error) { return answer, nil }
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		if _, err := s.Run(context.Background(), env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunEmpty is the fixed cost of a run: a fresh VM and the prelude.
func BenchmarkRunEmpty(b *testing.B) {
	s, err := load(okMeta + "return 1")
	if err != nil {
		b.Fatal(err)
	}
	env := nopEnv{scope: langtest.NewEnv().Root()}
	for b.Loop() {
		if _, err := s.Run(context.Background(), env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad loads a script of about 150 KB, the size of the largest
// public workflow scripts.
func BenchmarkLoad(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(okMeta)
	for i := 0; sb.Len() < 150_000; i++ {
		fmt.Fprintf(&sb, "const r%d = await parallel([1, 2, 3].map(j => () => agent(`step %d item ${j}`, { label: 'l%d', schema: { type: 'object', properties: { ok: { type: 'boolean' } } } })))\n", i, i, i)
	}
	src := lang.Source{Path: "big.workflow.js", Text: []byte(sb.String())}
	h := New()
	b.SetBytes(int64(len(src.Text)))
	for b.Loop() {
		if _, err := h.Load(src); err != nil {
			b.Fatal(err)
		}
	}
}
