package engine

import (
	"github.com/dynworkflow/dynworkflow/engine/cost"
)

// learnRuns bounds how many earlier runs a forecast reads: the newest
// ones say most about the next.
const learnRuns = 20

// Prices is the price table the runtime prices calls with.
func (rt *Runtime) Prices() *cost.Table { return rt.cfg.Prices }

// costModel is what a run's calls are priced with: the runtime's price
// table, and what its calls are expected to use, learned from earlier
// runs of the workflow when learn is set (the dollar cap and forecasts
// need it; pricing a finished call does not).
func (rt *Runtime) costModel(name string, learn bool) *cost.Model {
	est := cost.NewEstimates(rt.cfg.Prices.DefaultUsage())
	if learn {
		est = rt.Estimates(name)
	}
	return &cost.Model{Prices: rt.cfg.Prices, Estimates: est}
}

// Estimates learns what the calls of the workflow called name use from
// its earlier runs in this project (the newest learnRuns of them): every
// call that ran live and reported usage, on an executor that is not the
// simulated one, by its path, its label's pattern and its phase.
func (rt *Runtime) Estimates(name string) *cost.Estimates {
	est := cost.NewEstimates(rt.cfg.Prices.DefaultUsage())
	sums, err := rt.store.ListSummaries()
	if err != nil {
		return est
	}
	read := 0
	for _, s := range sums {
		if read >= learnRuns {
			break
		}
		if s.Name != name || s.Foreign != "" || s.Status == string(StatusDamaged) || s.Stats.InputTokens+s.Stats.OutputTokens == 0 && s.Status != "" {
			continue
		}
		d, err := rt.Inspect(s.RunID)
		if err != nil {
			continue
		}
		read++
		learnFrom(est, d)
	}
	return est
}

// learnFrom adds a run's live agent calls to est.
func learnFrom(est *cost.Estimates, d *Detail) {
	for _, c := range d.Calls {
		if c.Kind != "agent" || c.Usage == nil || c.Source != "live" || c.Executor == "simulate" {
			continue
		}
		est.Learn(d.Summary.RunID, c.Path, c.Label, c.Phase, c.Model, *c.Usage)
	}
}
