package jsvm

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

// jitterEnv answers every call after a random delay, so that branches
// interleave differently on every run.
func jitterEnv() *langtest.Env {
	env := langtest.NewEnv()
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		return json.Marshal("echo: " + c.Prompt)
	}
	return env
}

// Every call must carry the scope of the branch whose code made it, across
// awaits, .then chains, helpers and nested fan-outs, however the branches
// interleave.
func TestScopesFollowBranches(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		paths map[string]string // prompt -> scope path
	}{
		{
			name: "async thunks that await twice",
			body: `const r = await parallel([0, 1, 2, 3].map(i => async () => {
  const a = await agent('a' + i)
  const b = await agent('b' + i)
  return [a, b]
}))
await agent('after')`,
			paths: map[string]string{
				"a0": "/par.0/0", "b0": "/par.0/0", "a1": "/par.0/1", "b1": "/par.0/1",
				"a2": "/par.0/2", "b2": "/par.0/2", "a3": "/par.0/3", "b3": "/par.0/3",
				"after": "/",
			},
		},
		{
			name: "then chains",
			body: `await parallel([0, 1, 2].map(i => () =>
  agent('x' + i).then(r => agent('y' + i)).then(r => agent('z' + i)).catch(() => null)))`,
			paths: map[string]string{
				"x0": "/par.0/0", "y0": "/par.0/0", "z0": "/par.0/0",
				"x1": "/par.0/1", "y1": "/par.0/1", "z1": "/par.0/1",
				"x2": "/par.0/2", "y2": "/par.0/2", "z2": "/par.0/2",
			},
		},
		{
			name: "nested parallel inside a pipeline stage",
			body: `await pipeline(['a', 'b'],
  async item => {
    const parts = await parallel([1, 2].map(j => async () => agent(item + j)))
    return agent(item + '-sum')
  },
  (prev, item) => agent(item + '-final'))`,
			paths: map[string]string{
				"a1": "/pipe.0/0/stage.0/par.0/0", "a2": "/pipe.0/0/stage.0/par.0/1", "a-sum": "/pipe.0/0/stage.0",
				"b1": "/pipe.0/1/stage.0/par.0/0", "b2": "/pipe.0/1/stage.0/par.0/1", "b-sum": "/pipe.0/1/stage.0",
				"a-final": "/pipe.0/0/stage.1", "b-final": "/pipe.0/1/stage.1",
			},
		},
		{
			name: "helpers, Promise.all and nested parallel in branches",
			body: `async function check(x) {
  await agent('c' + x)
  return agent('d' + x)
}
await agent('first')
await parallel([0, 1].map(i => async () => {
  await Promise.all([check(i), agent('e' + i)])
  await parallel([() => agent('f' + i), () => check('g' + i)])
}))
await agent('last')`,
			paths: map[string]string{
				"first": "/", "last": "/",
				"c0": "/par.0/0", "d0": "/par.0/0", "e0": "/par.0/0",
				"c1": "/par.0/1", "d1": "/par.0/1", "e1": "/par.0/1",
				"f0": "/par.0/0/par.0/0", "cg0": "/par.0/0/par.0/1", "dg0": "/par.0/0/par.0/1",
				"f1": "/par.0/1/par.0/0", "cg1": "/par.0/1/par.0/1", "dg1": "/par.0/1/par.0/1",
			},
		},
		{
			name: "a second fan-out in a scope gets the next ordinal",
			body: `await parallel([() => agent('p0')])
await pipeline([1], () => agent('q0'))
await parallel([async () => { await agent('r0'); await parallel([() => agent('s0')]); await parallel([() => agent('t0')]) }])`,
			paths: map[string]string{
				"p0": "/par.0/0", "q0": "/pipe.1/0/stage.0", "r0": "/par.2/0",
				"s0": "/par.2/0/par.0/0", "t0": "/par.2/0/par.1/0",
			},
		},
		{
			name: "calls started but not awaited keep their branch",
			body: `await parallel([0, 1].map(i => () => {
  agent('fire' + i).then(() => agent('then' + i))
  return agent('main' + i)
}))`,
			paths: map[string]string{
				"fire0": "/par.0/0", "then0": "/par.0/0", "main0": "/par.0/0",
				"fire1": "/par.0/1", "then1": "/par.0/1", "main1": "/par.0/1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // every run interleaves differently
				env := jitterEnv()
				mustRun(t, env, tt.body)
				if n := len(env.Calls()); n != len(tt.paths) {
					t.Fatalf("%d calls, want %d: %q", n, len(tt.paths), env.CallList())
				}
				for prompt, want := range tt.paths {
					if got := env.PathOf(prompt); got != want {
						t.Fatalf("agent(%q) ran in %s, want %s\ncalls: %q", prompt, got, want, env.CallList())
					}
				}
				if n := env.Overlaps(); n > 0 {
					t.Fatalf("%d engine calls overlapped: calls must all be made on the script's thread", n)
				}
			}
		})
	}
}

// phase() and log() belong to the branch that calls them too.
func TestPhaseAndLogFollowBranches(t *testing.T) {
	env := jitterEnv()
	mustRun(t, env, `await parallel([0, 1].map(i => async () => {
  await agent('x' + i)
  phase('P' + i)
  log('L' + i)
}))`)
	for _, want := range []string{"/par.0/0 P0", "/par.0/1 P1"} {
		if !contains(env.Phases(), want) {
			t.Errorf("phases %q lack %q", env.Phases(), want)
		}
	}
	for _, want := range []string{"info /par.0/0 L0", "info /par.0/1 L1"} {
		if !contains(env.Logs(), want) {
			t.Errorf("logs %q lack %q", env.Logs(), want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
