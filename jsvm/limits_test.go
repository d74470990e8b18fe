package jsvm

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

// A result's NaN and Infinity become null, as JSON.stringify makes them,
// with one warning that says where: budget.remaining() without a budget is
// Infinity, and a run that returns it must not fail after its agents were
// paid.
func TestResultNonFiniteBecomesNull(t *testing.T) {
	for _, tt := range []struct{ body, want, note string }{
		{"return NaN", "null", "NaN at result"},
		{"return { left: budget.remaining() }", `{"left":null}`, "Infinity at result.left"},
		{"return [1, 2, -Infinity]", "[1,2,null]", "-Infinity at result[2]"},
		{"const x = 0; return { stats: { 'per call': [1 / x, 0 / x] } }", `{"stats":{"per call":[null,null]}}`,
			`Infinity at result.stats["per call"][0] (and 1 more)`},
	} {
		env := langtest.NewEnv()
		if got := mustRun(t, env, tt.body); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.body, got, tt.want)
		}
		logs := env.Logs()
		if len(logs) != 1 || !strings.HasPrefix(logs[0], "warn / ") || !strings.Contains(logs[0], "held "+tt.note+",") ||
			!strings.Contains(logs[0], "became null") {
			t.Errorf("%s: logs = %q, want one warning naming %q", tt.body, logs, tt.note)
		}
	}
	// NaN in the args of a child or the options of a call is JSON's null, as
	// in Node, without a warning.
	env := langtest.NewEnv()
	mustRun(t, env, "await workflow('child', { n: NaN })")
	if got := string(env.Calls()[0].Args); got != `{"n":null}` || len(env.Logs()) != 0 {
		t.Errorf("child args = %s, logs %q", got, env.Logs())
	}
}

// Values nested past the limit are refused with the limit and how to raise
// it, at once: JSON.stringify's cycle check made 200,000 levels take
// minutes.
func TestValueNestingLimit(t *testing.T) {
	deep := func(n int) string {
		return "let o = 'leaf'; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) o = [o]\n"
	}
	// Building 200,000 arrays takes goja a second or more under -race on a
	// loaded machine: a minute's deadline, still far below the minutes the
	// refusal took before.
	s, err := load(okMeta + deep(200000) + "return o")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = s.Run(ctx, langtest.NewEnv())
	var le *lang.Error
	if !errors.As(err, &le) {
		t.Fatalf("deep result: %v (%T); want a *lang.Error", err, err)
	}
	if !errors.Is(le, lang.ErrTooDeep) || !strings.Contains(le.Message, "the workflow's result: nested more than 1000 levels deep") ||
		!strings.Contains(le.Message, "--max-nesting") {
		t.Errorf("deep result: %v", le)
	}
	t.Logf("a result 200,000 levels deep refused in %v", time.Since(start))
	if got := mustRun(t, langtest.NewEnv(), deep(998)+"return JSON.stringify(o).length"); got != "2002" {
		t.Errorf("998 levels = %s", got)
	}
	for _, tt := range []struct{ body, want string }{
		{deep(5000) + "try { await workflow('child', { deep: o }) } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: workflow(): the args: nested more than 1000 levels deep"},
		{deep(5000) + "try { await agent('x', { schema: o }) } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: agent(): the options: nested more than 1000 levels deep"},
		{"try { JSON.parse('['.repeat(2e6) + ']'.repeat(2e6)) } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: JSON.parse(): the text: nested more than 1000 levels deep"},
		{deep(5000) + "try { String(o) } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: Array.prototype.join(): the array: nested more than 1000 levels deep"},
		{deep(5000) + "try { o.toLocaleString() } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: Array.prototype.toLocaleString(): the array: nested more than 1000 levels deep"},
		{deep(5000) + "try { o.flat(Infinity) } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: Array.prototype.flat(): the array: nested more than 1000 levels deep"},
		{"try { (0, eval)('['.repeat(1e6) + ']'.repeat(1e6)) } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: eval(): the code: nested more than 1000 levels deep"},
		{"try { new Function('return ' + '!'.repeat(1e6) + '1') } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: new Function(): the code: nested more than 1000 levels deep"},
		{"try { (async () => 1).constructor('return ' + '('.repeat(1e6) + '1' + ')'.repeat(1e6)) } catch (e) { return e.name + ': ' + e.message }",
			"RangeError: new AsyncFunction(): the code: nested more than 1000 levels deep"},
	} {
		got := mustRun(t, langtest.NewEnv(), tt.body)
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s\n= %s, want %q", tt.body[len(tt.body)-60:], got, tt.want)
		}
	}
	// The guarded constructors still behave as JavaScript's own.
	got := mustRun(t, langtest.NewEnv(), `return [new Function('a', 'b', 'return a + b')(1, 2), Function('return 3')(),
  (function () {}) instanceof Function, Function.prototype.constructor === Function, Function.name,
  (0, eval)('2 + 2'), globalThis.eval('typeof args'), JSON.parse('[1, {"a": 2}]', (k, v) => typeof v === 'number' ? v * 10 : v),
  (async function () {}).constructor.name, typeof (function* () {}).constructor('yield 1'),
  String([1, [2, [3]]]), [1, [2, [3, [4]]]].flat(Infinity), [[1, 2], [3]].join(';'), [].join.length, [].flat.name]`)
	if want := `[3,3,true,true,"Function",4,"undefined",[10,{"a":20}],"AsyncFunction","function","1,2,3",[1,2,3,4],"1,2;3",1,"flat"]`; got != want {
		t.Errorf("constructors = %s, want %s", got, want)
	}
}

// A direct eval would see the script's local variables in Node; here it
// could only run in the global scope, so it is refused when the script
// loads, rather than give another answer.
func TestDirectEvalRefused(t *testing.T) {
	_, err := New().Load(lang.Source{Path: "e.workflow.js",
		Text: []byte("export const meta = { name: 'e', description: 'd' }\nconst x = 1\nreturn eval('x + 1')\n")})
	var le *lang.Error
	if !errors.As(err, &le) || le.Line != 3 || le.Column != 8 || !strings.Contains(le.Message, "a direct eval(code) is not supported") {
		t.Fatalf("Load = %v", err)
	}
}

// goja panicked (index out of range, which took the process down) on an
// arrow function that reads the arguments of the function around it. Such
// arrows now work as in Node; at the top level, where Node has no
// arguments, reading them is Node's ReferenceError.
func TestArrowReadsArguments(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"function f(a) { const g = () => arguments.length + arguments[0]; return g() }\nreturn f(5, 6)", "7"},
		{"function f(a) { const g = () => { a = 9; return arguments[0] }; return g() }\nreturn f(5)", "9"},
		{"function f(a) { 'use strict'; const g = () => { a = 9; return arguments[0] }; return g() }\nreturn f(5)", "5"},
		{"const o = { m() { return (() => () => arguments[1])()() } }\nreturn o.m(1, 2)", "2"},
		{"class C { m() { return [1].map(() => arguments.length)[0] } }\nreturn new C().m(1, 2, 3)", "3"},
		{"return new Function('const g = () => arguments.length; return g()')(1, 2)", "2"},
		{"function f(a = () => arguments.length) { return a() }\nreturn [f(), f(undefined, 7, 8)]", "[0,3]"},
		{"function f(b, a = () => arguments[0]) { return a() }\nreturn f(5)", "5"},
		// Code made at run time gets the same fix: goja gave 1 and 2 here.
		{"return new Function('function g() { const h = () => arguments.length; return h() } return g(1, 2)')()", "2"},
		{"return new Function('function f(a = () => arguments.length) { return a() } return f()')()", "0"},
		{"return (0, eval)('(function g() { const h = () => arguments[1]; return h() })(1, 2)')", "2"},
		{`return new Function("'use strict'\nconst h = () => arguments.length; return [h(), this === undefined]")(7)`, "[1,true]"},
		{"try { const g = () => arguments; g() } catch (e) { return String(e) }", `"ReferenceError: arguments is not defined"`},
		{"try { return arguments.length } catch (e) { return String(e) }", `"ReferenceError: arguments is not defined"`},
	} {
		if got := mustRun(t, langtest.NewEnv(), tt.body); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.body, got, tt.want)
		}
	}
}
