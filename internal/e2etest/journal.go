package e2etest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// RunsDir is the project's runs directory under the state root.
func (e *Env) RunsDir() string {
	e.T.Helper()
	dirs, _ := filepath.Glob(filepath.Join(e.State, "projects", "*", "runs"))
	if len(dirs) != 1 {
		e.T.Fatalf("want one project runs directory under %s, found %v", e.State, dirs)
	}
	return dirs[0]
}

// JournalIDs lists the runs that have a journal.
func (e *Env) JournalIDs() map[string]bool {
	ids := map[string]bool{}
	matches, _ := filepath.Glob(filepath.Join(e.State, "projects", "*", "runs", "*.jsonl"))
	for _, m := range matches {
		ids[strings.TrimSuffix(filepath.Base(m), ".jsonl")] = true
	}
	return ids
}

// JournalPath is the journal of run id.
func (e *Env) JournalPath(id string) string { return filepath.Join(e.RunsDir(), id+".jsonl") }

// WaitNewJournal waits for p to create a journal that is not in before and
// returns its run id.
func (p *Proc) WaitNewJournal(before map[string]bool) string {
	p.Env.T.Helper()
	var id string
	WaitUntil(p.Env.T, "the run's journal to appear", func() bool {
		for k := range p.Env.JournalIDs() {
			if !before[k] {
				id = k
				return true
			}
		}
		if !p.Alive() {
			p.Env.T.Fatalf("the process exited before it created a journal:\n%s", p.Res)
		}
		return false
	})
	return id
}

// WaitFinished waits until the journal at path holds at least n
// call.finished records, while p runs.
func (p *Proc) WaitFinished(path string, n int) {
	p.Env.T.Helper()
	WaitUntil(p.Env.T, fmt.Sprintf("%d call.finished records in %s", n, path), func() bool {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte(`"type":"call.finished"`)) >= n {
			return true
		}
		if !p.Alive() {
			p.Env.T.Fatalf("the run exited before %d calls finished:\n%s", n, p.Res)
		}
		return false
	})
}

// Record is the part of a journal record the tests look at.
type Record struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	Epoch   int             `json:"epoch"`
	Path    string          `json:"path"`
	Kind    string          `json:"kind"`
	Result  json.RawMessage `json:"result"`
	Level   string          `json:"level"`
	Message string          `json:"message"`
	Call    *struct {
		Prompt string `json:"prompt"`
	} `json:"call"`
	Answer *struct {
		Attempts int `json:"attempts"`
	} `json:"answer"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Resume *struct {
		Rule    string `json:"rule"`
		OldHash string `json:"oldHash"`
		NewHash string `json:"newHash"`
	} `json:"resume"`
	End *struct {
		Status   string `json:"status"`
		Replayed int    `json:"replayed"`
		Live     int    `json:"live"`
	} `json:"end"`
}

// ReadJournal parses the journal at path. A last line that is incomplete
// or not JSON (a torn tail) is returned apart; any other bad line fails the
// test.
func ReadJournal(t *testing.T, path string) (recs []Record, torn []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for len(b) > 0 {
		line, rest, complete := bytes.Cut(b, []byte("\n"))
		var r Record
		if !complete || json.Unmarshal(line, &r) != nil {
			if len(rest) > 0 {
				t.Fatalf("%s: a bad line that is not the last one: %q", path, line)
			}
			return recs, b
		}
		recs = append(recs, r)
		b = rest
	}
	return recs, nil
}

// FinishedAgents returns the paths of the agent calls with a
// call.finished record among recs.
func FinishedAgents(recs []Record) map[string]bool {
	paths := map[string]bool{}
	for _, r := range recs {
		if r.Type == "call.finished" && r.Kind == "agent" {
			paths[r.Path] = true
		}
	}
	return paths
}

// LastResume returns the index of the last resume record, or -1.
func LastResume(recs []Record) int {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Type == "resume" {
			return i
		}
	}
	return -1
}

// StartedAfter returns the paths of the agent calls started after index i.
func StartedAfter(recs []Record, i int) map[string]bool {
	paths := map[string]bool{}
	for _, r := range recs[i+1:] {
		if r.Type == "call.started" && r.Kind == "agent" {
			paths[r.Path] = true
		}
	}
	return paths
}

// SortedKeys is the keys of m, sorted.
func SortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Killed is a run SIGKILLed in the middle.
type Killed struct {
	ID       string
	Journal  string
	Recs     []Record        // the journal as the kill left it
	Finished map[string]bool // agent calls finished before the kill
}

// StartAndKill runs script with flags in the background, waits until at
// least killAt calls finished, SIGKILLs the process and reads the journal
// it left. total is the number of agent calls of a complete run: a kill
// that came too late fails the test.
func (e *Env) StartAndKill(script string, killAt, total int, flags ...string) Killed {
	e.T.Helper()
	before := e.JournalIDs()
	p := e.Start(append([]string{"run", script, "--json"}, flags...)...)
	id := p.WaitNewJournal(before)
	path := e.JournalPath(id)
	p.WaitFinished(path, killAt)
	p.Signal(syscall.SIGKILL)
	r := p.Wait()
	if r.Signal != syscall.SIGKILL {
		e.T.Fatalf("the run was not killed by SIGKILL (it ended first: make it slower):\n%s", r)
	}
	recs, _ := ReadJournal(e.T, path)
	k := Killed{ID: id, Journal: path, Recs: recs, Finished: FinishedAgents(recs)}
	for _, rec := range recs {
		if rec.Type == "end" {
			e.T.Fatalf("the run ended (%s) before the kill; make it slower", rec.End.Status)
		}
	}
	if len(k.Finished) < killAt || len(k.Finished) >= total {
		e.T.Fatalf("%d of %d calls finished before the kill; want at least %d and not all", len(k.Finished), total, killAt)
	}
	return k
}

// NoReRun fails the test if a call in finished was started again after the
// last resume record of the journal at path.
func NoReRun(t *testing.T, path string, finished map[string]bool) []Record {
	t.Helper()
	recs, _ := ReadJournal(t, path)
	i := LastResume(recs)
	if i < 0 {
		t.Fatalf("%s has no resume record", path)
	}
	var again []string
	for p := range StartedAfter(recs, i) {
		if finished[p] {
			again = append(again, p)
		}
	}
	if len(again) > 0 {
		sort.Strings(again)
		t.Fatalf("%d finished calls ran again after the resume: %v", len(again), again)
	}
	return recs
}
