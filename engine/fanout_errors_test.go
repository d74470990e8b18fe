package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// What an error in one branch does to its parallel() or pipeline(), in
// both languages, as in the Node runtime (src/workflow.ts of
// @fish59fish/dynamic-workflows 0.1.0):
//
//   - its parallel() and pipeline() catch what a branch throws, and rethrow
//     it when it is not recoverable ("Non-recoverable failures (token
//     budget / agent limit exhausted) must halt the whole run, exactly like
//     a directly-awaited agent()"), else log it and give null;
//   - a WorkflowError is not recoverable for the agent cap
//     (AGENT_LIMIT_EXCEEDED, agentLimitError), the token budget
//     (TOKEN_BUDGET_EXHAUSTED), a provider's usage limit
//     (PROVIDER_USAGE_LIMIT, src/errors.ts wrapError and src/agent.ts
//     throwIfProviderLimit), an answer that never satisfied its schema
//     (SCHEMA_NONCOMPLIANCE, src/agent.ts resolveStructuredOutput) and a
//     required call that failed (requiredFailure in agent());
//     what the script throws itself (a ReferenceError) is wrapped as a
//     recoverable AGENT_EXECUTION_ERROR, and an agent that fails for good
//     gives null without a throw;
//   - only AGENT_LIMIT_EXCEEDED marks the fan-out's batch cancelled, so
//     that its agents still queued behind the concurrency limiter throw
//     agentLimitError instead of starting ("Only a breached agent cap
//     cancels the rest of this batch");
//   - an error that escapes the script fails the run (a usage limit pauses
//     it), and aborts the calls still in flight (runFatalController); we
//     let the calls under way finish instead, and journal them, as what
//     they cost is paid (callpolicy.FinishesCallsUnderWay).
//
// A script catches the rethrown error around the fan-out in JavaScript;
// Starlark has no try, so there the run fails with it.

// fanoutErrorCases are the cases, each a fan-out written in both
// languages: fails names the prompt whose call ends with an engine error
// (made by fail), or a cap refuses calls past it.
var fanoutErrorCases = []struct {
	name     string
	js, star string // an expression: the fan-out
	cap      int    // the agent cap; 0 for none
	fails    string // the prompt whose call fails with err
	err      func() error
	// want is the result, or the code of the error the fan-out throws.
	want string
}{
	{
		name: "agent cap in parallel",
		js:   `parallel(['a', 'b', 'c', 'd', 'e'].map(p => () => agent(p)))`,
		star: `parallel(["a", "b", "c", "d", "e"], agent)`,
		cap:  3, want: engine.CodeAgentLimit,
	},
	{
		name:  "token budget in pipeline",
		js:    `pipeline([0, 1, 2], (p, x, i) => agent('s0.' + i), (p, x, i) => agent('s1.' + i))`,
		star:  `pipeline([0, 1, 2], lambda p, x, i: agent("s0.%d" % i), lambda p, x, i: agent("s1.%d" % i))`,
		fails: "s1.1", err: func() error { return callpolicy.BudgetError(100, 100) }, want: engine.CodeBudget,
	},
	{
		name:  "usage limit in parallel",
		js:    `parallel([() => agent('a'), () => agent('b'), () => agent('c')])`,
		star:  `parallel([lambda: agent("a"), lambda: agent("b"), lambda: agent("c")])`,
		fails: "b", err: func() error { return callpolicy.RateLimitError("429: usage limit reached, resets in 3h") }, want: engine.CodeUsageLimit,
	},
	{
		name:  "schema never satisfied in pipeline",
		js:    `pipeline(['x', 'y'], x => agent(x))`,
		star:  `pipeline(["x", "y"], agent)`,
		fails: "y", err: func() error { return callpolicy.SchemaError(3, errors.New("missing ok")) }, want: engine.CodeSchema,
	},
	{
		name:  "required call in parallel",
		js:    `parallel([() => agent('a'), () => agent('b', { required: true })])`,
		star:  `parallel([lambda: agent("a"), lambda: agent("b", required = True)])`,
		fails: "b", err: func() error { return callpolicy.RequiredError(errors.New("exit status 1"), false) }, want: engine.CodeAgentFailed,
	},
	{
		name: "agent cap in a nested parallel",
		js:   `parallel([() => parallel([() => agent('a1'), () => agent('a2')]), () => agent('b')])`,
		star: `parallel([lambda: parallel([lambda: agent("a1"), lambda: agent("a2")]), lambda: agent("b")])`,
		cap:  2, want: engine.CodeAgentLimit,
	},
	{
		name:  "token budget in a pipeline in a parallel",
		js:    `parallel([() => agent('a'), () => pipeline([0, 1], (p, x, i) => parallel([() => agent('p' + i)]))])`,
		star:  `parallel([lambda: agent("a"), lambda: pipeline([0, 1], lambda p, x, i: parallel([lambda: agent("p%d" % i)]))])`,
		fails: "p1", err: func() error { return callpolicy.BudgetError(100, 100) }, want: engine.CodeBudget,
	},
	{
		name:  "a failed agent is still null",
		js:    `parallel([() => agent('a'), () => agent('b')])`,
		star:  `parallel([lambda: agent("a"), lambda: agent("b")])`,
		fails: "b", want: `["answer to a",null]`,
	},
}

// throwers make a branch throw an error of the script's own, which stays
// recoverable: the branch becomes null.
var throwers = map[string]string{
	".workflow.js":   `parallel([() => agent('a'), async () => { await agent('b'); return FINDINGS }, () => { throw new TypeError('no') }])`,
	".workflow.star": `parallel([lambda: agent("a"), lambda: [agent("b"), {}["FINDINGS"]], lambda: fail("no")])`,
}

// fanoutScripts writes the scripts of a case: the fan-out's value
// returned in Starlark and in JavaScript, and in JavaScript also caught,
// returning "caught CODE".
func fanoutScripts(js, st string) (uncaught, caught, starText string) {
	const meta = "export const meta = { name: 'fanout', description: 'an error in a branch' }\n"
	uncaught = meta + "return await " + js + "\n"
	caught = meta + "try { return await " + js + " } catch (e) { return 'caught ' + e.code }\n"
	starText = "meta = {\"name\": \"fanout\", \"description\": \"an error in a branch\"}\n\ndef main(args):\n    return " + st + "\n"
	return
}

// runFanoutCase runs text on a langtest env whose calls answer "answer to
// PROMPT", but fails', and refuses calls past cap.
func runFanoutCase(t *testing.T, host lang.Host, name, text string, cap int, fails string, err func() error) (string, error) {
	t.Helper()
	env := langtest.NewEnv()
	if cap > 0 {
		env.Refuse = func(n int, _ langtest.Call) error {
			if n > cap {
				return callpolicy.AgentLimitError(cap)
			}
			return nil
		}
	}
	env.Answer = func(_ context.Context, c langtest.Call) (json.RawMessage, error) {
		if c.Prompt == fails {
			if err == nil {
				return json.RawMessage("null"), nil // a terminal failure
			}
			return nil, err()
		}
		return json.Marshal("answer to " + c.Prompt)
	}
	s := loadTwin(t, host, name, text)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, rerr := env.Lockstep(ctx, func(ctx context.Context) (json.RawMessage, error) { return s.Run(ctx, env) }, nil)
	return string(res), rerr
}

// TestNonRecoverableErrorsEndTheFanout: in both languages, the agent cap,
// the token budget, a provider's usage limit, a schema never satisfied
// and a required call that failed, met in a branch, end its parallel() or
// pipeline() with the error, through every fan-out around it; JavaScript
// catches it around the fan-out with its code, and a run that does not
// catch it fails with it. A failed agent and an error of the script's
// own still make their branch null. It used to make every branch null.
func TestNonRecoverableErrorsEndTheFanout(t *testing.T) {
	js, st := jsvm.New(), star.New()
	for _, tc := range fanoutErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			uncaught, caught, starText := fanoutScripts(tc.js, tc.star)
			fatal := !strings.HasPrefix(tc.want, "[")
			for _, run := range []struct {
				host       lang.Host
				name, text string
				caught     bool
			}{
				{js, "f.workflow.js", uncaught, false},
				{js, "f.workflow.js", caught, true},
				{st, "f.workflow.star", starText, false},
			} {
				res, err := runFanoutCase(t, run.host, run.name, run.text, tc.cap, tc.fails, tc.err)
				switch {
				case !fatal:
					if err != nil || res != tc.want {
						t.Errorf("%s: %s %v, want %s", run.name, res, err, tc.want)
					}
				case run.caught:
					if want := `"caught ` + tc.want + `"`; err != nil || res != want {
						t.Errorf("%s, caught: %s %v, want %s", run.name, res, err, want)
					}
				default:
					var ee *engine.Error
					var le *lang.Error
					if !errors.As(err, &ee) || ee.Code != tc.want || !errors.As(err, &le) || le.Line == 0 {
						t.Errorf("%s: %s %v, want an error with code %s at a line of the script", run.name, res, err, tc.want)
					}
				}
			}
		})
	}
	t.Run("errors of the script's own", func(t *testing.T) {
		for ext, expr := range throwers {
			host := lang.Host(js)
			if ext == ".workflow.star" {
				host = st
			}
			uncaught, _, starText := fanoutScripts(expr, expr)
			text := uncaught
			if host == st {
				text = starText
			}
			res, err := runFanoutCase(t, host, "f"+ext, text, 0, "", nil)
			if want := `["answer to a",null,null]`; err != nil || res != want {
				t.Errorf("%s: %s %v, want %s", ext, res, err, want)
			}
		}
	})
}

// gate is an executor that notes the prompts it is asked, in the order the
// calls start, answers at once, but holds the calls named in hold until
// release is closed (or their run ends), and fails those in fail with a
// rate limit.
type gate struct {
	mu      sync.Mutex
	prompts []string
	hold    map[string]bool
	fail    map[string]bool
	release chan struct{}
}

func (g *gate) Name() string { return "gate" }

func (g *gate) Run(ctx context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	g.mu.Lock()
	g.prompts = append(g.prompts, req.Prompt)
	g.mu.Unlock()
	if g.hold[req.Prompt] {
		select {
		case <-g.release:
		case <-ctx.Done():
			return executors.Result{}, ctx.Err()
		}
	}
	if g.fail[req.Prompt] {
		return executors.Result{}, &executors.Error{Class: executors.RateLimited, Message: "429: usage limit reached, resets in 3h"}
	}
	return executors.Result{Text: "answer to " + req.Prompt, Usage: executors.Usage{InputTokens: 10, OutputTokens: 5}}, nil
}

func (g *gate) started() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.prompts)
}

// TestNonRecoverableErrorsOnTheEngine runs fan-outs that meet a limit on
// the engine, at concurrency 1, in both languages: the run fails with the
// error's code, or pauses for a usage limit; the fan-out's calls still
// queued when the cap is met never reach the executor, even when the
// script catches the error and goes on; and a budget met inside a
// pipeline ends it. They used to complete, their branches null, after
// running every queued call.
func TestNonRecoverableErrorsOnTheEngine(t *testing.T) {
	type want struct {
		status  engine.Status
		code    string // of a failed run
		result  string // of a completed one
		started []string
		// orFewer: the run may fail before the first call of started
		// reaches the executor, which is up to the Go scheduler.
		orFewer bool
	}
	for _, tc := range []struct {
		name     string
		js, star string
		opts     func(*engine.Options)
		hold     []string // held until the script logs "caught"
		fail     []string // rate limited
		want     want
	}{
		{
			name: "agent cap in parallel",
			js:   `return await parallel(['a', 'b', 'c', 'd', 'e'].map(p => () => agent(p)))`,
			star: `parallel(["a", "b", "c", "d", "e"], agent)`,
			opts: func(o *engine.Options) { o.MaxAgents = 3 },
			hold: []string{"a"},
			// a starts, b and c wait for it; the run fails, b and c never
			// start, and a finishes first.
			want: want{status: engine.StatusFailed, code: engine.CodeAgentLimit, started: []string{"a"}, orFewer: true},
		},
		{
			name: "agent cap in parallel, caught",
			js: `try { return await parallel(['a', 'b', 'c', 'd', 'e'].map(p => () => agent(p))) }
catch (e) { log('caught ' + e.code); return e.code }`,
			opts: func(o *engine.Options) { o.MaxAgents = 3 },
			hold: []string{"a"},
			// The script goes on, and waits for a; b and c, queued in the
			// fan-out that met the cap, never start.
			want: want{status: engine.StatusCompleted, result: `"AGENT_LIMIT_EXCEEDED"`, started: []string{"a"}},
		},
		{
			name: "token budget in pipeline",
			js:   `return await pipeline([0, 1, 2], (p, x, i) => agent('s0.' + i), (p, x, i) => agent('s1.' + i))`,
			star: `pipeline([0, 1, 2], lambda p, x, i: agent("s0.%d" % i), lambda p, x, i: agent("s1.%d" % i))`,
			opts: func(o *engine.Options) { o.TokenBudget = 30 },
			// Two calls of 15 tokens spend it; the third finds it spent.
			want: want{status: engine.StatusFailed, code: engine.CodeBudget, started: []string{"s0.0", "s0.1"}},
		},
		{
			name: "token budget in pipeline, caught",
			js: `try { return await pipeline([0, 1, 2], (p, x, i) => agent('s0.' + i), (p, x, i) => agent('s1.' + i)) }
catch (e) { return e.code }`,
			opts: func(o *engine.Options) { o.TokenBudget = 30 },
			want: want{status: engine.StatusCompleted, result: `"TOKEN_BUDGET_EXHAUSTED"`, started: []string{"s0.0", "s0.1"}},
		},
		{
			name: "usage limit in parallel",
			js:   `return await parallel(['a', 'b', 'c', 'd'].map(p => () => agent(p)))`,
			star: `parallel(["a", "b", "c", "d"], agent)`,
			fail: []string{"b"},
			// The run pauses, to resume once the limit resets.
			want: want{status: engine.StatusPaused, started: []string{"a", "b"}},
		},
		{
			name: "agent cap in a nested parallel",
			js:   `return await parallel([() => parallel([() => agent('a1'), () => agent('a2')]), () => agent('b')])`,
			star: `parallel([lambda: parallel([lambda: agent("a1"), lambda: agent("a2")]), lambda: agent("b")])`,
			opts: func(o *engine.Options) { o.MaxAgents = 2 },
			hold: []string{"a1"},
			want: want{status: engine.StatusFailed, code: engine.CodeAgentLimit, started: []string{"a1"}, orFewer: true},
		},
	} {
		scripts := map[string]string{".workflow.js": "export const meta = { name: 'fanout', description: 'a limit in a fan-out' }\n" + tc.js + "\n"}
		if tc.star != "" {
			scripts[".workflow.star"] = "meta = {\"name\": \"fanout\", \"description\": \"a limit in a fan-out\"}\n\ndef main(args):\n    return " + tc.star + "\n"
		}
		for ext, text := range scripts {
			t.Run(tc.name+"/"+ext, func(t *testing.T) {
				g := &gate{hold: map[string]bool{}, fail: map[string]bool{}, release: make(chan struct{})}
				for _, p := range tc.hold {
					g.hold[p] = true
				}
				for _, p := range tc.fail {
					g.fail[p] = true
				}
				rt := newGateRuntime(t, g)
				caught := rt.Events().Subscribe(16, func(ev engine.Event) bool {
					p, ok := ev.Payload.(engine.LogPayload)
					return ev.Type == engine.EventLog && ok &&
						(strings.HasPrefix(p.Message, "caught ") || strings.HasPrefix(p.Message, "the script has ended;"))
				})
				defer caught.Close()
				opts := engine.DefaultOptions()
				opts.Executor, opts.Concurrency = "gate", 1
				if tc.opts != nil {
					tc.opts(&opts)
				}
				r, err := rt.Start(context.Background(), engine.StartRequest{Script: loadText(t, rt, "fanout"+ext, text), Options: opts})
				if err != nil {
					t.Fatal(err)
				}
				// What the gate holds is let go once the script caught the
				// error, so that b and c were still queued then; a run
				// that does not catch it waits, once its script has ended,
				// for what it holds to finish (or ends at once, when the
				// held call had not started yet). (A minute on, the error
				// did neither.)
				if len(tc.hold) > 0 {
					done := r.Done()
					if strings.Contains(text, "caught") {
						done = nil
					}
					select {
					case <-caught.C:
					case <-done:
					case <-time.After(time.Minute):
						t.Errorf("a minute on, the run still waits for %v: the error neither reached the script nor ended the run", tc.hold)
					}
					close(g.release)
				}
				o := runToEnd(t, rt, r, nil)
				d, err := rt.Inspect(r.ID())
				if err != nil {
					t.Fatal(err)
				}
				got := want{status: o.Status, code: d.Summary.ErrorCode, started: g.started(), orFewer: tc.want.orFewer}
				if o.Status == engine.StatusCompleted {
					got.result = string(o.Result)
				}
				if tc.want.orFewer && len(got.started) == 0 {
					got.started = tc.want.started
				}
				if got.status == engine.StatusFailed && !strings.Contains(o.Error, "fanout"+ext+":") {
					t.Errorf("the error does not say where in the script: %s", o.Error)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("got  %+v (%s)\nwant %+v", got, o.Error, tc.want)
				}
			})
		}
	}
}

func newGateRuntime(t testing.TB, g *gate) *engine.Runtime {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New(), star.New()), Executors: executors.NewSet(g), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestCallsUnderWayFinishWhenTheScriptThrows holds a call under way while
// the script throws at the agent cap, in both languages: the run waits
// for it, says so, journals its answer and only then fails, and a resume
// replays it. The run used to cancel it as the script threw: the answer
// was lost and paid for again on resume.
func TestCallsUnderWayFinishWhenTheScriptThrows(t *testing.T) {
	for _, tc := range []struct {
		name, ext, text string
		cap, live       int // the agent cap, and the calls answered
	}{
		{"after an answer", ".workflow.js", "export const meta = { name: 'under', description: 'a call under way' }\n" +
			"const held = agent('held')\nawait agent('b')\nawait agent('c')\nreturn await held\n", 2, 2},
		{"after an answer", ".workflow.star", "meta = {\"name\": \"under\", \"description\": \"a call under way\"}\n\n" +
			"def main(args):\n    return parallel([lambda: agent(\"held\"), lambda: [agent(\"b\"), agent(\"c\")]])\n", 2, 2},
		// The call got its slot as it was made, before any worker picked
		// it up: it is under way all the same, as on Temporal.
		{"in the turn that made it", ".workflow.js", "export const meta = { name: 'under', description: 'a call under way' }\n" +
			"const held = agent('held')\nawait agent('b')\nreturn await held\n", 1, 1},
	} {
		ext, text := tc.ext, tc.text
		t.Run(tc.name+"/"+ext, func(t *testing.T) {
			g := &gate{hold: map[string]bool{"held": true}, fail: map[string]bool{}, release: make(chan struct{})}
			rt := newGateRuntime(t, g)
			ending := rt.Events().Subscribe(16, func(ev engine.Event) bool {
				p, ok := ev.Payload.(engine.LogPayload)
				return ev.Type == engine.EventLog && ok && p.Message == callpolicy.FinishingCallsLine(1)
			})
			defer ending.Close()
			opts := engine.DefaultOptions()
			opts.Executor, opts.Concurrency, opts.MaxAgents = "gate", tc.cap, tc.cap
			script := loadText(t, rt, "under"+ext, text)
			r, err := rt.Start(context.Background(), engine.StartRequest{Script: script, Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-ending.C:
			case <-r.Done():
				t.Error("the run ended without waiting for the call under way")
			case <-time.After(time.Minute):
				t.Fatal("a minute on, the run neither met the cap nor ended")
			}
			close(g.release)
			o := runToEnd(t, rt, r, nil)
			d, err := rt.Inspect(r.ID())
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != engine.StatusFailed || d.Summary.ErrorCode != engine.CodeAgentLimit || o.Stats.Live != tc.live {
				t.Errorf("%s %s with %d live calls, want failed at the cap with %d answered", o.Status, d.Summary.ErrorCode, o.Stats.Live, tc.live)
			}
			for _, c := range d.Calls {
				if c.Prompt == "held" && (c.Status != "done" || string(c.Result) != `"answer to held"`) {
					t.Errorf("held: %s %s, want done with its answer", c.Status, c.Result)
				}
			}
			r, err = rt.Resume(context.Background(), r.ID(), engine.ResumeRequest{Script: script})
			o = runToEnd(t, rt, r, err)
			if o.Stats.Replayed != tc.live || o.Stats.Live != 0 {
				t.Errorf("resumed: %d replayed, %d live; want %d replayed, nothing paid twice", o.Stats.Replayed, o.Stats.Live, tc.live)
			}
		})
	}
}
