package callpolicy

import (
	"fmt"
	"math"

	"github.com/dynworkflow/dynworkflow/executors"
)

// The dollar cap is a hard ceiling like the token budget, but it looks
// ahead: a call starts only while what the run has spent, what the calls
// running now are expected to cost, and what this call is expected to cost
// stay within it. The first call it refuses pauses the run, once the calls
// already running have ended (they were within the cap when they
// started): nothing is lost, and a resume with a higher cap goes on.
// What a call is expected to cost, and what a usage costs when the CLI
// does not say, come from Limits.Cost.

// reserve holds a live call's expected cost against the cap, or refuses
// the call once the cap would be passed. The first refusal is the cap's
// hit, reported once; later calls are refused with the same reason.
func (x *Execution) reserve(c *Call) error {
	est := x.limits.Cost.Estimate(c.Path, c.Opts.Label, c.Phase, c.Executor, c.Model)
	x.costMu.Lock()
	defer x.costMu.Unlock()
	if limit := x.limits.MaxCostUSD; limit > 0 {
		if x.capReason != "" {
			return CostCapError(x.capReason)
		}
		if x.spentUSD+x.heldUSD+est > limit {
			running := ""
			if x.holding > 0 {
				running = fmt.Sprintf(", $%s expected of the %d calls running", money(x.heldUSD), x.holding)
			}
			x.capReason = fmt.Sprintf("the dollar cap: $%s spent%s, and the next call (%s) is expected to cost $%s, which would pass --max-cost $%s; resume with a higher --max-cost to go on",
				money(x.spentUSD), running, c.Path, money(est), money(limit))
			x.host.LimitHit("cost", x.capReason)
			return CostCapError(x.capReason)
		}
	}
	x.heldUSD += est
	x.holding++
	c.held, c.reserved = est, true
	return nil
}

// charge counts what an attempt of c cost, from its usage as the executor
// reported it: the CLI's own dollar figure, else the price table's for the
// model that answered, or, when the table does not know that one, the
// model the call asked for. It returns the usage with its cost filled in.
func (x *Execution) charge(c *Call, reported string, u executors.Usage) executors.Usage {
	if m := x.limits.Cost; m != nil {
		model := m.Prices.ModelOf(c.Executor, c.Model)
		if _, _, ok := m.Prices.Lookup(reported); ok {
			model = reported
		}
		u = m.Prices.Priced(model, u)
	}
	x.costMu.Lock()
	defer x.costMu.Unlock()
	x.spentUSD += u.CostUSD
	// What the call costs now is spent, no longer expected.
	less := min(c.held, u.CostUSD)
	c.held -= less
	x.heldUSD = math.Max(0, x.heldUSD-less)
	return u
}

// release lets go of what is still held for c once it has ended.
func (x *Execution) release(c *Call) {
	x.costMu.Lock()
	defer x.costMu.Unlock()
	if c.held > 0 || c.reserved {
		x.heldUSD = math.Max(0, x.heldUSD-c.held)
		x.holding--
	}
	c.held, c.reserved = 0, false
}

// SetSpentUSD sets what the run cost before this execution: the cap counts
// every execution's spend.
func (x *Execution) SetSpentUSD(usd float64) {
	x.costMu.Lock()
	x.spentUSD = usd
	x.costMu.Unlock()
}

// Spend is what the run has cost so far, with what the calls running now
// are expected to cost, and the cap (0 for none).
func (x *Execution) Spend() (spent, held, limit float64) {
	x.costMu.Lock()
	defer x.costMu.Unlock()
	return x.spentUSD, x.heldUSD, x.limits.MaxCostUSD
}

// CapReason is why the dollar cap stopped a call, or "" while it has not.
func (x *Execution) CapReason() string {
	x.costMu.Lock()
	defer x.costMu.Unlock()
	return x.capReason
}

// money prints dollars as people read them: cents, or more places for
// sums under a cent.
func money(usd float64) string {
	if usd != 0 && math.Abs(usd) < 0.01 {
		return fmt.Sprintf("%.4f", usd)
	}
	return fmt.Sprintf("%.2f", usd)
}
