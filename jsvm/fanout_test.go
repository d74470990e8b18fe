package jsvm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

func TestParallel(t *testing.T) {
	env := langtest.NewEnv()
	// Answers arrive in the reverse of the order the calls were made.
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		time.Sleep(time.Duration(4-len(c.Prompt)) * 15 * time.Millisecond)
		return json.Marshal(c.Prompt)
	}
	got := mustRun(t, env, "return await parallel(['a', 'bb', 'ccc'].map(p => () => agent(p)))")
	if want := `["a","bb","ccc"]`; got != want {
		t.Errorf("result = %s, want %s (input order)", got, want)
	}
}

func TestParallelBranchesThatFail(t *testing.T) {
	env := langtest.NewEnv()
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		if c.Prompt == "fails" {
			return nil, errBudget
		}
		return json.Marshal(c.Prompt)
	}
	got := mustRun(t, env, `return await parallel([
  () => { throw new Error('sync') },
  async () => { await agent('ok'); throw new TypeError('async') },
  () => agent('fails'),
  () => 5,
  () => {},
  () => agent('ok'),
])`)
	if want := `[null,null,null,5,null,"ok"]`; got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
	want := []string{
		"/par.0/0 t.workflow.js:3:17: Error: sync",
		"/par.0/1 t.workflow.js:4:42: TypeError: async",
		"/par.0/2 t.workflow.js:5:14: Error: budget exhausted: 1000 of 1000 tokens spent",
	}
	if !reflect.DeepEqual(sortedCopy(env.Failures()), want) {
		t.Errorf("failures =\n%s\nwant\n%s", strings.Join(env.Failures(), "\n"), strings.Join(want, "\n"))
	}
}

func TestParallelMisuse(t *testing.T) {
	tests := []struct{ body, want string }{
		{"await parallel([agent('x')])", "TypeError: parallel(): item 0 is a promise, not a function; parallel() takes functions that return promises; wrap each call: () => agent(...)"},
		{"await parallel([() => 1, 'x'])", "TypeError: parallel(): item 1 is a string, not a function; parallel() takes functions"},
		{"await parallel(() => 1)", "TypeError: parallel() takes an array of functions, not a function"},
		{"await parallel()", "TypeError: parallel() takes an array of functions, not undefined"},
		{"await pipeline('abc', x => x)", "TypeError: pipeline() takes an array of items first, not a string"},
		{"await pipeline([1])", "TypeError: pipeline() needs at least one stage: pipeline(items, item => agent(...))"},
		{"await pipeline([1], x => x, 'y')", "TypeError: pipeline(): stage 1 is a string, not a function"},
		{"await parallel([() => 1, () => 2, () => 3])", "Error: parallel() takes at most 2 items, not 3"},
		{"await pipeline([1, 2, 3], x => x)", "Error: pipeline() takes at most 2 items, not 3"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			env := langtest.NewEnv()
			env.MaxItems = 2
			le := runError(t, env, tt.body)
			if !strings.HasPrefix(le.Message, tt.want) || le.Line != 2 {
				t.Errorf("error = %d:%d %s\nwant  2:_ %s", le.Line, le.Column, le.Message, tt.want)
			}
		})
	}
	// The item cap is an error the script can catch.
	env := langtest.NewEnv()
	env.MaxItems = 2
	if got := mustRun(t, env, "try { await parallel([() => 1, () => 2, () => 3]) } catch (e) { return 'caught' }"); got != `"caught"` {
		t.Errorf("result = %s", got)
	}
}

func TestEmptyFanouts(t *testing.T) {
	got := mustRun(t, langtest.NewEnv(), "return [await parallel([]), await pipeline([], x => x)]")
	if got != "[[],[]]" {
		t.Errorf("result = %s", got)
	}
}

func TestPipeline(t *testing.T) {
	env := langtest.NewEnv()
	got := mustRun(t, env, `return await pipeline(['a', 'b', 'c'],
  (prev, item, i) => agent(prev + i),
  (prev, item, i) => [prev, item, i])`)
	if want := `[["echo: a0","a",0],["echo: b1","b",1],["echo: c2","c",2]]`; got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
	want := []string{"/pipe.0/0/stage.0 a0", "/pipe.0/1/stage.0 b1", "/pipe.0/2/stage.0 c2"}
	if got := env.CallList(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
}

func TestPipelineFailuresAndNulls(t *testing.T) {
	env := langtest.NewEnv()
	got := mustRun(t, env, `return await pipeline([0, 1, 2, 3],
  x => x === 1 ? null : x,
  async x => { if (x === 2) throw new Error('two'); return x === null ? null : agent('second ' + x) },
  x => x === null ? 'got null' : agent('third ' + x))`)
	if want := `["echo: third echo: second 0","got null",null,"echo: third echo: second 3"]`; got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
	for _, c := range env.CallList() {
		if strings.HasPrefix(c, "/pipe.0/2/stage.2") {
			t.Errorf("item 2 ran its third stage after its second threw: %s", c)
		}
	}
	want := []string{"/pipe.0/2 t.workflow.js:4:35: Error: two"}
	if !reflect.DeepEqual(env.Failures(), want) {
		t.Errorf("failures = %q, want %q", env.Failures(), want)
	}
}

// Each item goes on to its next stage as soon as it is ready: item 0 reaches
// stage 2 while item 1 is still held in stage 0. With a barrier between
// stages, item 1 would wait for a call that never comes, and the run would
// time out.
func TestPipelineHasNoBarrier(t *testing.T) {
	env := langtest.NewEnv()
	reached := make(chan struct{})
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		switch c.Prompt {
		case "a:2":
			close(reached)
		case "b:0":
			select {
			case <-reached:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return json.Marshal(c.Prompt)
	}
	s, err := load(okMeta + `return await pipeline(['a', 'b'],
  item => agent(item + ':0'),
  (prev, item) => agent(item + ':1'),
  (prev, item) => agent(item + ':2'))`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := s.Run(ctx, env)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("item 0 never reached stage 2 while item 1 was in stage 0: pipeline() has a barrier")
	}
	if err != nil || string(out) != `["a:2","b:2"]` {
		t.Fatalf("Run = %s, %v", out, err)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
