package engine

import (
	"bytes"
	"encoding/json"
)

// RunDiff is how two runs differ, call by call.
type RunDiff struct {
	A, B  string
	Calls []CallDiff `json:"calls"`
	// Same, Changed, OnlyA and OnlyB count the calls.
	Same    int `json:"same"`
	Changed int `json:"changed"`
	OnlyA   int `json:"onlyA"`
	OnlyB   int `json:"onlyB"`
	// ResultDiffers compares the runs' results.
	ResultDiffers bool            `json:"resultDiffers"`
	ResultA       json.RawMessage `json:"resultA,omitempty"`
	ResultB       json.RawMessage `json:"resultB,omitempty"`
}

// CallDiff is a call that is not the same in both runs.
type CallDiff struct {
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
	// OnlyIn is "a" or "b" for a call one run made and the other did not.
	OnlyIn string `json:"onlyIn,omitempty"`
	// Differs names what differs: prompt, model, status, result.
	Differs []string `json:"differs,omitempty"`
	Left    CallSide `json:"a"`
	Right   CallSide `json:"b"`
}

// CallSide is a call as one run has it.
type CallSide struct {
	Status string          `json:"status,omitempty"`
	Prompt string          `json:"prompt,omitempty"`
	Model  string          `json:"model,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Source string          `json:"source,omitempty"`
}

// DiffRuns compares two runs' calls by path, in path order.
func DiffRuns(a, b *Detail) RunDiff {
	d := RunDiff{A: a.Summary.RunID, B: b.Summary.RunID, ResultA: a.Result, ResultB: b.Result}
	d.ResultDiffers = !sameJSON(a.Result, b.Result)
	right := map[string]*CallDetail{}
	for i := range b.Calls {
		right[b.Calls[i].Path] = &b.Calls[i]
	}
	seen := map[string]bool{}
	side := func(c *CallDetail) CallSide {
		return CallSide{Status: c.Status, Prompt: c.Prompt, Model: c.Model, Result: c.Result, Source: c.Source}
	}
	for i := range a.Calls {
		l := &a.Calls[i]
		seen[l.Path] = true
		r, ok := right[l.Path]
		if !ok {
			d.OnlyA++
			d.Calls = append(d.Calls, CallDiff{Path: l.Path, Kind: l.Kind, Label: l.Label, OnlyIn: "a", Left: side(l)})
			continue
		}
		var differs []string
		if l.Prompt != r.Prompt {
			differs = append(differs, "prompt")
		}
		if l.Model != r.Model {
			differs = append(differs, "model")
		}
		if l.Status != r.Status {
			differs = append(differs, "status")
		}
		if !sameJSON(l.Result, r.Result) {
			differs = append(differs, "result")
		}
		if len(differs) == 0 {
			d.Same++
			continue
		}
		d.Changed++
		d.Calls = append(d.Calls, CallDiff{Path: l.Path, Kind: l.Kind, Label: l.Label, Differs: differs, Left: side(l), Right: side(r)})
	}
	for i := range b.Calls {
		if r := &b.Calls[i]; !seen[r.Path] {
			d.OnlyB++
			d.Calls = append(d.Calls, CallDiff{Path: r.Path, Kind: r.Kind, Label: r.Label, OnlyIn: "b", Right: side(r)})
		}
	}
	return d
}

// sameJSON compares two JSON values by their compact form.
func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
