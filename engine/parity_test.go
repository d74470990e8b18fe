package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/internal/nodeseed"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// The twins of a workflow in JavaScript and Starlark must make the same
// calls in the same order, so that an agent cap falls on the same calls
// and a script can be moved from one language to the other (and from the
// Node runtime to either) without a change in what it pays for. These
// tests generate nestings of parallel(), pipeline(), sequences and plain
// agent calls, write each in both languages, and run them side by side.

// A nest is one node of a generated workflow.
type nest struct {
	kind  string  // "agent", "seq" (its kids one after the other), "par" or "pipe"
	id    int     // names the node's prompt (an agent) or functions
	kids  []*nest // a seq's steps, a par's branches, a pipe's stages
	items int     // a pipe's number of items
}

// genNest returns a random nesting: parallel() and pipeline() of 1 to 4
// branches or items (1 to 3 stages), sequences of 2 or 3 steps, nested at
// most 4 deep, with agent calls for leaves.
func genNest(rng *rand.Rand) *nest {
	id := 0
	var gen func(depth int) *nest
	gen = func(depth int) *nest {
		id++
		n := &nest{id: id}
		r := rng.IntN(100)
		switch {
		case depth == 0 && r < 50, depth > 0 && r < 35 && depth < 4:
			n.kind = "par"
			for range 1 + rng.IntN(4) {
				n.kids = append(n.kids, gen(depth+1))
			}
		case depth == 0 || depth > 0 && r < 60 && depth < 4:
			n.kind, n.items = "pipe", 1+rng.IntN(4)
			for range 1 + rng.IntN(3) {
				n.kids = append(n.kids, gen(depth+1))
			}
		case depth < 4 && r < 75:
			n.kind = "seq"
			for range 2 + rng.IntN(2) {
				n.kids = append(n.kids, gen(depth+1))
			}
		default:
			n.kind = "agent"
		}
		return n
	}
	return gen(0)
}

// calls counts the agent calls n makes.
func (n *nest) calls() int {
	switch n.kind {
	case "agent":
		return 1
	case "pipe":
		c := 0
		for _, k := range n.kids {
			c += k.calls()
		}
		return c * n.items
	}
	c := 0
	for _, k := range n.kids {
		c += k.calls()
	}
	return c
}

// js writes n as a JavaScript function of no arguments; vars are the
// index parameters of the pipeline stages around it, which its prompts
// include so that every call's prompt is its own.
func (n *nest) js(vars []string) string {
	var b strings.Builder
	switch n.kind {
	case "agent":
		fmt.Fprintf(&b, "() => call(%s)", n.prompt(vars, "js"))
	case "seq":
		b.WriteString("async () => [")
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "await (%s)()", k.js(vars))
		}
		b.WriteString("]")
	case "par":
		b.WriteString("() => parallel([")
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k.js(vars))
		}
		b.WriteString("])")
	case "pipe":
		v := fmt.Sprintf("i%d", n.id)
		fmt.Fprintf(&b, "() => pipeline(%s", n.itemList())
		for _, k := range n.kids {
			fmt.Fprintf(&b, ", (prev, item, %s) => (%s)()", v, k.js(append(slices.Clip(vars), v)))
		}
		b.WriteString(")")
	}
	return b.String()
}

// star writes n as Starlark: the definition of a function n<id> of no
// arguments, indented by indent.
func (n *nest) star(vars []string, indent string) string {
	var b strings.Builder
	in := indent + "    "
	fmt.Fprintf(&b, "%sdef n%d():\n", indent, n.id)
	names := func() []string {
		var out []string
		for _, k := range n.kids {
			b.WriteString(k.star(vars, in))
			out = append(out, fmt.Sprintf("n%d", k.id))
		}
		return out
	}
	switch n.kind {
	case "agent":
		fmt.Fprintf(&b, "%sreturn call(%s)\n", in, n.prompt(vars, "star"))
	case "seq":
		kids := names()
		fmt.Fprintf(&b, "%sreturn [%s()]\n", in, strings.Join(kids, "(), "))
	case "par":
		fmt.Fprintf(&b, "%sreturn parallel([%s])\n", in, strings.Join(names(), ", "))
	case "pipe":
		v := fmt.Sprintf("i%d", n.id)
		var stages []string
		for s, k := range n.kids {
			name := fmt.Sprintf("s%d_%d", n.id, s)
			fmt.Fprintf(&b, "%sdef %s(prev, item, %s):\n", in, name, v)
			b.WriteString(k.star(append(slices.Clip(vars), v), in+"    "))
			fmt.Fprintf(&b, "%s    return n%d()\n", in, k.id)
			stages = append(stages, name)
		}
		fmt.Fprintf(&b, "%sreturn pipeline(%s, %s)\n", in, n.itemList(), strings.Join(stages, ", "))
	}
	return b.String()
}

func (n *nest) itemList() string {
	items := make([]string, n.items)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// prompt is the expression of an agent's prompt: "L<id>", then ".<i>" for
// each pipeline index around it.
func (n *nest) prompt(vars []string, lang string) string {
	p := fmt.Sprintf(`"L%d"`, n.id)
	for _, v := range vars {
		if lang == "js" {
			p += ` + "." + ` + v
		} else {
			p += ` + "." + str(` + v + `)`
		}
	}
	return p
}

// twinScripts writes the twins of root. Every call goes through call(),
// which logs it first, so that the Node runtime shows the calls over its
// cap too.
func twinScripts(root *nest) (js, starText string) {
	js = `export const meta = { name: 'twin', description: 'a generated nesting' }
const call = (p) => { log('call ' + p); return agent(p) }
return await (` + root.js(nil) + `)()
`
	starText = `meta = {"name": "twin", "description": "a generated nesting"}

def call(p):
    log("call " + p)
    return agent(p)

def main(args):
` + root.star(nil, "    ") + fmt.Sprintf("    return n%d()\n", root.id)
	return js, starText
}

// A twinCase is one generated workflow under one agent cap and one order
// of answers.
type twinCase struct {
	name   string
	js     string
	star   string
	cap    int    // the agent cap; more than the calls for none
	pick   string // which waiting call is answered next: fifo, lifo or stride
	nested *nest
}

// twinCases generates the cases: nestings from a fixed seed, each without
// a cap and under caps from 1 to 10 below its number of calls, with
// answers taken oldest first, and for some newest first or in a stride.
func twinCases(nestings int) []twinCase {
	rng := rand.New(rand.NewPCG(16, 21))
	var cases []twinCase
	for k := 0; k < nestings; {
		root := genNest(rng)
		total := root.calls()
		if total < 2 || total > 150 {
			continue
		}
		k++
		js, st := twinScripts(root)
		caps := []int{1000}
		for _, c := range rng.Perm(min(10, total-1))[:min(3, total-1)] {
			caps = append(caps, c+1)
		}
		for _, c := range caps {
			picks := []string{"fifo"}
			if k%3 == 0 {
				picks = append(picks, []string{"lifo", "stride"}[k%2])
			}
			for _, p := range picks {
				cases = append(cases, twinCase{name: fmt.Sprintf("nest%d/cap%d/%s", k, c, p), js: js, star: st, cap: c, pick: p, nested: root})
			}
		}
	}
	return cases
}

// runningAtOnce is how many calls are at their agents at a time: the
// Node runtime's cap on concurrency (MAX_CONCURRENCY in its
// src/config.ts). Calls start in the order they were made, so the calls
// answered next are among the first runningAtOnce of those waiting.
const runningAtOnce = 16

// pickIndex is the rule both this test and testdata/seedrun.mjs answer by:
// the index, among the n calls at their agents, of the one answered at the
// step-th answer.
func pickIndex(rule string, step, n int) int {
	switch rule {
	case "lifo":
		return n - 1
	case "stride":
		return (step*7 + 3) % n
	}
	return 0
}

// twinRun is what one run of a twin did.
type twinRun struct {
	Calls  []string        `json:"calls"`  // the prompts of the agent calls, in the order made
	Ran    []string        `json:"ran"`    // the prompts answered by an agent (not over the cap)
	Order  []string        `json:"order"`  // the prompts in the order they were answered
	Result json.RawMessage `json:"result"` // the result, when the run completed
	Error  string          `json:"error"`  // the error's code, when it failed
}

func (r twinRun) String() string {
	out := fmt.Sprintf("calls %v\nran   %v\norder %v\n", r.Calls, r.Ran, r.Order)
	if r.Error != "" {
		return out + "error " + r.Error
	}
	return out + "result " + string(r.Result)
}

func loadTwin(t testing.TB, host lang.Host, name, text string) lang.Script {
	t.Helper()
	s, err := host.Load(lang.Source{Path: name, Text: []byte(text)})
	if err != nil {
		t.Fatalf("load %s: %v\n%s", name, err, text)
	}
	return s
}

// runTwinLockstep runs s in lockstep (see langtest.Env.Lockstep) under
// tc's cap and order of answers.
func runTwinLockstep(t testing.TB, s lang.Script, tc twinCase) twinRun {
	t.Helper()
	env := langtest.NewEnv()
	env.Refuse = func(n int, _ langtest.Call) error {
		if n > tc.cap {
			return callpolicy.AgentLimitError(tc.cap)
		}
		return nil
	}
	var order []string
	env.Answer = func(_ context.Context, c langtest.Call) (json.RawMessage, error) {
		order = append(order, c.Prompt)
		return json.Marshal("answer to " + c.Prompt)
	}
	step := 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := env.Lockstep(ctx, func(ctx context.Context) (json.RawMessage, error) { return s.Run(ctx, env) },
		func(waiting []langtest.Call) int {
			step++
			return pickIndex(tc.pick, step-1, min(len(waiting), runningAtOnce))
		})
	out := twinRun{Order: order}
	for _, c := range env.Calls() {
		out.Calls = append(out.Calls, c.Prompt)
	}
	out.Ran = out.Calls[:min(tc.cap, len(out.Calls))]
	if f := env.Failures(); len(f) > 0 {
		t.Fatalf("%s: branches became null: %v", s.Path(), f)
	}
	var ee *engine.Error
	switch {
	case errors.As(err, &ee):
		out.Error = ee.Code
	case err != nil:
		t.Fatalf("%s: %v", s.Path(), err)
	default:
		out.Result = compact(t, res)
	}
	return out
}

// TestTwinsCallInTheSameOrder runs generated nestings in both languages in
// lockstep: the same calls, in the same order, the same calls over the
// cap, and the same result or the same error. Starlark used to queue a
// nested fan-out's branches behind its siblings, so that
// parallel([() => parallel([a1, a2]), () => b]) under a cap of 2 called
// b before a2 and gave [[a1, null], b] where JavaScript failed on b.
func TestTwinsCallInTheSameOrder(t *testing.T) {
	nestings := 120
	if testing.Short() {
		nestings = 30
	}
	cases := twinCases(nestings)
	js, st := jsvm.New(), star.New()
	for _, tc := range cases {
		a := runTwinLockstep(t, loadTwin(t, js, "twin.workflow.js", tc.js), tc)
		b := runTwinLockstep(t, loadTwin(t, st, "twin.workflow.star", tc.star), tc)
		if a.String() != b.String() {
			t.Fatalf("%s: the twins differ\nJavaScript:\n%s\nStarlark:\n%s\n\n%s\n%s", tc.name, a, b, tc.js, tc.star)
		}
		if tc.cap < tc.nested.calls() && a.Error != engine.CodeAgentLimit {
			t.Fatalf("%s: %d calls under a cap of %d did not fail with %s:\n%s\n%s", tc.name, tc.nested.calls(), tc.cap, engine.CodeAgentLimit, a, tc.js)
		}
	}
	t.Logf("%d generated nestings, %d runs per language", nestings, len(cases))
}

// TestTwinsMatchTheNodeRuntime runs the JavaScript twins on the Node
// runtime itself, answered as langtest.Env.Lockstep answers ours, and
// compares its calls, the calls that reached an agent, and its result or
// error code with ours.
func TestTwinsMatchTheNodeRuntime(t *testing.T) {
	seed := nodeseed.Find(t)
	nestings := 120
	if testing.Short() {
		nestings = 30
	}
	cases := twinCases(nestings)
	type seedCase struct {
		Script    string `json:"script"`
		MaxAgents int    `json:"maxAgents"`
		Pick      string `json:"pick"`
	}
	var in struct {
		Cases []seedCase `json:"cases"`
	}
	for _, tc := range cases {
		in.Cases = append(in.Cases, seedCase{tc.js, tc.cap, tc.pick})
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	driver, err := filepath.Abs(filepath.Join("testdata", "seedrun.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, seed.Node, driver, seed.Pkg)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "DYNAMIC_WORKFLOWS_HOME="+cmd.Dir)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", driver, err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	js := jsvm.New()
	i := 0
	for sc.Scan() {
		if i == len(cases) {
			t.Fatalf("node wrote more lines than there are cases: %s", sc.Text())
		}
		tc := cases[i]
		i++
		var want twinRun
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatalf("%s: node wrote %s: %v", tc.name, sc.Text(), err)
		}
		if want.Result != nil {
			want.Result = compact(t, want.Result)
		}
		got := runTwinLockstep(t, loadTwin(t, js, "twin.workflow.js", tc.js), tc)
		if got.String() != want.String() {
			t.Fatalf("%s: ours differs from the Node runtime's\nours:\n%s\nNode:\n%s\n\n%s", tc.name, got, want, tc.js)
		}
	}
	if i != len(cases) {
		t.Fatalf("node answered %d of %d cases:\n%s", i, len(cases), stderr.String())
	}
	t.Logf("%d generated nestings, %d runs, the same as on the Node runtime", nestings, len(cases))
}

func compact(t testing.TB, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// twinOnEngine is what one run of a twin did on the engine.
type twinOnEngine struct {
	started []string // prompts, in the order they reached the executor
	logged  []string // "scope prompt" of every call, in the order made
	status  engine.Status
	code    string
	result  string
}

// runTwinOnEngine runs text on the engine at concurrency 1, on an
// executor that answers at once and notes the order calls reach it.
func runTwinOnEngine(t *testing.T, name, text string, maxAgents int) twinOnEngine {
	t.Helper()
	x := &recorder{}
	rt := newOrderRuntime(t, x)
	opts := orderOptions(1)
	opts.MaxAgents = maxAgents
	r, err := rt.Start(context.Background(), engine.StartRequest{Script: loadText(t, rt, name, text), Options: opts})
	o := runToEnd(t, rt, r, err)
	d, err := rt.Inspect(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	out := twinOnEngine{started: x.order(), status: o.Status, code: d.Summary.ErrorCode, result: string(o.Result)}
	for _, l := range d.Logs {
		if p, ok := strings.CutPrefix(l.Message, "call "); ok {
			out.logged = append(out.logged, l.Scope+" "+p)
		}
	}
	return out
}

// TestTwinsOnTheEngine runs generated nestings in both languages on the
// engine, at concurrency 1, where the order of answers is the order calls
// were made, as in a lockstep run that answers the oldest call first.
// Without a cap, the twins start the same calls, with the same paths, in
// the same order, the lockstep run's, and return the same result. Under a
// cap, they make the same calls up to the first over the cap, and fail
// with AGENT_LIMIT_EXCEEDED; when the failure comes is up to the Go
// scheduler, so what they start after that call is not compared.
func TestTwinsOnTheEngine(t *testing.T) {
	nestings := 25
	if testing.Short() {
		nestings = 10
	}
	js := jsvm.New()
	runs := 0
	for _, tc := range twinCases(nestings) {
		if tc.pick != "fifo" {
			continue
		}
		want := runTwinLockstep(t, loadTwin(t, js, "twin.workflow.js", tc.js), tc)
		a := runTwinOnEngine(t, "twin.workflow.js", tc.js, tc.cap)
		b := runTwinOnEngine(t, "twin.workflow.star", tc.star, tc.cap)
		runs++
		capped := tc.cap < tc.nested.calls()
		made := len(want.Calls)
		if capped {
			made = tc.cap + 1
		}
		for _, got := range []twinOnEngine{a, b} {
			var prompts []string
			for _, l := range got.logged {
				_, p, _ := strings.Cut(l, " ")
				prompts = append(prompts, p)
			}
			if len(prompts) < made || !slices.Equal(prompts[:made], want.Calls[:made]) {
				t.Fatalf("%s: the calls made on the engine\n%v\nwant the lockstep run's\n%v\n%s", tc.name, prompts, want.Calls, tc.js)
			}
			// Under a cap, the calls over it never start, and those under
			// it start in order until the run fails, but for those a
			// fan-out cancelled as the cap's error went through it.
			if capped && !isSubsequence(got.started, want.Ran) || !capped && !slices.Equal(got.started, want.Ran) {
				t.Fatalf("%s: the calls started on the engine\n%v\nwant (in order)\n%v\n%s", tc.name, got.started, want.Ran, tc.js)
			}
		}
		if !slices.Equal(a.logged[:made], b.logged[:made]) {
			t.Fatalf("%s: the twins' calls differ on the engine\nJavaScript: %v\nStarlark:   %v", tc.name, a.logged, b.logged)
		}
		if capped {
			for _, got := range []twinOnEngine{a, b} {
				if got.status != engine.StatusFailed || got.code != engine.CodeAgentLimit {
					t.Fatalf("%s: %s %s, want failed with %s", tc.name, got.status, got.code, engine.CodeAgentLimit)
				}
			}
			continue
		}
		if a.status != engine.StatusCompleted || b.status != engine.StatusCompleted {
			t.Fatalf("%s: JavaScript %s, Starlark %s, want both completed", tc.name, a.status, b.status)
		}
		if !slices.Equal(a.started, b.started) || !slices.Equal(a.logged, b.logged) || a.result != b.result ||
			a.result != string(want.Result) {
			t.Fatalf("%s: the twins differ on the engine\nJavaScript: %v\n%v\n%s\nStarlark:   %v\n%v\n%s\nlockstep: %s",
				tc.name, a.started, a.logged, a.result, b.started, b.logged, b.result, want.Result)
		}
	}
	t.Logf("%d generated nestings, %d runs per language", nestings, runs)
}

// isSubsequence reports whether a is b with some elements left out.
func isSubsequence(a, b []string) bool {
	for _, x := range b {
		if len(a) > 0 && a[0] == x {
			a = a[1:]
		}
	}
	return len(a) == 0
}
