package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
)

// counting answers "PROMPT #k", k counting the prompt's live runs: a live
// re-run answers with a k higher than any before, an old answer has a
// lower k than the newest.
type counting struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counting) Name() string { return "counting" }

func (c *counting) Run(_ context.Context, req executors.Request, _ executors.Observer) (executors.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[req.Prompt]++
	return executors.Result{Text: fmt.Sprintf("%s #%d", req.Prompt, c.runs[req.Prompt]), Usage: executors.Usage{InputTokens: 3, OutputTokens: 2}}, nil
}

const supersededV1 = `export const meta = { name: 'edited', description: 'edited, then reverted' }
const a = await agent('a')
const b = await agent('b')
const par = await parallel([0, 1, 2].map(i => () => agent('p' + i)))
const ok = await checkpoint('go on?', { kind: 'confirm', headless: 'default', default: true })
const c = await agent('c')
return [a, b, par, ok, c]
`

// answerRE reads "PROMPT #k".
var answerRE = regexp.MustCompile(`^(.*) #(\d+)$`)

// answersOf flattens a result of supersededV1 into prompt -> k.
func answersOf(t *testing.T, raw json.RawMessage) map[string]int {
	t.Helper()
	var v []any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	out := map[string]int{}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case []any:
			for _, y := range x {
				walk(y)
			}
		case string:
			m := answerRE.FindStringSubmatch(x)
			if m == nil {
				t.Fatalf("answer %q", x)
			}
			out[m[1]], _ = strconv.Atoi(m[2])
		}
	}
	walk(v)
	return out
}

// editedRun is a run of supersededV1 that was edited (b became b2, which
// made the calls after it run again) and then reverted to v1 (which ran b
// and the calls after it a third time): three executions whose journal
// holds older answers for most calls.
func editedRun(t *testing.T) (h *harness, id string, newest map[string]int) {
	t.Helper()
	h = newHarnessOn(t, &counting{})
	opts := testOptions()
	opts.Executor = "counting"
	v1 := h.write("edited.workflow.js", supersededV1)
	o := h.run(v1, "", opts)
	mustStatus(t, o, engine.StatusCompleted)
	id = o.RunID
	v2 := h.write("edited.workflow.js", strings.Replace(supersededV1, "agent('b')", "agent('b2')", 1))
	o = h.resume(id, engine.ResumeRequest{Script: v2})
	mustStatus(t, o, engine.StatusCompleted)
	if o.Stats.Replayed != 1 || o.Stats.Live != 5 {
		t.Fatalf("the edit replayed %d and ran %d live; want a replayed, the rest live", o.Stats.Replayed, o.Stats.Live)
	}
	v1 = h.write("edited.workflow.js", supersededV1)
	o = h.resume(id, engine.ResumeRequest{Script: v1})
	mustStatus(t, o, engine.StatusCompleted)
	// Issue 21, item 3: reverting the edit runs every call after the
	// first change live, not the answers made before the edit.
	if o.Stats.Replayed != 1 || o.Stats.Live != 5 {
		t.Fatalf("the revert replayed %d and ran %d live; want a replayed, the rest live", o.Stats.Replayed, o.Stats.Live)
	}
	newest = answersOf(t, o.Result)
	if want := map[string]int{"a": 1, "b": 2, "p0": 3, "p1": 3, "p2": 3, "c": 3}; fmt.Sprint(newest) != fmt.Sprint(want) {
		t.Fatalf("answers after the revert %v, want %v", newest, want)
	}
	d, err := h.rt.Inspect(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Calls {
		if c.Kind == "agent" && c.Status == "done" {
			m := answerRE.FindStringSubmatch(strings.Trim(string(c.Result), `"`))
			if m == nil || m[1] != strings.Trim(c.Prompt, " ") {
				t.Fatalf("show gives %s (%q) the answer %s", c.Path, c.Prompt, c.Result)
			}
		}
	}
	return h, id, newest
}

// Issue 21, Must show 2: whatever line of an edited run's journal is
// damaged or removed, a resume answers every call with its newest durable
// answer or a live re-run, never an older one; and what show says of a
// damaged answer (replayed from another good answer, or run again) is
// what the resume does. Every line is removed, and changed at its middle;
// then 200 random bytes are changed (400 under CI=true; every byte with
// DYNWORKFLOW_CORRUPTION=all, shared out by
// DYNWORKFLOW_CORRUPTION_SHARD=i/k).
func TestDamagedEditedJournalNeverReplaysSupersededAnswers(t *testing.T) {
	h, id, newest := editedRun(t)
	path := h.rt.Store().RunPaths(id).Journal
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(pristine, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	script, err := h.rt.Hosts().LoadFile(filepath.Join(h.dir, "edited.workflow.js"))
	if err != nil {
		t.Fatal(err)
	}

	type trial struct {
		what    string
		journal []byte
	}
	var trials []trial
	for i := range lines {
		removed := bytes.Join(append(append([][]byte{}, lines[:i]...), lines[i+1:]...), nil)
		trials = append(trials, trial{fmt.Sprintf("line %d removed", i+1), removed})
		b := bytes.Clone(pristine)
		off := len(bytes.Join(lines[:i], nil)) + len(lines[i])/2
		b[off] ^= 0x20
		trials = append(trials, trial{fmt.Sprintf("line %d changed at byte %d", i+1, off), b})
	}
	rng := rand.New(rand.NewPCG(21, uint64(time.Now().UnixNano())))
	samples := 200
	if os.Getenv("CI") == "true" {
		samples = 400
	}
	for _, off := range engine.Offsets(len(pristine), samples, rng) {
		x := byte(1 + rng.IntN(255))
		b := bytes.Clone(pristine)
		b[off] ^= x
		trials = append(trials, trial{fmt.Sprintf("byte %d ^ %#02x", off, x), b})
	}

	start, live, refused := time.Now(), 0, 0
	for _, tr := range trials {
		if err := os.WriteFile(path, tr.journal, 0o600); err != nil {
			t.Fatal(err)
		}
		sides, _ := filepath.Glob(path + ".torn-*")
		for _, p := range sides {
			_ = os.Remove(p)
		}
		d, err := h.rt.Inspect(id)
		if err != nil {
			t.Fatalf("%s: show: %v", tr.what, err)
		}
		r, err := h.rt.Resume(context.Background(), id, engine.ResumeRequest{Script: script})
		if errors.Is(err, engine.ErrNotResumable) {
			refused++ // the run record is damaged: nothing is replayed at all
			continue
		}
		if err != nil {
			t.Fatalf("%s: resume: %v", tr.what, err)
		}
		o := h.wait(r)
		if o.Status != engine.StatusCompleted {
			t.Fatalf("%s: resume ended %s: %s", tr.what, o.Status, o.Error)
		}
		got := answersOf(t, o.Result)
		for prompt, k := range got {
			if k < newest[prompt] {
				t.Fatalf("%s: the resume answered %s with its run #%d, older than the newest durable answer (#%d)", tr.what, prompt, k, newest[prompt])
			}
			if k > newest[prompt] {
				live++
			}
		}
		// What show said of each damaged answer is what the resume did.
		ranLive := map[string]bool{}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(after, []byte("\n")) {
			var rec map[string]any
			if json.Unmarshal(l, &rec) == nil && rec["type"] == "call.started" && epochOf(rec) == o.Epoch {
				ranLive[rec["path"].(string)] = true
			}
		}
		for _, dm := range d.Damaged {
			if dm.Type != "call.finished" || dm.Path == "" {
				continue
			}
			again := strings.Contains(dm.Effect, "runs again")
			if again != ranLive[dm.Path] {
				t.Fatalf("%s: show said of %s %q, but the resume ran it live: %v", tr.what, dm.Path, dm.Effect, ranLive[dm.Path])
			}
		}
	}
	t.Logf("%d damaged or cut copies of an edited run's %d-byte journal resumed in %v (%d calls ran again, %d refused for a damaged run record)",
		len(trials), len(pristine), time.Since(start).Round(time.Millisecond), live, refused)
}
