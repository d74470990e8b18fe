package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// The same runs on both backends, through the call policy both of them
// call: the same calls at the same paths with the same answers, the same
// replays after every resume, the same outcome.

// faults wraps the simulated executor with failures of our own and of the
// provider that the simulated executor has no marker for. "[fault:ours=N]"
// in a prompt fails its first N attempts as a fault of ours;
// "[fault:quota]" fails as rate limited while quota is set. It counts the
// answers it gave, by prompt: what was paid for.
type faults struct {
	sim   *simulate.Executor
	quota atomic.Bool
	mu    sync.Mutex
	paid  map[string]int
}

func newFaults(defaults executors.Defaults) *faults {
	return &faults{sim: simulate.New(simulate.Config{Seed: 1, Defaults: defaults}), paid: map[string]int{}}
}

func (f *faults) Name() string                 { return "simulate" }
func (f *faults) Defaults() executors.Defaults { return executors.DefaultsOf(f.sim) }

func (f *faults) Run(ctx context.Context, req executors.Request, o executors.Observer) (executors.Result, error) {
	if i := strings.Index(req.Prompt, "[fault:ours="); i >= 0 {
		n, _ := strconv.Atoi(req.Prompt[i+len("[fault:ours=") : i+len("[fault:ours=")+1])
		if req.Attempt <= n {
			return executors.Result{}, &executors.Error{Class: executors.Infrastructure, Message: "spawn: resource temporarily unavailable"}
		}
	}
	if strings.Contains(req.Prompt, "[fault:quota]") && f.quota.Load() {
		return executors.Result{}, &executors.Error{Class: executors.RateLimited, Message: "429: usage limit reached", RetryAfter: time.Hour}
	}
	clean := req
	clean.Prompt = strings.NewReplacer("[fault:quota]", "", "[fault:ours=1]", "", "[fault:ours=2]", "").Replace(req.Prompt)
	res, err := f.sim.Run(ctx, clean, o)
	if err == nil {
		f.mu.Lock()
		f.paid[req.Prompt]++
		f.mu.Unlock()
	}
	return res, err
}

// pair is one run on both backends: a local runtime over a state of its
// own, and Temporal with in-process workers.
type pair struct {
	t      *testing.T
	c      *Client
	dir    string
	state  string
	exec   *faults
	rt     *engine.Runtime
	opts   engine.Options
	local  string // run ids
	remote string
}

func newPair(t *testing.T, c *Client, exec *faults, opts engine.Options) *pair {
	p := &pair{t: t, c: c, dir: t.TempDir(), state: filepath.Join(t.TempDir(), "state"), exec: exec, opts: opts}
	p.runtime(exec)
	return p
}

// runtime (re)opens the local runtime on exec, as a new process with a
// new configuration would.
func (p *pair) runtime(exec executors.Executor) {
	st, err := store.Open(p.state, p.dir)
	if err != nil {
		p.t.Fatal(err)
	}
	if p.rt, err = engine.New(engine.Config{Store: st, Hosts: hosts(), Executors: executors.NewSet(exec), Cwd: p.dir}); err != nil {
		p.t.Fatal(err)
	}
}

// defaults is the configuration the local runtime resolves calls with.
func (p *pair) defaults() map[string]executors.Defaults {
	out := map[string]executors.Defaults{}
	for _, name := range p.rt.Executors().Names() {
		e, _ := p.rt.Executors().Get(name)
		out[name] = executors.DefaultsOf(e)
	}
	return out
}

func (p *pair) write(text string) string {
	path := filepath.Join(p.dir, "gen.workflow.js")
	write(p.t, path, text)
	write(p.t, filepath.Join(p.dir, "child.workflow.js"), genChild)
	return path
}

// genChild is the child workflow generated scripts start.
const genChild = `export const meta = { name: 'child', description: 'a child' }
return [await agent('c0 ' + args.n), await parallel([() => agent('c1 ' + args.n), () => agent('c2 [simulate:transient]')])]
`

// start runs text on both backends, compares, and returns the local
// outcome.
func (p *pair) start(what, text string) engine.Outcome {
	p.t.Helper()
	path := p.write(text)
	script, err := p.rt.Hosts().LoadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	r, err := p.rt.Start(context.Background(), engine.StartRequest{Script: script, Options: p.opts})
	if err != nil {
		p.t.Fatal(err)
	}
	p.local = r.ID()
	lo := (&local{p.rt}).wait(p.t, r)
	b, s, err := BundleFile(p.c.hosts, path)
	if err != nil {
		p.t.Fatal(err)
	}
	in, err := p.c.Start(context.Background(), StartRequest{Bundle: b, Script: s, Options: p.opts, Cwd: p.dir,
		Heartbeat: 5 * time.Second, Defaults: p.defaults()})
	if err != nil {
		p.t.Fatal(err)
	}
	p.remote = in.RunID
	p.compare(what, lo)
	return lo
}

// resume resumes both with text, compares, and returns the local outcome.
func (p *pair) resume(what, text string) engine.Outcome {
	p.t.Helper()
	path := p.write(text)
	script, err := p.rt.Hosts().LoadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	// A user's resume, as the CLI makes it: one before a quota's reset
	// tries now, as on Temporal.
	r, err := p.rt.Resume(context.Background(), p.local, engine.ResumeRequest{Script: script, TryNow: true})
	if err != nil {
		p.t.Fatal(err)
	}
	lo := (&local{p.rt}).wait(p.t, r)
	b, s, err := BundleFile(p.c.hosts, path)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.c.Resume(context.Background(), p.remote, ResumeRequest{Bundle: b, Script: s, Defaults: p.defaults()}); err != nil {
		p.t.Fatal(err)
	}
	p.compare(what, lo)
	return lo
}

// samePause reports whether Temporal's pause reason is the local one. A
// local run parked for its quota says until when (the machine's quota
// governor, which Temporal has not): the provider's words must match.
func samePause(remote string, lo engine.Outcome) bool {
	if lo.ResumeAt == nil {
		return remote == lo.PauseReason
	}
	words, ok := strings.CutPrefix(remote, "rate limited: ")
	return ok && strings.Contains(lo.PauseReason, "("+words+")")
}

// counts checks an outcome's replayed and live calls.
func counts(t *testing.T, what string, o engine.Outcome, replayed, live int) {
	t.Helper()
	if o.Stats.Replayed != replayed || o.Stats.Live != live {
		t.Errorf("%s: %d replayed and %d live, want %d and %d", what, o.Stats.Replayed, o.Stats.Live, replayed, live)
	}
}

func (p *pair) compare(what string, lo engine.Outcome) {
	p.t.Helper()
	st := wait(p.t, p.c, p.remote)
	if st.Result == nil {
		st.Result = json.RawMessage("null")
	}
	ld, err := p.rt.Inspect(p.local)
	if err != nil {
		p.t.Fatal(err)
	}
	td, err := p.c.Detail(context.Background(), p.remote)
	if err != nil {
		p.t.Fatal(err)
	}
	if st.Status != lo.Status || string(st.Result) != string(lo.Result) || st.Error != lo.Error || !samePause(st.PauseReason, lo) {
		p.t.Errorf("%s: on Temporal %s %s %q %q\nlocally             %s %s %q %q", what, st.Status, st.Result, st.Error, st.PauseReason,
			lo.Status, lo.Result, lo.Error, lo.PauseReason)
	}
	g, w := st.Stats, lo.Stats
	if g.Replayed != w.Replayed || g.Live != w.Live || g.Failed != w.Failed || g.Retried != w.Retried {
		p.t.Errorf("%s: on Temporal %d replayed, %d live, %d failed, %d retried; locally %d, %d, %d, %d", what,
			g.Replayed, g.Live, g.Failed, g.Retried, w.Replayed, w.Live, w.Failed, w.Retried)
	}
	if g, w := strings.Join(callLines(td), "\n"), strings.Join(callLines(ld), "\n"); g != w {
		p.t.Errorf("%s: calls on Temporal:\n%s\nlocally:\n%s", what, g, w)
	}
	if g, w := epochs(td), epochs(ld); g != w {
		p.t.Errorf("%s: which execution answered each call, on Temporal:\n%s\nlocally:\n%s", what, g, w)
	}
}

// genScript writes a script of nested fan-outs from rng: parallel() and
// pipeline() up to three deep, child workflows, checkpoints, and agents
// that fail for good, fail once (transient), fail on a fault of ours, and
// break their schema once.
func genScript(rng *rand.Rand, children bool) (text string, prompts []string) {
	var expr func(depth int) string
	n := 0
	agent := func(prefix string) string {
		n++
		p := fmt.Sprintf("%s%d", prefix, n)
		prompts = append(prompts, p)
		switch k := rng.IntN(14); {
		case k == 0:
			return fmt.Sprintf("agent('%s [simulate:fail]')", p)
		case k == 1:
			return fmt.Sprintf("agent('%s [simulate:transient]')", p)
		case k == 2:
			return fmt.Sprintf("agent('%s [fault:ours=2]')", p)
		case k == 3:
			return fmt.Sprintf("agent('%s [simulate:invalid-once]', { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } })", p)
		}
		return fmt.Sprintf("agent('%s')", p)
	}
	expr = func(depth int) string {
		switch k := rng.IntN(7); {
		case depth >= 3 || k < 2 || k >= 5 && !children:
			return agent("p")
		case k == 5:
			n++
			return fmt.Sprintf("workflow('child.workflow.js', { n: %d })", n)
		case k == 6:
			n++
			return fmt.Sprintf("checkpoint('go on %d?', { kind: 'confirm', headless: 'default', default: true })", n)
		case k < 4:
			parts := make([]string, 1+rng.IntN(3))
			for i := range parts {
				parts[i] = "() => " + expr(depth+1)
			}
			return "parallel([" + strings.Join(parts, ", ") + "])"
		default:
			items := make([]string, 1+rng.IntN(3))
			for i := range items {
				items[i] = fmt.Sprintf("'i%d'", i)
			}
			stages := make([]string, 1+rng.IntN(2))
			for i := range stages {
				n++
				p := fmt.Sprintf("s%d", n)
				prompts = append(prompts, p)
				stages[i] = fmt.Sprintf("(prev, item) => agent('%s ' + item + ' ' + JSON.stringify(prev).slice(0, 16))", p)
			}
			return "pipeline([" + strings.Join(items, ", ") + "], " + strings.Join(stages, ", ") + ")"
		}
	}
	var b strings.Builder
	b.WriteString("export const meta = { name: 'gen', description: 'generated' }\nconst out = []\n")
	for range 1 + rng.IntN(3) {
		fmt.Fprintf(&b, "out.push(await %s)\n", expr(0))
	}
	b.WriteString("return out\n")
	return b.String(), prompts
}

// TestParity runs generated scripts on both backends, then edits one call
// of each and resumes, then reverts the edit and resumes again; some with
// a small agent cap or token budget. PARITY_SCRIPTS=N runs more.
func TestParity(t *testing.T) {
	c := newClient(t)
	exec := newFaults(executors.Defaults{})
	startWorker(t, c, "w1", executors.NewSet(exec))
	startWorker(t, c, "w2", executors.NewSet(exec))
	count := 6
	if n, err := strconv.Atoi(os.Getenv("PARITY_SCRIPTS")); err == nil {
		count = n
	}
	seed := uint64(time.Now().UnixNano())
	if n, err := strconv.ParseUint(os.Getenv("PARITY_SEED"), 10, 64); err == nil {
		seed = n
	}
	t.Logf("seed %d (PARITY_SEED=%d repeats this run)", seed, seed)
	for i := range count {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		// A child workflow's calls interleave with its parent's by timing
		// locally, and after a round trip to a worker on Temporal: which of
		// them a cap or a budget refuses is not fixed. Scripts under a
		// limit have no children.
		limit := rng.IntN(4)
		text, prompts := genScript(rng, limit >= 2)
		for len(prompts) == 0 {
			text, prompts = genScript(rng, limit >= 2)
		}
		opts := engine.DefaultOptions()
		opts.RetryBackoff = time.Millisecond
		opts.Concurrency = 4
		limits := ""
		switch limit {
		// Which call meets a cap or a budget depends on the order calls
		// are made in, which a pipeline's later stages take from the order
		// answers come in: one call at a time, it is the same on both.
		case 0:
			opts.MaxAgents, opts.Concurrency = 1+rng.IntN(len(prompts)), 1
			limits = fmt.Sprintf(", --max-agents %d", opts.MaxAgents)
		case 1:
			opts.TokenBudget, opts.Concurrency = int64(50+rng.IntN(400)), 1
			limits = fmt.Sprintf(", --token-budget %d", opts.TokenBudget)
		}
		t.Run(fmt.Sprintf("script %d%s", i, limits), func(t *testing.T) {
			p := newPair(t, c, exec, opts)
			p.start("first run", text)
			edited := rng.IntN(len(prompts))
			target := prompts[edited]
			v2 := strings.Replace(text, "'"+target, "'"+target+" edited", 1)
			p.resume(fmt.Sprintf("%s edited", target), v2)
			p.resume("crash resume", v2)
			p.resume("edit reverted", text)
			if t.Failed() {
				t.Logf("the script:\n%s", text)
			}
			replay(t, c, p.remote)
		})
	}
}

// TestParityAcrossEditsAndFaults holds the cases where the two backends
// used to part: fingerprints resolved against the executor's
// configuration, an answer a rate limit made Temporal forget, edit then
// edit then revert, and faults of ours.
func TestParityAcrossEditsAndFaults(t *testing.T) {
	c := newClient(t)
	opts := engine.DefaultOptions()
	opts.RetryBackoff = time.Millisecond

	t.Run("configured model changes", func(t *testing.T) {
		first, second := newFaults(executors.Defaults{Model: "model-a"}), newFaults(executors.Defaults{Model: "model-b"})
		startWorker(t, c, "w1", executors.NewSet(first))
		text := "export const meta = { name: 'gen', description: 'configured' }\nreturn [await agent('a'), await agent('b', { model: 'pinned' })]\n"
		p := newPair(t, c, first, opts)
		p.start("first run", text)
		p.runtime(second)
		// The call on the configured model runs again; the one that names
		// its model replays.
		counts(t, "resumed", p.resume("resumed under another configured model", text), 1, 1)
	})

	t.Run("rate limit after an edit", func(t *testing.T) {
		exec := newFaults(executors.Defaults{})
		startWorker(t, c, "w2", executors.NewSet(exec))
		v1 := "export const meta = { name: 'gen', description: 'quota' }\nconst a = await agent('a')\nreturn [a, await agent('c [fault:quota]')]\n"
		v2 := strings.Replace(v1, "agent('a')", "agent('a, edited')", 1)
		p := newPair(t, c, exec, opts)
		p.start("first run", v1)
		exec.quota.Store(true)
		p.resume("edited, then rate limited", v2)
		exec.quota.Store(false)
		// The c answered before the edit came after the old a: it runs
		// again, on both.
		counts(t, "resumed", p.resume("resumed after the quota reset", v2), 1, 1)
	})

	t.Run("edit, edit, revert", func(t *testing.T) {
		exec := newFaults(executors.Defaults{})
		startWorker(t, c, "w3", executors.NewSet(exec))
		v1 := "export const meta = { name: 'gen', description: 'revert' }\nreturn [await agent('a'), await parallel([() => agent('p'), () => agent('q')]), await agent('c')]\n"
		p := newPair(t, c, exec, opts)
		p.start("v1", v1)
		p.resume("v2", strings.Replace(v1, "agent('a')", "agent('b')", 1))
		p.resume("v3", strings.Replace(v1, "agent('a')", "agent('b2')", 1))
		// Every call after the first change runs live, though v1's own
		// answers are still in the history.
		counts(t, "back to v1", p.resume("back to v1", v1), 0, 4)
	})

	t.Run("faults of ours", func(t *testing.T) {
		exec := newFaults(executors.Defaults{})
		startWorker(t, c, "w4", executors.NewSet(exec))
		text := "export const meta = { name: 'gen', description: 'ours' }\nreturn await parallel([1, 2, 3, 4].map(i => () => agent('x' + i + ' [fault:ours=2]', { retries: 0 })))\n"
		p := newPair(t, c, exec, opts)
		o := p.start("a fault that clears", text)
		if o.Stats.Live != 4 || o.Stats.Failed != 0 || o.Stats.Retried != 8 {
			t.Errorf("%d live, %d failed, %d retried; want 4, 0 and 8: a fault of ours is retried, not the agent's failure", o.Stats.Live, o.Stats.Failed, o.Stats.Retried)
		}
		exec.mu.Lock()
		defer exec.mu.Unlock()
		for prompt, n := range exec.paid {
			if n != 2 { // once per backend
				t.Errorf("%s paid %d times over both backends, want 2", prompt, n)
			}
		}
	})

	t.Run("a call under way when the script throws", func(t *testing.T) {
		// PARITY_SEED=1796158360353649457: at one call at a time, s1 i1
		// takes the slot s1 i0 frees before s2 i0 meets the cap. Temporal
		// ended the run on the throw, its answer lost and its call shown
		// running; both now let it finish, and a resume replays it.
		exec := newFaults(executors.Defaults{})
		startWorker(t, c, "w6", executors.NewSet(exec))
		capped := opts
		capped.MaxAgents, capped.Concurrency = 2, 1
		text := "export const meta = { name: 'gen', description: 'under way' }\nconst out = []\n" +
			"out.push(await pipeline(['i0', 'i1'], (prev, item) => agent('s1 ' + item), (prev, item) => agent('s2 ' + item)))\n" +
			"out.push(await agent('p3'))\nreturn out\n"
		p := newPair(t, c, exec, capped)
		o := p.start("first run", text)
		if o.Status != engine.StatusFailed || !strings.Contains(o.Error, "cap of 2 agents") {
			t.Errorf("first run: %s %q, want failed at the cap", o.Status, o.Error)
		}
		counts(t, "first run", o, 0, 2)
		counts(t, "resumed", p.resume("resumed", text), 2, 0)
		replay(t, c, p.remote)
	})

	t.Run("defaults reach the workflow", func(t *testing.T) {
		// The answer of a call is the same whatever its model; what the
		// workflow resolved is in the activity's input, which show prints.
		exec := newFaults(executors.Defaults{Model: "model-a", Effort: "high"})
		startWorker(t, c, "w5", executors.NewSet(exec))
		p := newPair(t, c, exec, opts)
		p.start("first run", "export const meta = { name: 'gen', description: 'model' }\nreturn await agent('a')\n")
		td, err := c.Detail(context.Background(), p.remote)
		if err != nil {
			t.Fatal(err)
		}
		ld, err := p.rt.Inspect(p.local)
		if err != nil {
			t.Fatal(err)
		}
		if len(td.Calls) != 1 || len(ld.Calls) != 1 || td.Calls[0].Model != ld.Calls[0].Model || ld.Calls[0].Model != "model-a" {
			t.Errorf("the call ran with model %q on Temporal, %q locally; want model-a", td.Calls[0].Model, ld.Calls[0].Model)
		}
	})
}
