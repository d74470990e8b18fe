package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/internal/testsize"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// The journal is attacked one byte at a time: every single-byte change and
// every cut of a finished 200-call run's journal (or, by default, a random
// sample of them: 150 of each at full size, 40 otherwise, see
// internal/testsize; DYNWORKFLOW_CORRUPTION=all tries every offset) must
// leave resume, show and list with the true result or an error, never a
// wrong result and never a panic.

// echoExec answers every prompt with a text derived from it, so that a
// call run again gives the same answer and a damaged answer replayed
// changes the run's result.
type echoExec struct{}

func (echoExec) Name() string { return "echo" }

func (echoExec) Run(_ context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	return executors.Result{Text: "answer to " + req.Prompt, Usage: executors.Usage{InputTokens: 5, OutputTokens: 3}}, nil
}

const corruptionScript = `export const meta = { name: 'corruption', description: '200 calls whose answers make the result', phases: ['fan out'] }
phase('fan out')
log('starting ' + args.n)
const answers = await parallel(Array.from({ length: args.n }, (_, i) => () => agent('task ' + i, { label: 'call ' + i })))
return answers
`

// corruptionEnv is a finished run and what its journal must never be
// made to say otherwise.
type corruptionEnv struct {
	rt       *Runtime
	id       string
	paths    store.Paths
	pristine []byte            // the journal as the run left it
	result   string            // the run's result, compact JSON
	answers  map[string]string // finished call path -> answer, compact JSON
}

func newCorruptionEnv(t testing.TB, n int) *corruptionEnv {
	t.Helper()
	cwd := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), cwd)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(echoExec{}), Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	script, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(cwd, "c.workflow.js"), Text: []byte(corruptionScript)})
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Executor = "echo"
	r, err := rt.Start(context.Background(), StartRequest{Script: script, Args: json.RawMessage(`{"n":` + strconv.Itoa(n) + `}`), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.Wait(context.Background())
	if err != nil || o.Status != StatusCompleted {
		t.Fatalf("run: %+v %v", o, err)
	}
	e := &corruptionEnv{rt: rt, id: r.ID(), paths: st.RunPaths(r.ID()), result: compact(t, o.Result), answers: map[string]string{}}
	if e.pristine, err = os.ReadFile(e.paths.Journal); err != nil {
		t.Fatal(err)
	}
	d, err := rt.Inspect(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Calls {
		e.answers[c.Path] = compact(t, c.Result)
	}
	if len(e.answers) != n {
		t.Fatalf("%d finished calls, want %d", len(e.answers), n)
	}
	return e
}

func compact(t testing.TB, raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact %q: %v", raw, err)
	}
	return b.String()
}

// check puts journal in place of the run's and reports anything the
// engine reads from it that the run never said. It returns whether a
// resume would replay every one of the run's calls.
func (e *corruptionEnv) check(t *testing.T, what string, journal []byte) (replaysAll bool) {
	t.Helper()
	if err := os.WriteFile(e.paths.Journal, journal, 0o600); err != nil {
		t.Fatal(err)
	}
	// The torn tails of earlier checks, moved aside, would make every
	// listing read more of the directory.
	defer func() {
		sides, _ := filepath.Glob(e.paths.Journal + ".torn-*")
		for _, p := range sides {
			_ = os.Remove(p)
		}
	}()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: "+format, append([]any{what}, args...)...)
	}

	// What a resume would replay.
	h, err := loadHistory(e.paths.Journal)
	if err == nil {
		answers := 0
		h.ledger.Answers(func(a *callpolicy.Answer) {
			answers++
			if want, ok := e.answers[a.Path]; !ok || compact(t, a.Result) != want {
				fail("resume would replay %s = %s, but the run answered %s", a.Path, a.Result, want)
			}
		})
		if h.end != nil && h.end.Status == string(StatusCompleted) && compact(t, h.end.Result) != e.result {
			fail("the journal's end record gives the result %s, want %s", h.end.Result, e.result)
		}
		replaysAll = answers == len(e.answers)
	} else if !errors.Is(err, ErrNotResumable) {
		fail("loading the history: %v", err)
	}

	// What show says.
	d, err := e.rt.Inspect(e.id)
	if err != nil {
		fail("show: %v", err)
	}
	if len(d.Result) > 0 && compact(t, d.Result) != e.result {
		fail("show gives the result %s, want %s", d.Result, e.result)
	}
	if d.Summary.Status == string(StatusCompleted) && compact(t, d.Result) != e.result {
		fail("show says completed with the result %s", d.Result)
	}
	for _, c := range d.Calls {
		if c.Status == "done" && compact(t, c.Result) != e.answers[c.Path] {
			fail("show gives call %s the answer %s, want %s", c.Path, c.Result, e.answers[c.Path])
		}
	}

	// What list says: the same as show, though its snapshot is the
	// pristine run's.
	sums, err := e.rt.List()
	if err != nil || len(sums) != 1 {
		fail("list: %v, %d runs", err, len(sums))
	}
	if s := sums[0]; s.Status != d.Summary.Status || s.Stats.Agents != d.Summary.Stats.Agents {
		fail("list says %s with %d agents, show says %s with %d", s.Status, s.Stats.Agents, d.Summary.Status, d.Summary.Stats.Agents)
	}
	return replaysAll
}

// offsets returns every offset below n, or a random sample of count of
// them. DYNWORKFLOW_CORRUPTION=all asks for every one, and
// DYNWORKFLOW_CORRUPTION_SHARD=i/k for every k-th from i, so that k
// processes can share the work.
func offsets(n, count int, rng *rand.Rand) []int {
	if os.Getenv("DYNWORKFLOW_CORRUPTION") == "all" || count >= n {
		var shard, shards int
		if _, err := fmt.Sscanf(os.Getenv("DYNWORKFLOW_CORRUPTION_SHARD"), "%d/%d", &shard, &shards); err != nil || shards < 1 {
			shard, shards = 0, 1
		}
		var out []int
		for i := shard; i < n; i += shards {
			out = append(out, i)
		}
		return out
	}
	out := make([]int, count)
	for i := range out {
		out[i] = rng.IntN(n)
	}
	return out
}

// samples is how many offsets each attack tries, unless it tries them all.
var samples = testsize.Of(150, 40)

func TestJournalSingleByteChanges(t *testing.T) {
	t.Parallel()
	e := newCorruptionEnv(t, 200)
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	offs := offsets(len(e.pristine), samples, rng)
	start, damaged := time.Now(), 0
	for _, off := range offs {
		x := byte(1 + rng.IntN(255))
		b := bytes.Clone(e.pristine)
		b[off] ^= x
		if !e.check(t, fmt.Sprintf("byte %d ^ %#02x", off, x), b) {
			damaged++
		}
	}
	t.Logf("%d single-byte changes of a %d-byte journal in %v; %d of them cost a call its replay",
		len(offs), len(e.pristine), time.Since(start).Round(time.Millisecond), damaged)
}

func TestJournalCuts(t *testing.T) {
	t.Parallel()
	e := newCorruptionEnv(t, 200)
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))
	offs := append(offsets(len(e.pristine), samples, rng), 0, 1, len(e.pristine)-1)
	for _, off := range offs {
		e.check(t, fmt.Sprintf("cut at byte %d", off), e.pristine[:off])
	}
}

// A resume of a journal with a damaged answer runs that call again, says
// which, and ends with the run's true result.
func TestResumeRerunsDamagedCalls(t *testing.T) {
	e := newCorruptionEnv(t, 20)
	lines := bytes.SplitAfter(e.pristine, []byte("\n"))
	var victim int
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"call.finished"`)) && bytes.Contains(l, []byte(`"path":"/par.0/7/agent.0"`)) {
			victim = i
		}
	}
	if victim == 0 {
		t.Fatal("no finished record for /par.0/7/agent.0")
	}
	at := bytes.Index(lines[victim], []byte("answer to task 7")) + len("answer to ")
	lines[victim][at] = 'X' // "answer to Xask 7": valid JSON, wrong value
	if err := os.WriteFile(e.paths.Journal, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}

	d, err := e.rt.Inspect(e.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Damaged) != 1 || d.Damaged[0].Line != victim+1 || d.Damaged[0].Path != "/par.0/7/agent.0" ||
		!strings.Contains(d.Damaged[0].Effect, "runs again") {
		t.Fatalf("show reports the damage as %+v", d.Damaged)
	}

	r, err := e.rt.Resume(context.Background(), e.id, ResumeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.Wait(context.Background())
	if err != nil || o.Status != StatusCompleted {
		t.Fatalf("resume: %+v %v", o, err)
	}
	if compact(t, o.Result) != e.result {
		t.Errorf("resumed result %s, want %s", o.Result, e.result)
	}
	if o.Stats.Live != 1 || o.Stats.Replayed != 19 {
		t.Errorf("resume ran %d calls live and replayed %d; want the damaged one live and 19 replayed", o.Stats.Live, o.Stats.Replayed)
	}
	if len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "/par.0/7/agent.0") {
		t.Errorf("warnings %q, want one naming the call", o.Warnings)
	}
	d, err = e.rt.Inspect(e.id)
	if err != nil {
		t.Fatal(err)
	}
	var warned bool
	for _, l := range d.Logs {
		warned = warned || l.Level == "warn" && strings.Contains(l.Message, "/par.0/7/agent.0")
	}
	if !warned {
		t.Errorf("the run's log does not say which call ran again: %+v", d.Logs)
	}
}
