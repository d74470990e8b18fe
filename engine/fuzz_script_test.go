package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// FuzzScript runs arbitrary script text, JavaScript or Starlark, through
// the real engine: load, run on the simulated executor, encode its result
// into the journal, fold the journal back. Whatever the script does, the
// process must not crash (a fatal stack overflow or a panic fails the
// fuzz), the run must end, and a completed run's result must be JSON
// within the nesting limit that the journal gives back unchanged. The
// corpus starts from the examples and from the constructs that took the
// process down: deep nesting in source and values, arguments in an arrow,
// eval and new Function, non-finite numbers, and those of goja's surface
// that real scripts use and goja got wrong (JSON's indent, Unicode
// property escapes, locales and Intl, await outside an async function).
//
//	go test -run '^$' -fuzz FuzzScript -fuzztime 10m ./engine
func FuzzScript(f *testing.F) {
	for _, pattern := range []string{"../examples/*.workflow.js", "../examples/*.workflow.star", "../jsvm/testdata/*.workflow.js"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			text, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(text), strings.HasSuffix(file, ".star"))
		}
	}
	const js = "export const meta = { name: 'f', description: 'fuzz' }\n"
	for _, body := range []string{
		"return " + strings.Repeat("[", 2000) + strings.Repeat("]", 2000),
		"return " + strings.Repeat("!", 3000) + "1",
		"let o = 'leaf'; for (let i = 0; i < 3000; i++) o = [o]\nawait agent('x')\nreturn o",
		"let o = {}; for (let i = 0; i < 999; i++) o = { o }\nreturn o",
		"const f = () => arguments\nreturn f()",
		"function g(a) { const h = () => arguments[0]; return h() }\nreturn g(1)",
		"function g(a = () => arguments.length) { return a() }\nreturn g()",
		"return new Function('a', 'const h = () => arguments; return h().length')(1, 2)",
		"return (0, eval)('[' .repeat(3000) + ']'.repeat(3000))",
		"return JSON.parse('['.repeat(3000) + ']'.repeat(3000))",
		"let o = []; for (let i = 0; i < 5000; i++) o = [o]\nreturn [String(o).length, o.flat(Infinity).length]",
		"return { left: budget.remaining(), nan: 0 / 0, list: [Infinity, -Infinity] }",
		"const r = await parallel([1, 2, 3].map(i => () => agent('t' + i)))\nreturn { r, n: NaN }",
		"return await checkpoint('go?', { kind: 'confirm', default: true })",
		"try { await workflow('missing', { a: 1 }) } catch (e) { return e.message }",
		"const a = {}; a.self = a\nreturn a",
		"return [JSON.stringify({ a: {}, b: [1] }, null, 2), new RegExp('\\\\p{L}+', 'u').test('é'), 'é-x'.replace(/[^\\p{L}]/gu, '-')]",
		"const d = new Date(Date.UTC(2024, 0, 14, 23, 30))\nreturn [d.toLocaleDateString('sv-SE', { timeZone: 'Asia/Tokyo' }), d.toLocaleString('en-GB')]",
		"return [new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(1234.5), new Intl.NumberFormat('en', { notation: 'compact' }).format(12345), (0.000123).toLocaleString('en', { maximumSignificantDigits: 2 })]",
		"return ['item10', 'item2', 'item1'].sort(new Intl.Collator('en', { numeric: true }).compare).concat(['a', 'B'].sort((x, y) => x.localeCompare(y, 'en', { sensitivity: 'base' })))",
		"return [new Intl.PluralRules('en').select(1), new Intl.RelativeTimeFormat('en').format(-1, 'day'), new Intl.ListFormat('en').format(['a', 'b']), [...new Intl.Segmenter('en', { granularity: 'word' }).segment('a b')].length, new Intl.DateTimeFormat('fr', { dateStyle: 'long' }).format(0)]",
		"export const meta2 = 1\nfunction f() { await agent('x') }\nreturn 1",
		"return await agent('x', { model: 'opus', phase: 'Design' })",
		"return Symbol('s')",
		"throw new Error('boom')",
	} {
		f.Add(js+body, false)
	}
	const sm = "meta = {\"name\": \"f\", \"description\": \"fuzz\"}\n\ndef main(args):\n"
	for _, body := range []string{
		"    return " + strings.Repeat("[", 200) + strings.Repeat("]", 200),
		"    o = \"leaf\"\n    for i in range(3000):\n        o = [o]\n    return o",
		"    return {\"left\": float(\"inf\"), \"nan\": float(\"nan\")}",
		"    o = []\n    o.append(o)\n    return o",
		"    o = []\n    for i in range(5000):\n        o = [o]\n    return [len(str(o)), len(json.encode(o))]",
		"    return [agent(\"a\"), checkpoint(\"go?\", kind = \"confirm\", default = True)]",
	} {
		f.Add(sm+body, true)
	}
	limit := lang.DefaultMaxNesting
	hosts := lang.NewRegistry(jsvm.NewWithConfig(jsvm.Config{BusyLimit: 2 * time.Second}),
		star.NewWithConfig(star.Config{MaxSteps: 5_000_000}))
	f.Fuzz(func(t *testing.T, text string, isStar bool) {
		if len(text) > 1<<20 {
			return
		}
		cwd := t.TempDir()
		st, err := store.Open(filepath.Join(t.TempDir(), "state"), cwd)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := New(Config{Store: st, Hosts: hosts, Executors: executors.NewSet(simulate.New(simulate.Config{})), Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		name := "f.workflow.js"
		if isStar {
			name = "f.workflow.star"
		}
		script, err := hosts.Load(lang.Source{Path: filepath.Join(cwd, name), Text: []byte(text)})
		if err != nil {
			var le *lang.Error
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v (%T), want a *lang.Error", err, err)
			}
			return
		}
		opts := DefaultOptions()
		opts.MaxAgents, opts.MaxItems = 50, 50
		r, err := rt.Start(context.Background(), StartRequest{Script: script, Options: opts})
		if err != nil {
			return // a meta the engine refuses, say
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		o, err := r.Wait(ctx)
		if err != nil {
			_ = r.Stop()
			o, _ = r.Wait(context.Background())
			t.Fatalf("the run did not end in 30 s; stopped: %s", o.Status)
		}
		if o.Status == StatusFailed && strings.Contains(o.Error, "internal error") {
			t.Fatalf("the run failed on a panic: %s", o.Error)
		}
		d, err := rt.Inspect(o.RunID)
		if err != nil {
			t.Fatalf("the journal does not fold: %v", err)
		}
		if d.Summary.Status != string(o.Status) {
			t.Fatalf("the journal says %s, the run ended %s", d.Summary.Status, o.Status)
		}
		if o.Status != StatusCompleted {
			return
		}
		if !json.Valid(o.Result) || lang.JSONNesting(o.Result, limit) > limit {
			t.Fatalf("a completed run's result is not JSON within the limit: %.200s", o.Result)
		}
		if len(d.Result) == 0 {
			d.Result = json.RawMessage("null")
		}
		if compact(t, d.Result) != compact(t, o.Result) {
			t.Fatalf("the journal gives back %.200s, the run returned %.200s", d.Result, o.Result)
		}
	})
}
