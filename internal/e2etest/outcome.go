package e2etest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// Outcome is the object `run --json` and `resume --json` print.
type Outcome struct {
	RunID       string          `json:"runId"`
	Name        string          `json:"name"`
	Status      string          `json:"status"`
	PauseReason string          `json:"pauseReason"`
	Result      json.RawMessage `json:"result"`
	Error       string          `json:"error"`
	Stats       Stats           `json:"stats"`
	Epoch       int             `json:"epoch"`
}

// Stats are the counts of an Outcome or a Summary.
type Stats struct {
	Agents       int   `json:"agents"`
	Replayed     int   `json:"replayed"`
	Live         int   `json:"live"`
	Failed       int   `json:"failed"`
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// ParseOutcome reads the --json outcome r printed, failing t if there
// is none.
func ParseOutcome(t *testing.T, r Result) Outcome {
	t.Helper()
	var o Outcome
	if err := json.Unmarshal([]byte(r.Stdout), &o); err != nil || o.RunID == "" {
		t.Fatalf("stdout is not a --json outcome (%v):\n%s", err, r)
	}
	return o
}

// Summary is one entry of `list --json`.
type Summary struct {
	RunID       string    `json:"runId"`
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	PauseReason string    `json:"pauseReason"`
	Error       string    `json:"error"`
	StartedAt   time.Time `json:"startedAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Stats       Stats     `json:"stats"`
	JournalSeq  int64     `json:"journalSeq"`
}

// List runs `list --json`.
func (e *Env) List() []Summary {
	e.T.Helper()
	r := e.DWOK("list", "--json")
	var sums []Summary
	if err := json.Unmarshal([]byte(r.Stdout), &sums); err != nil {
		e.T.Fatalf("list --json is not an array of summaries (%v):\n%s", err, r)
	}
	return sums
}

// Listed returns run id's entry of `list --json`.
func (e *Env) Listed(id string) Summary {
	e.T.Helper()
	for _, s := range e.List() {
		if s.RunID == id {
			return s
		}
	}
	e.T.Fatalf("run %s is missing from list --json", id)
	return Summary{}
}

// Detail is the part of `show --json` the tests look at.
type Detail struct {
	Summary Summary `json:"summary"`
	Calls   []struct {
		Path   string          `json:"path"`
		Kind   string          `json:"kind"`
		Status string          `json:"status"`
		Prompt string          `json:"prompt"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	} `json:"calls"`
	Logs []struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	} `json:"logs"`
	Result json.RawMessage `json:"result"`
}

func (e *Env) Show(id string) Detail {
	e.T.Helper()
	r := e.DWOK("show", id, "--json")
	var d Detail
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		e.T.Fatalf("show --json is not a run's detail (%v):\n%s", err, r)
	}
	return d
}

// SameJSON fails the test unless a and b hold equal JSON values.
func SameJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: not JSON (%v): %s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want is not JSON (%v): %s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s differs:\n got: %s\nwant: %s", what, got, want)
	}
}

// RunCompleted runs a script to completion with --json and returns its outcome,
// failing the test unless it completed.
func (e *Env) RunCompleted(script string, flags ...string) Outcome {
	e.T.Helper()
	r := e.DW(append([]string{"run", script, "--json"}, flags...)...)
	ExpectCode(e.T, r, 0)
	o := ParseOutcome(e.T, r)
	if o.Status != "completed" {
		e.T.Fatalf("want status completed:\n%s", r)
	}
	return o
}
