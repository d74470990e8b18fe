package jsvm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

// runBody runs okMeta followed by body, so the body's first line is line 2.
func runBody(t *testing.T, env *langtest.Env, body string) (string, error) {
	t.Helper()
	s, err := load(okMeta + body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := s.Run(ctx, env)
	return string(out), err
}

// mustRun runs body and returns its result, failing the test on an error.
func mustRun(t *testing.T, env *langtest.Env, body string) string {
	t.Helper()
	out, err := runBody(t, env, body)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// runError runs body and returns the *lang.Error it must fail with.
func runError(t *testing.T, env *langtest.Env, body string) *lang.Error {
	t.Helper()
	out, err := runBody(t, env, body)
	var le *lang.Error
	if !errors.As(err, &le) {
		t.Fatalf("run = %s, %v (%T); want a *lang.Error", out, err, err)
	}
	if le.Static {
		t.Errorf("a run-time error is marked static: %v", le)
	}
	return le
}

func TestResults(t *testing.T) {
	tests := []struct{ body, want string }{
		{"return 1", "1"},
		{"", "null"},
		{"return", "null"},
		{"return undefined", "null"},
		{"return { a: [1, 'x', null, true], b: undefined }", `{"a":[1,"x",null,true]}`},
		{"const x = await agent('hi')\nreturn x", `"echo: hi"`},
		{"return await Promise.all([agent('a'), agent('b')])", `["echo: a","echo: b"]`},
		{"if (true) return 'early'\nreturn 'late'", `"early"`},
		{"return meta", `{"name":"n","description":"d"}`},
		{"return typeof require + typeof setTimeout + typeof fetch", `"undefinedundefinedundefined"`},
		{"return [cwd, process.cwd(), typeof process.env, Object.isFrozen(process)]", `["/project","/project","undefined",true]`},
		{"return [1, 2, 3].findLast(x => x < 3) ?? 0", "2"},
		{"try { await agent('x', { effort: 'huge' }) } catch (e) { return e.message }",
			`"agent(): option effort must be one of low, medium, high, xhigh, max, not \"huge\""`},
		{"try { agent(42) } catch (e) { return String(e) }", `"TypeError: agent(): the prompt must be a string, not a number"`},
		{"try { agent('x', { shema: {} }) } catch (e) { return e.message }",
			`"agent(): unknown option \"shema\"; did you mean \"schema\"? (the options are label, phase, schema, model, effort, agentType, isolation, executor, permissions, timeoutMs, idleTimeoutMs, retries, required)"`},
		{"try { agent('x', { label: 7, _tag: 'a' }) } catch (e) { return e.message }", `"agent(): option label must be a string, not a number"`},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			if got := mustRun(t, langtest.NewEnv(), tt.body); got != tt.want {
				t.Errorf("result = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestResultNotJSON(t *testing.T) {
	for body, want := range map[string]string{
		"const a = {}; a.self = a\nreturn a":       "circular",
		"return () => 1":                           "it is a function",
		"return Symbol('s')":                       "it is a Symbol",
		"return { nested: { f() {} } }":            `its field "f" is a function`,
		"return [1, 2, () => 3]":                   "its element 2 is a function",
		"return { [Symbol('k')]: 1, v: Symbol() }": `its field "v" is a Symbol`,
	} {
		le := runError(t, langtest.NewEnv(), body)
		if !strings.Contains(le.Message, "the workflow's result cannot be turned into JSON") || !strings.Contains(le.Message, want) {
			t.Errorf("%s: error = %v, want one saying %q", body, le, want)
		}
	}
	// What JSON does hold stays as JSON makes it.
	for body, want := range map[string]string{
		"return { a: undefined, b: 1 }":    `{"b":1}`,
		"return [undefined]":               `[null]`,
		"return new Date(0)":               `"1970-01-01T00:00:00.000Z"`,
		"return { toJSON() { return 7 } }": "7",
	} {
		if got := mustRun(t, langtest.NewEnv(), body); got != want {
			t.Errorf("%s = %s, want %s", body, got, want)
		}
	}
}

func TestAgentOptionsReachTheEngine(t *testing.T) {
	env := langtest.NewEnv()
	mustRun(t, env, `await agent('p', { label: 'L', phase: 'Review', schema: { type: 'object' }, model: 'haiku',
  effort: 'high', agentType: 'Explore', isolation: 'worktree', executor: 'simulate', timeoutMs: 5000, retries: 2 })`)
	o := env.Calls()[0].Opts
	if o.Label != "L" || o.Phase != "Review" || string(o.Schema) != `{"type":"object"}` || o.Model != "haiku" ||
		o.Effort != "high" || o.AgentType != "Explore" || o.Isolation != "worktree" || o.Executor != "simulate" ||
		o.TimeoutMs == nil || *o.TimeoutMs != 5000 || o.Retries == nil || *o.Retries != 2 {
		t.Errorf("options = %+v", o)
	}
}

// Keys that are not options are passed to the engine, which warns about
// them; they are not an error, as in the Node runtime.
func TestUnknownAgentOptionsAreIgnored(t *testing.T) {
	env := langtest.NewEnv()
	got := mustRun(t, env, `return await agent('p', { label: 'L', _tag: 'x', tier: 'fast', _predispatch: true })`)
	if got != `"echo: p"` {
		t.Errorf("result = %s", got)
	}
	o := env.Calls()[0].Opts
	if o.Label != "L" || strings.Join(o.Ignored, ",") != "_predispatch,_tag,tier" {
		t.Errorf("options = %+v", o)
	}
}

func TestAgentResultsAreNativeValues(t *testing.T) {
	env := langtest.NewEnv()
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"items":[{"file":"a.go"},{"file":"b.go"}],"ok":true}`), nil
	}
	got := mustRun(t, env, `const r = await agent('x', { schema: { type: 'object' } })
return [Array.isArray(r.items), r.items.map(i => i.file).join(','), r.ok === true, Object.keys(r)]`)
	if want := `[true,"a.go,b.go",true,["items","ok"]]`; got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
}

// A text answer reaches the script as the string it encodes, whatever its
// escapes, and an answer that is no JSON string is refused as before.
func TestTextAnswers(t *testing.T) {
	long := strings.Repeat("0123456789", 10_000)
	tests := []struct{ name, answer, want string }{
		{"plain", `"done"`, "done"},
		{"long", `"` + long + `"`, long},
		{"escapes", `"a\"b\\c\nd\te\/f"`, "a\"b\\c\nd\te/f"},
		{"unicode escapes and a surrogate pair", `"caf\u00e9 \ud83d\ude00"`, "café 😀"},
		{"UTF-8 as is", `"naïve ✓"`, "naïve ✓"},
		{"surrounded by spaces", " \n\"x\" \n", "x"},
		{"invalid UTF-8 becomes U+FFFD", "\"a\xffb\"", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := langtest.NewEnv()
			env.Answer = func(context.Context, langtest.Call) (json.RawMessage, error) { return json.RawMessage(tt.answer), nil }
			got := mustRun(t, env, "const a = await agent('x')\nreturn [typeof a, a]")
			want, _ := json.Marshal([]string{"string", tt.want})
			if got != string(want) {
				t.Errorf("result = %.80s, want %.80s", got, want)
			}
		})
	}
	for _, bad := range []string{`"unterminated`, `"a" "b"`, `"raw` + "\n" + `newline"`} {
		env := langtest.NewEnv()
		env.Answer = func(context.Context, langtest.Call) (json.RawMessage, error) { return json.RawMessage(bad), nil }
		if le := runError(t, env, "await agent('x')"); !strings.Contains(le.Message, "the engine answered with invalid JSON") {
			t.Errorf("answer %q: error = %v", bad, le)
		}
	}
}

// errCoded is an engine error with a code, such as a budget error.
type errCoded struct{ code string }

func (e errCoded) Error() string     { return "budget exhausted: 1000 of 1000 tokens spent" }
func (e errCoded) ErrorCode() string { return e.code }

var errBudget = errCoded{"TOKEN_BUDGET_EXHAUSTED"}

func TestEngineErrors(t *testing.T) {
	env := langtest.NewEnv()
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) { return nil, errBudget }
	got := mustRun(t, env, "try { await agent('x') } catch (e) { return [e instanceof Error, e.message, e.code] }")
	if want := `[true,"budget exhausted: 1000 of 1000 tokens spent","TOKEN_BUDGET_EXHAUSTED"]`; got != want {
		t.Errorf("caught = %s, want %s", got, want)
	}

	// Uncaught, even rethrown from elsewhere, the engine's error stays
	// reachable, and the position is where the script called agent().
	le := runError(t, env, "async function ask() {\n  return await agent('x')\n}\nlet saved\ntry { await ask() } catch (e) { saved = e }\nthrow saved")
	if !errors.Is(le, errBudget) {
		t.Errorf("errors.Is(err, errBudget) = false for %v", le)
	}
	if le.Line != 3 || le.Column != 21 || le.Message != "Error: budget exhausted: 1000 of 1000 tokens spent" {
		t.Errorf("error = %d:%d %q", le.Line, le.Column, le.Message)
	}
}

// Positions are those goja records: a call is at its opening parenthesis.
func TestBadAnswers(t *testing.T) {
	env := langtest.NewEnv()
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"broken`), nil
	}
	le := runError(t, env, "await agent('x')")
	if !strings.HasPrefix(le.Message, "Error: the engine answered with invalid JSON: SyntaxError") {
		t.Errorf("error = %v", le)
	}
	// An answer given twice is taken once.
	twice := nopEnv{scope: langtest.NewEnv().Root(), twice: true}
	s, _ := load(okMeta + "return [await agent('a'), await agent('b')]")
	if out, err := s.Run(context.Background(), twice); err != nil || string(out) != `["ok","ok"]` {
		t.Errorf("Run = %s, %v", out, err)
	}
}

func TestThrownErrors(t *testing.T) {
	tests := []struct {
		name, body string
		line, col  int
		message    string
		backtrace  []string
	}{
		{"type error", "const x = undefined\nx.foo()", 3, 1, "TypeError: Cannot read property 'foo' of undefined or null", nil},
		{"reference error", "\n  notDefined()", 3, 13, "ReferenceError: notDefined is not defined", nil},
		{"nested functions", "function outer() {\n  return inner()\n}\nfunction inner() {\n  throw new Error('deep')\n}\nouter()",
			6, 9, "Error: deep", []string{
				"Traceback (most recent call last):",
				"  t.workflow.js:8:6: in <anonymous>",
				"  t.workflow.js:3:15: in outer",
				"  t.workflow.js:6:9: in inner",
				"Error: deep"}},
		{"after await", "await agent('a')\nthrow new RangeError('late')", 3, 7, "RangeError: late", nil},
		{"a string", "throw 'boom'", 2, 7, "uncaught exception: boom", nil},
		{"an object", "throw { code: 7 }", 2, 7, `uncaught exception: {"code":7}`, nil},
		{"a number", "\n  throw 42", 3, 9, "uncaught exception: 42", nil},
		{"undefined", "throw undefined", 2, 7, "uncaught exception: undefined", nil},
		{"null", "throw null", 2, 7, "uncaught exception: null", nil},
		{"NaN", "throw NaN", 2, 7, "uncaught exception: NaN", nil},
		{"a number after an await", "await agent('a')\nfunction f() { throw 7 }\nf()", 3, 22, "uncaught exception: 7", []string{
			"Traceback (most recent call last):",
			"  t.workflow.js:4:2: in <anonymous>",
			"  t.workflow.js:3:22: in f",
			"uncaught exception: 7"}},
		{"rethrown", "try { throw 1 } catch (e) {\n  throw e }", 3, 9, "uncaught exception: 1", nil},
		{"caught ones do not count", "try { throw 5 } catch {}\nthrow 5", 3, 7, "uncaught exception: 5", nil},
		{"custom error", "class MyError extends Error { constructor(m) { super(m); this.name = 'MyError' } }\nthrow new MyError('mine')",
			2, 53, "MyError: mine", nil},
		{"agent type error", "await agent(['not', 'a', 'prompt'])", 2, 12, "TypeError: agent(): the prompt must be a string, not an array", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			le := runError(t, langtest.NewEnv(), tt.body)
			if le.File != "t.workflow.js" || le.Line != tt.line || le.Column != tt.col || le.Message != tt.message {
				t.Errorf("error = %s:%d:%d %q, want %d:%d %q", le.File, le.Line, le.Column, le.Message, tt.line, tt.col, tt.message)
			}
			if tt.backtrace != nil && le.Backtrace != strings.Join(tt.backtrace, "\n") {
				t.Errorf("backtrace =\n%s\nwant\n%s", le.Backtrace, strings.Join(tt.backtrace, "\n"))
			}
		})
	}
}

// On line 1 the wrapper shifts columns; reported columns must not show it.
func TestErrorColumnOnFirstLine(t *testing.T) {
	s, err := load("export const meta = { name: 'n', description: 'd' }; null.x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run(context.Background(), langtest.NewEnv())
	var le *lang.Error
	if !errors.As(err, &le) || le.Line != 1 || le.Column != 59 {
		t.Fatalf("error = %v, want one at 1:59", err)
	}
}

func TestDeterminism(t *testing.T) {
	const replay = " is unavailable in workflow scripts: a resumed run re-executes the script and must make the same calls; "
	tests := []struct {
		name, body string
		col        int
		message    string
	}{
		{"Date.now", "const t =\n  Date.now()", 11, "Error: Date.now()" + replay + "pass timestamps in args or stamp results after the run"},
		{"Math.random", "const t =\n  Math.random()", 14, "Error: Math.random()" + replay + "vary by index, or pass a seed in args"},
		{"new Date()", "const t =\n  new Date()", 3, "Error: new Date() without an argument" + replay + "pass timestamps in args or stamp results after the run"},
		{"Date()", "const t =\n  Date()", 7, "Error: Date()" + replay + "pass timestamps in args or stamp results after the run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			le := runError(t, langtest.NewEnv(), tt.body)
			if le.Line != 3 || le.Column != tt.col || le.Message != tt.message {
				t.Errorf("error = %d:%d %q\nwant    3:%d %q", le.Line, le.Column, le.Message, tt.col, tt.message)
			}
		})
	}
	got := mustRun(t, langtest.NewEnv(), `const d = new Date(0)
return [d.toISOString(), new Date('2026-01-02T03:04:05Z').getTime(), Date.UTC(2026, 0, 2), Date.parse('2026-01-02T00:00:00Z'),
  d instanceof Date, d.constructor === Date, Object.prototype.toString.call(d), new Date(2026, 0, 2, 3).getFullYear()]`)
	want := `["1970-01-01T00:00:00.000Z",1767323045000,1767312000000,1767312000000,true,true,"[object Date]",2026]`
	if got != want {
		t.Errorf("dates = %s\nwant    %s", got, want)
	}
}

func TestArgs(t *testing.T) {
	env := langtest.NewEnv()
	if got := mustRun(t, env, "return typeof args"); got != `"undefined"` {
		t.Errorf("args without args = %s", got)
	}
	env.SetArgs(json.RawMessage(`{"items":["a","b"],"n":2}`))
	if got := mustRun(t, env, "return [args.items.length, Array.isArray(args.items), args.n + 1]"); got != "[2,true,3]" {
		t.Errorf("args = %s", got)
	}
}

func TestBudget(t *testing.T) {
	body := "return [budget.total, budget.spent(), budget.remaining() === Infinity ? 'Infinity' : budget.remaining(), Object.isFrozen(budget)]"
	if got := mustRun(t, langtest.NewEnv(), body); got != `[null,0,"Infinity",true]` {
		t.Errorf("no budget: %s", got)
	}
	env := langtest.NewEnv()
	env.SetBudget(langtest.NewBudget(1000, 250))
	if got := mustRun(t, env, body); got != "[1000,250,750,true]" {
		t.Errorf("budget: %s", got)
	}
}

func TestPhaseLogConsole(t *testing.T) {
	env := langtest.NewEnv()
	mustRun(t, env, `phase('Review')
log('plain', 2)
console.log('a', 1, { b: [true] }, null, undefined)
console.info('i'); console.debug('d'); console.warn('w')
console.error(new TypeError('bad'))
await parallel([() => { phase('Branch'); console.log('in branch') }])`)
	wantLogs := []string{
		"info / plain 2",
		`info / a 1 {"b":[true]} null undefined`,
		"info / i", "info / d", "warn / w",
		"error / TypeError: bad",
		"info /par.0/0 in branch",
	}
	if !reflect.DeepEqual(env.Logs(), wantLogs) {
		t.Errorf("logs =\n%q\nwant\n%q", env.Logs(), wantLogs)
	}
	if want := []string{"/ Review", "/par.0/0 Branch"}; !reflect.DeepEqual(env.Phases(), want) {
		t.Errorf("phases = %q, want %q", env.Phases(), want)
	}
	le := runError(t, env, "phase(1)")
	if le.Message != "TypeError: phase(): the title must be a string, not a number" {
		t.Errorf("phase(1): %v", le)
	}
}

func TestWorkflowAndCheckpoint(t *testing.T) {
	env := langtest.NewEnv()
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		switch c.Kind {
		case "checkpoint":
			return json.RawMessage(`true`), nil
		case "workflow":
			return json.RawMessage(`{"child":"` + c.Prompt + `","args":` + c.Args + `}`), nil
		}
		return json.RawMessage(`null`), nil
	}
	got := mustRun(t, env, `const a = await workflow('review', { items: [1] })
const b = await workflow({ scriptPath: './child.workflow.js' })
const ok = await checkpoint('Go on?', { kind: 'confirm', default: false })
return [a, b.child, ok]`)
	if want := `[{"child":"review","args":{"items":[1]}},"./child.workflow.js",true]`; got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
	if env.Calls()[1].Args != "null" {
		t.Errorf("a workflow() without args passed %q", env.Calls()[1].Args)
	}
	le := runError(t, env, "await checkpoint('Pick', { kind: 'select' })")
	if !strings.Contains(le.Message, `checkpoint(): kind "select" needs a non-empty choices list`) {
		t.Errorf("bad checkpoint: %v", le)
	}
	le = runError(t, env, "await workflow(42)")
	if !strings.Contains(le.Message, "workflow(): the first argument must be a workflow name or a script path, not a number") {
		t.Errorf("bad workflow: %v", le)
	}
}

func TestUnawaitedCallsAreWaitedFor(t *testing.T) {
	env := langtest.NewEnv()
	release := make(chan struct{})
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`"late"`), nil
	}
	s, _ := load(okMeta + "agent('fire and forget').then(r => log('got ' + r))\nreturn 'done'")
	type result struct {
		out json.RawMessage
		err error
	}
	ch := make(chan result, 1)
	go func() {
		out, err := s.Run(context.Background(), env)
		ch <- result{out, err}
	}()
	select {
	case r := <-ch:
		t.Fatalf("Run returned %s, %v before the agent answered", r.out, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	r := <-ch
	if r.err != nil || string(r.out) != `"done"` {
		t.Fatalf("Run = %s, %v", r.out, r.err)
	}
	if want := []string{"info / got late"}; !reflect.DeepEqual(env.Logs(), want) {
		t.Errorf("logs = %q: the continuation of the un-awaited call did not run", env.Logs())
	}
}

func TestWaitingForeverIsAnError(t *testing.T) {
	le := runError(t, langtest.NewEnv(), "await new Promise(() => {})")
	if !strings.Contains(le.Message, "waiting for a promise that nothing will ever settle") {
		t.Errorf("error = %v", le)
	}
}

func TestStackOverflow(t *testing.T) {
	le := runError(t, langtest.NewEnv(), "function f(n) {\n  return f(n + 1) + 1\n}\nf(0)")
	if le.Message != "RangeError: Maximum call stack size exceeded" || le.Line != 3 {
		t.Errorf("error = %v", le)
	}
	if n := strings.Count(le.Backtrace, "\n"); n > maxBacktrace+2 {
		t.Errorf("the backtrace has %d lines", n)
	}
}

func TestCancel(t *testing.T) {
	errPaused := errors.New("run paused")
	// What an engine that ignores ctx keeps waiting on; let go once the
	// test is over, so no goroutine outlives it.
	never := make(chan struct{})
	defer close(never)
	tests := []struct {
		name, body string
		answer     func(ctx context.Context, c langtest.Call) (json.RawMessage, error)
	}{
		{"busy loop", "while (true) {}", nil},
		{"busy microtasks", "while (true) { await null }", nil},
		{"busy pipeline stage", "await pipeline([1], () => agent('x'), () => { while (true) {} })", nil},
		{"pending agent", "await agent('slow')", func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		{"agent that never answers", "await parallel([() => agent('lost')])", func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
			<-never // an engine that ignores ctx must not hang the run
			return nil, errors.New("answered after the run ended")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := langtest.NewEnv()
			env.Answer = tt.answer
			s, err := load(okMeta + tt.body)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(30*time.Millisecond, func() { cancel(errPaused) })
			start := time.Now()
			_, err = s.Run(ctx, env)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Run took %v to stop", d)
			}
			if !errors.Is(err, errPaused) || !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want one wrapping the cause and context.Canceled", err)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, _ := load(okMeta)
	if _, err := s.Run(ctx, langtest.NewEnv()); !errors.Is(err, context.Canceled) {
		t.Errorf("a run with a done ctx: %v", err)
	}
}

// A Script is immutable: runs, one after the other or at once, do not
// share anything.
func TestRunsAreIndependent(t *testing.T) {
	s, err := load(okMeta + "globalThis.count = (globalThis.count || 0) + 1\nconst r = await parallel([1, 2, 3].map(i => () => agent('x' + i)))\nreturn [count, r]")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			out, err := s.Run(context.Background(), langtest.NewEnv())
			if err == nil && string(out) != `[1,["echo: x1","echo: x2","echo: x3"]]` {
				err = fmt.Errorf("result %s", out)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A script that computes without ever yielding to the engine is stopped,
// with an error that names the line it was on.
func TestBusyLimit(t *testing.T) {
	h := NewWithConfig(Config{BusyLimit: 200 * time.Millisecond})
	for name, tc := range map[string]struct {
		body string
		line int
	}{
		"while true":          {"let i = 0\nwhile (true) { i++ }", 3},
		"after an await":      {"await agent('a')\nlet n = 0\nfor (;;) { n++ }", 4},
		"in a branch":         {"await parallel([() => agent('a'), async () => { let n = 0; while (true) { n++ } }])", 2},
		"logging is yielding": {"let n = 0\nwhile (n < 3) { n++; log('x') }\nwhile (true) { n++ }", 4},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := h.Load(lang.Source{Path: "t.workflow.js", Text: []byte(okMeta + tc.body)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = s.Run(ctx, langtest.NewEnv())
			var le *lang.Error
			if !errors.As(err, &le) || !errors.Is(err, errBusy) || le.Line != tc.line ||
				!strings.Contains(le.Message, "without yielding") || !strings.Contains(le.Hint, "--js-busy-limit") {
				t.Fatalf("Run = %v (line %d), want the busy limit at line %d", err, lineOf(le), tc.line)
			}
		})
	}
	// Yielding often enough, a script may run far longer than the limit.
	s, err := h.Load(lang.Source{Path: "t.workflow.js", Text: []byte(okMeta + "for (let i = 0; i < 6; i++) { await agent('a' + i) }\nreturn 'done'")})
	if err != nil {
		t.Fatal(err)
	}
	env := langtest.NewEnv()
	env.Answer = func(ctx context.Context, c langtest.Call) (json.RawMessage, error) {
		time.Sleep(100 * time.Millisecond)
		return json.RawMessage(`"ok"`), nil
	}
	if out, err := s.Run(context.Background(), env); err != nil || string(out) != `"done"` {
		t.Errorf("a script waiting on agents for longer than the limit = %s, %v", out, err)
	}
}

func lineOf(e *lang.Error) int {
	if e == nil {
		return 0
	}
	return e.Line
}

// What real scripts use of Intl to format figures for prompts and reports,
// formatted as Node does in en-US.
func TestLocaleFormatting(t *testing.T) {
	tests := []struct{ body, want string }{
		{"return (1234567.891).toLocaleString()", `"1,234,567.891"`},
		{"try { return (1234567.891).toLocaleString('de-DE') } catch (e) { return e.name + ': ' + e.message.slice(0, 40) }", `"RangeError: Intl.NumberFormat: the locale \"de-DE\" is"`},
		{"return (-1234.5).toLocaleString('en-US', { maximumFractionDigits: 0 })", `"-1,235"`},
		{"return (12).toLocaleString(undefined, { minimumFractionDigits: 2 })", `"12.00"`},
		{"return (0.256).toLocaleString('en-US', { style: 'percent' })", `"26%"`},
		{"return (1e21).toLocaleString()", `"1,000,000,000,000,000,000,000"`},
		{"return [NaN.toLocaleString(), Infinity.toLocaleString(), (-Infinity).toLocaleString()]", `["NaN","∞","-∞"]`},
		{"return new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(1234.5)", `"$1,234.50"`},
		{"return new Intl.NumberFormat('en-US', { style: 'currency', currency: 'CHF' }).format(3)", `"CHF` + "\u00a0" + `3.00"`},
		{"return new Intl.NumberFormat('en-US', { useGrouping: false }).format(1234567)", `"1234567"`},
		{"return new Intl.NumberFormat('en-US', { signDisplay: 'always' }).format(5)", `"+5"`},
		{"return new Intl.NumberFormat().resolvedOptions().locale", `"en-US"`},
		{"return [String(Intl), typeof Intl.DateTimeFormat]", `["[object Intl]","function"]`},
		{"return new Date(2026, 6, 27, 15, 4, 5).toLocaleString()", `"7/27/2026, 3:04:05 PM"`},
		{"const d = new Date(2026, 0, 2, 0, 7, 9)\nreturn [d.toLocaleDateString(), d.toLocaleTimeString()]", `["1/2/2026","12:07:09 AM"]`},
		{"const o = { a: 1 }\nreturn [new WeakRef(o).deref() === o, typeof new FinalizationRegistry(() => {}).register]", `[true,"function"]`},
		{"try { new Intl.NumberFormat('en', { style: 'currency' }) } catch (e) { return e.name }", `"TypeError"`},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			if got := mustRun(t, langtest.NewEnv(), tt.body); got != tt.want {
				t.Errorf("result = %s, want %s", got, tt.want)
			}
		})
	}
}
