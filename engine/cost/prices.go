// Package cost prices agent calls in dollars: a table of per-token prices
// by model (built in, with the date it was taken, and editable by the
// user), what a call is likely to use when it has not run yet (learned
// from earlier runs of the same workflow, else a default), and the
// grouping of call labels into patterns (scan-1 … scan-200 are "scan *")
// that both use. It holds data and arithmetic only: the rules that act on
// a price (the dollar cap, routing) are the call policy's
// (engine/callpolicy), so both backends apply them alike.
package cost

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Price is what a model charges, in dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	Output      float64 `json:"output"`
}

// Table is a price table: prices by model id, aliases (sonnet, opus, …),
// the model each executor uses when a call names none, and the usage a
// call is assumed to have when nothing better is known. Its JSON is the
// format of the built-in table and of the user's file.
type Table struct {
	// Taken is when the prices were read from their sources.
	Taken   string   `json:"taken,omitempty"`
	Unit    string   `json:"unit,omitempty"`
	Sources []string `json:"sources,omitempty"`
	// Models maps a model id to its price. A model a CLI reports with a
	// suffix (a date, a context tag: claude-sonnet-5-5-20261001,
	// claude-opus-4-7[1m]) takes the price of the longest id it starts
	// with.
	Models map[string]Price `json:"models,omitempty"`
	// Aliases name models by another name, as the CLIs accept them.
	Aliases map[string]string `json:"aliases,omitempty"`
	// ExecutorModels is the model a built-in executor's CLI uses when
	// neither the call nor the configuration names one.
	ExecutorModels map[string]string `json:"executorModels,omitempty"`
	// DefaultTokens is the usage a call is assumed to have when no
	// earlier run of the workflow says better.
	DefaultTokens *executors.Usage `json:"defaultTokens,omitempty"`
	// Files are the files the table was read from, beside the built-in
	// one.
	Files []string `json:"files,omitempty"`
}

//go:embed prices.json
var builtinJSON []byte

// Builtin is the price table that ships with dynworkflow: a fresh copy,
// which the caller may change.
func Builtin() *Table {
	var t Table
	if err := json.Unmarshal(builtinJSON, &t); err != nil {
		panic("cost: the built-in price table does not decode: " + err.Error())
	}
	return &t
}

// Merge lays over onto t: models, aliases and executor models by key, the
// default tokens when over sets them. over's sources and date are noted.
func (t *Table) Merge(over *Table, file string) {
	if over == nil {
		return
	}
	if t.Models == nil {
		t.Models = map[string]Price{}
	}
	if t.Aliases == nil {
		t.Aliases = map[string]string{}
	}
	if t.ExecutorModels == nil {
		t.ExecutorModels = map[string]string{}
	}
	maps.Copy(t.Models, over.Models)
	maps.Copy(t.Aliases, over.Aliases)
	maps.Copy(t.ExecutorModels, over.ExecutorModels)
	if over.DefaultTokens != nil {
		d := *over.DefaultTokens
		t.DefaultTokens = &d
	}
	if file != "" {
		t.Files = append(t.Files, file)
	}
}

// Check reports the first price that is not a number a bill could have.
func (t *Table) Check() error {
	for id, p := range t.Models {
		for _, v := range []float64{p.Input, p.CachedInput, p.Output} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("models.%s: a price must be a number of dollars per million tokens, 0 or more", id)
			}
		}
	}
	if d := t.DefaultTokens; d != nil && (d.InputTokens < 0 || d.OutputTokens < 0 || d.CachedInputTokens < 0 || d.CachedInputTokens > d.InputTokens) {
		return fmt.Errorf("defaultTokens: token counts must be 0 or more, and cachedInputTokens at most inputTokens")
	}
	return nil
}

// ModelOf is the model a call on executor runs with when it says model
// ("" when nobody named one: the CLI's own default, as the table knows it).
func (t *Table) ModelOf(executor, model string) string {
	if model != "" {
		return model
	}
	if t == nil {
		return ""
	}
	return t.ExecutorModels[executor]
}

// Lookup finds the price of model: by id, by alias, by a provider prefix
// ("anthropic/claude-opus-4-7"), or by the longest id the name starts
// with, followed by a separator ("-", "@", ":", "[" or "/"). It says which
// id priced it.
func (t *Table) Lookup(model string) (Price, string, bool) {
	if t == nil || model == "" {
		return Price{}, "", false
	}
	name := strings.ToLower(strings.TrimSpace(model))
	if a, ok := t.Aliases[name]; ok {
		name = a
	}
	if p, ok := t.Models[name]; ok {
		return p, name, true
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		if p, id, ok := t.Lookup(name[i+1:]); ok {
			return p, id, true
		}
	}
	best := ""
	for id := range t.Models {
		if len(id) <= len(best) || !strings.HasPrefix(name, id) {
			continue
		}
		if rest := name[len(id):]; rest == "" || strings.ContainsRune("-@:[/", rune(rest[0])) {
			best = id
		}
	}
	if best == "" {
		return Price{}, "", false
	}
	return t.Models[best], best, true
}

// USD is what u costs at p.
func (p Price) USD(u executors.Usage) float64 {
	cached := min(max(u.CachedInputTokens, 0), max(u.InputTokens, 0))
	fresh := max(u.InputTokens-cached, 0)
	return (float64(fresh)*p.Input + float64(cached)*p.CachedInput + float64(max(u.OutputTokens, 0))*p.Output) / 1e6
}

// Cost is what u cost on model: the CLI's own figure when it reported one,
// else the table's price. ok is false when neither is known (a model the
// table lacks).
func (t *Table) Cost(model string, u executors.Usage) (usd float64, ok bool) {
	if u.CostUSD > 0 {
		return u.CostUSD, true
	}
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return 0, true
	}
	p, _, found := t.Lookup(model)
	if !found {
		return 0, false
	}
	return p.USD(u), true
}

// Priced is u with its cost filled in from the table when the CLI did not
// report one.
func (t *Table) Priced(model string, u executors.Usage) executors.Usage {
	if u.CostUSD > 0 {
		return u
	}
	if usd, ok := t.Cost(model, u); ok {
		u.CostUSD = usd
	}
	return u
}
