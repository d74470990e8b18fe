package cost

import (
	"slices"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Sample is the usage of calls seen in earlier runs, summed.
type Sample struct {
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	OutputTokens      int64 `json:"outputTokens"`
	Calls             int   `json:"calls"`
	// Model is the model the CLI said answered the latest of the calls,
	// which prices a call that names none better than a guess at the
	// CLI's default.
	Model string `json:"model,omitempty"`
}

func (s *Sample) add(u executors.Usage) {
	s.InputTokens += u.InputTokens
	s.CachedInputTokens += u.CachedInputTokens
	s.OutputTokens += u.OutputTokens
	s.Calls++
}

// Mean is the usage of one call of the sample.
func (s *Sample) Mean() executors.Usage {
	if s == nil || s.Calls == 0 {
		return executors.Usage{}
	}
	n := int64(s.Calls)
	return executors.Usage{InputTokens: s.InputTokens / n, CachedInputTokens: s.CachedInputTokens / n, OutputTokens: s.OutputTokens / n}
}

// Estimates say what a call is likely to use before it runs: learned from
// the finished calls of earlier runs of the same workflow (by the call's
// path, else its group, else its phase), else Default.
type Estimates struct {
	// Runs counts the earlier runs the figures come from.
	Runs      int                `json:"runs"`
	ByPath    map[string]*Sample `json:"byPath,omitempty"`
	ByGroup   map[string]*Sample `json:"byGroup,omitempty"`
	ByPhase   map[string]*Sample `json:"byPhase,omitempty"`
	Default   executors.Usage    `json:"default"`
	learnedIn map[string]bool
}

// NewEstimates returns estimates that know nothing yet: every call is
// assumed to use def.
func NewEstimates(def executors.Usage) *Estimates {
	return &Estimates{ByPath: map[string]*Sample{}, ByGroup: map[string]*Sample{}, ByPhase: map[string]*Sample{},
		Default: def, learnedIn: map[string]bool{}}
}

// Learn adds a finished call of an earlier run (runID) to the estimates:
// its usage, and the model that answered it (model, "" when unknown).
func (e *Estimates) Learn(runID, path, label, phase, model string, u executors.Usage) {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	if e.learnedIn == nil {
		e.learnedIn = map[string]bool{}
	}
	if !e.learnedIn[runID] {
		e.learnedIn[runID] = true
		e.Runs++
	}
	for _, m := range []struct {
		by  map[string]*Sample
		key string
	}{{e.ByPath, path}, {e.ByGroup, GroupOf(path, label)}, {e.ByPhase, phase}} {
		s := m.by[m.key]
		if s == nil {
			s = &Sample{}
			m.by[m.key] = s
		}
		s.add(u)
		if model != "" {
			s.Model = model
		}
	}
}

// The bases of an estimate, best first.
const (
	BasisPath    = "path"    // the same call in earlier runs
	BasisGroup   = "group"   // calls of its label pattern (or fan-out)
	BasisPhase   = "phase"   // calls of its phase
	BasisDefault = "default" // nothing learned: the configured default
)

// For is what the call at path, labeled label, in phase, is likely to use,
// what that is based on, and the model that answered such calls before
// ("" when nothing was learned).
func (e *Estimates) For(path, label, phase string) (executors.Usage, string, string) {
	if e == nil {
		return executors.Usage{}, BasisDefault, ""
	}
	if s := e.ByPath[path]; s != nil {
		return s.Mean(), BasisPath, s.Model
	}
	if s := e.ByGroup[GroupOf(path, label)]; s != nil {
		return s.Mean(), BasisGroup, s.Model
	}
	if s := e.ByPhase[phase]; s != nil {
		return s.Mean(), BasisPhase, s.Model
	}
	return e.Default, BasisDefault, ""
}

// modelFor is the model a call is priced at: the one it names, else the
// one that answered it before, else its CLI's default as the table has it.
func (m *Model) modelFor(executor, named, learned string) string {
	if named == "" && learned != "" {
		return learned
	}
	return m.Prices.ModelOf(executor, named)
}

// Model is what the policy prices calls with: the table, and what calls
// are likely to use before they run.
type Model struct {
	Prices    *Table     `json:"prices"`
	Estimates *Estimates `json:"estimates"`
}

// Estimate is the likely dollar cost of a call that has not run: its
// estimated usage at the price of the model it runs on (model, or its
// executor's default). It is 0 when the model has no price.
func (m *Model) Estimate(path, label, phase, executor, model string) float64 {
	if m == nil {
		return 0
	}
	u, _, learned := m.Estimates.For(path, label, phase)
	p, _, ok := m.Prices.Lookup(m.modelFor(executor, model, learned))
	if !ok {
		return 0
	}
	return p.USD(u)
}

// PlannedCall is a call a plan walk made, as it will run.
type PlannedCall struct {
	Path     string `json:"path"`
	Label    string `json:"label,omitempty"`
	Phase    string `json:"phase,omitempty"`
	Executor string `json:"executor"`
	Model    string `json:"model,omitempty"`
	Effort   string `json:"effort,omitempty"`
	// Route is the route that set the call's model, if one did.
	Route string `json:"route,omitempty"`
}

// Group is the calls of one phase and label pattern that run alike, with
// their forecast.
type Group struct {
	Phase    string `json:"phase"`
	Pattern  string `json:"pattern"`
	Executor string `json:"executor"`
	// Model is the model the calls name or resolve to; PricedAs the
	// table's id that priced it ("" when none did). ModelAssumed says the
	// calls name none, so the model is the one that answered them in
	// earlier runs, or else the one the table says their CLI uses by
	// default.
	Model        string `json:"model,omitempty"`
	ModelAssumed bool   `json:"modelAssumed,omitempty"`
	PricedAs     string `json:"pricedAs,omitempty"`
	Effort       string `json:"effort,omitempty"`
	Route        string `json:"route,omitempty"`
	Calls        int    `json:"calls"`
	// PerCall is the mean usage one call is expected to have.
	PerCall executors.Usage `json:"perCall"`
	// Basis counts the calls by what their estimate is based on.
	Basis map[string]int `json:"basis"`
	USD   float64        `json:"usd"`
}

// Forecast is what a plan's calls are expected to cost.
type Forecast struct {
	Calls  int     `json:"calls"`
	USD    float64 `json:"usd"`
	Groups []Group `json:"groups"`
	// LearnedFrom counts the earlier runs the estimates come from.
	LearnedFrom int `json:"learnedFrom"`
	// Basis counts all calls by what their estimate is based on.
	Basis map[string]int `json:"basis"`
	// Unpriced lists the models the table has no price for: their calls
	// count as $0.
	Unpriced    []string        `json:"unpriced,omitempty"`
	Default     executors.Usage `json:"defaultPerCall"`
	PricesTaken string          `json:"pricesTaken,omitempty"`
	PricesFiles []string        `json:"pricesFiles,omitempty"`
}

// Build forecasts calls with m, grouping them by phase, label pattern and
// what they run on, in the order the groups first appear.
func (m *Model) Build(calls []PlannedCall) Forecast {
	f := Forecast{Basis: map[string]int{}, LearnedFrom: m.Estimates.Runs, Default: m.Estimates.Default,
		PricesTaken: m.Prices.Taken, PricesFiles: m.Prices.Files}
	type groupKey struct{ phase, pattern, executor, model, effort, route string }
	index := map[groupKey]int{}
	unpriced := map[string]bool{}
	for _, c := range calls {
		u, basis, learned := m.Estimates.For(c.Path, c.Label, c.Phase)
		model := m.modelFor(c.Executor, c.Model, learned)
		key := groupKey{c.Phase, GroupOf(c.Path, c.Label), c.Executor, model, c.Effort, c.Route}
		i, ok := index[key]
		if !ok {
			g := Group{Phase: key.phase, Pattern: key.pattern, Executor: key.executor, Model: model, Effort: key.effort,
				Route: key.route, Basis: map[string]int{}, ModelAssumed: c.Model == "" && model != ""}
			if _, id, found := m.Prices.Lookup(model); found {
				g.PricedAs = id
			} else if model != "" {
				unpriced[model] = true
			}
			i = len(f.Groups)
			index[key] = i
			f.Groups = append(f.Groups, g)
		}
		g := &f.Groups[i]
		g.Calls++
		g.Basis[basis]++
		f.Basis[basis]++
		g.PerCall = g.PerCall.Add(u) // summed here, averaged below
		if p, _, found := m.Prices.Lookup(model); found {
			usd := p.USD(u)
			g.USD += usd
			f.USD += usd
		}
		f.Calls++
	}
	for i := range f.Groups {
		g := &f.Groups[i]
		n := int64(g.Calls)
		g.PerCall = executors.Usage{InputTokens: g.PerCall.InputTokens / n, CachedInputTokens: g.PerCall.CachedInputTokens / n,
			OutputTokens: g.PerCall.OutputTokens / n}
	}
	for model := range unpriced {
		f.Unpriced = append(f.Unpriced, model)
	}
	slices.Sort(f.Unpriced)
	return f
}

// Tokens is the forecast's total usage.
func (f Forecast) Tokens() executors.Usage {
	var t executors.Usage
	for _, g := range f.Groups {
		n := int64(g.Calls)
		t = t.Add(executors.Usage{InputTokens: g.PerCall.InputTokens * n, CachedInputTokens: g.PerCall.CachedInputTokens * n,
			OutputTokens: g.PerCall.OutputTokens * n})
	}
	return t
}

// Phases lists the forecast's phases in the order they first appear, with
// their calls and cost.
func (f Forecast) Phases() []Group {
	var out []Group
	for _, g := range f.Groups {
		i := slices.IndexFunc(out, func(p Group) bool { return p.Phase == g.Phase })
		if i < 0 {
			out = append(out, Group{Phase: g.Phase})
			i = len(out) - 1
		}
		out[i].Calls += g.Calls
		out[i].USD += g.USD
	}
	return out
}

// DefaultUsage is the per-call usage a table assumes when nothing was
// learned.
func (t *Table) DefaultUsage() executors.Usage {
	if t == nil || t.DefaultTokens == nil {
		return executors.Usage{}
	}
	return *t.DefaultTokens
}
