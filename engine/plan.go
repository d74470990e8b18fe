package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/lang"
)

// PlanRequest asks what a run of Script would do.
type PlanRequest struct {
	Script  lang.Script
	Args    json.RawMessage
	Options Options
}

// PlannedCheckpoint is a checkpoint a plan's walk met, and the answer it
// assumed to go on.
type PlannedCheckpoint struct {
	Path    string              `json:"path"`
	Prompt  string              `json:"prompt"`
	Kind    lang.CheckpointKind `json:"kind"`
	Assumed json.RawMessage     `json:"assumed"`
}

// Plan is what a run of a script would do, found by running it on the
// simulated executor, and what that is forecast to cost.
type Plan struct {
	Name   string `json:"name"`
	Script string `json:"script"`
	// Calls are the agent calls the walk made, in the order it made them, each with
	// what it would run on (executor, model, effort, route) on the real
	// run's executors and configuration.
	Calls       []cost.PlannedCall  `json:"calls"`
	Checkpoints []PlannedCheckpoint `json:"checkpoints,omitempty"`
	// Limits are the caps the walk ran into.
	Limits []string `json:"limits,omitempty"`
	// Status and Error are how the walk ended: a script that fails on
	// simulated answers fails here too, and the plan covers the calls made
	// until then.
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// MaxCostUSD is the cap the run would have (its option, else the
	// script's meta.maxCost); 0 for none.
	MaxCostUSD float64       `json:"maxCostUsd,omitempty"`
	Forecast   cost.Forecast `json:"forecast"`
}

// Plan walks a script as a run would go, on the simulated executor:
// nothing is paid, no worktree is made, and nothing is left in the
// project's state (the walk's journal lives in a temporary directory,
// removed after). Every executor of the runtime is stood in for by the
// simulator wearing its name and configuration, so each call resolves the
// model, effort and route it would really run with. Checkpoints take their
// default, else yes, the first choice or empty text, and say so. The
// forecast prices the calls with the runtime's price table and what the
// workflow's earlier runs in this project used (Estimates).
//
// Answers are simulated, so a script whose control flow follows its
// answers (a loop until nothing is found) is planned for the simulator's
// answers, not the model's.
func (rt *Runtime) Plan(ctx context.Context, req PlanRequest) (*Plan, error) {
	dir, err := os.MkdirTemp("", "dynworkflow-plan-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(dir, rt.cfg.Cwd)
	if err != nil {
		return nil, err
	}
	sim := simulate.New(simulate.Config{})
	var stand []executors.Executor
	for _, name := range rt.cfg.Executors.Names() {
		e, _ := rt.cfg.Executors.Get(name)
		stand = append(stand, standIn{name: name, defs: executors.DefaultsOf(e), sim: sim})
	}
	p := &Plan{Name: req.Script.Meta().Name, Script: req.Script.Path()}
	walker, err := New(Config{
		Store: st, Hosts: rt.cfg.Hosts, Executors: executors.NewSet(stand...), Cwd: rt.cfg.Cwd,
		Responder: &assume{plan: p}, Prices: rt.cfg.Prices, NoWorktrees: true, SavedDirs: rt.savedDirs(), EventRing: 64,
	})
	if err != nil {
		return nil, err
	}
	opts := req.Options
	p.MaxCostUSD = cmp.Or(opts.MaxCostUSD, req.Script.Meta().MaxCost)
	opts.MaxCostUSD, opts.ConfirmAboveUSD = 0, 0
	opts.Concurrency = 256
	if _, err := rt.cfg.Executors.Get(opts.Executor); err != nil {
		return nil, err
	}
	r, err := walker.Start(ctx, StartRequest{Script: req.Script, Args: req.Args, Options: opts})
	if err != nil {
		return nil, err
	}
	out, err := r.Wait(ctx)
	if err != nil {
		_ = r.Stop()
		<-r.Done()
		return nil, err
	}
	p.Status, p.Error = out.Status, out.Error
	d, err := walker.Inspect(r.ID())
	if err != nil {
		return nil, err
	}
	// In the order the script made them, which is the order a plan reads.
	slices.SortStableFunc(d.Calls, func(a, b CallDetail) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, c := range d.Calls {
		if c.Kind != "agent" {
			continue
		}
		p.Calls = append(p.Calls, cost.PlannedCall{Path: c.Path, Label: c.Label, Phase: c.Phase, Executor: c.Executor,
			Model: c.Model, Effort: c.Effort, Route: c.Route})
	}
	for _, l := range d.Logs {
		if msg, ok := strings.CutPrefix(l.Message, "limit reached: "); ok {
			p.Limits = append(p.Limits, msg)
		}
	}
	p.Forecast = rt.Forecast(p.Name, p.Calls)
	return p, nil
}

// Forecast prices calls of the workflow called name with the runtime's
// price table and what its earlier runs in this project used.
func (rt *Runtime) Forecast(name string, calls []cost.PlannedCall) cost.Forecast {
	m := &cost.Model{Prices: rt.cfg.Prices, Estimates: rt.Estimates(name)}
	return m.Build(calls)
}

// savedDirs are where the runtime looks up saved workflows.
func (rt *Runtime) savedDirs() []string {
	if rt.cfg.SavedDirs != nil {
		return rt.cfg.SavedDirs
	}
	return rt.store.SavedDirs()
}

// standIn is the simulator wearing a real executor's name and
// configuration, for a plan's walk.
type standIn struct {
	name string
	defs executors.Defaults
	sim  executors.Executor
}

func (s standIn) Name() string                 { return s.name }
func (s standIn) Defaults() executors.Defaults { return s.defs }
func (s standIn) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	res, err := s.sim.Run(ctx, req, observe)
	// The call is on record with the model it would run with, not the
	// simulator's.
	res.Model, res.Provider = req.Model, ""
	return res, err
}

// assume answers a plan's checkpoints, and notes what it assumed.
type assume struct {
	mu   sync.Mutex
	plan *Plan
}

func (a *assume) Ask(_ context.Context, _, path string, req lang.CheckpointRequest) (json.RawMessage, error) {
	answer := req.Default
	if answer == nil {
		switch req.Kind {
		case lang.Confirm:
			answer = json.RawMessage("true")
		case lang.Select:
			if len(req.Choices) == 0 {
				return nil, errors.New("a select checkpoint without choices")
			}
			answer, _ = json.Marshal(req.Choices[0])
		default:
			answer = json.RawMessage(`""`)
		}
	}
	a.mu.Lock()
	a.plan.Checkpoints = append(a.plan.Checkpoints, PlannedCheckpoint{Path: path, Prompt: req.Prompt, Kind: req.Kind, Assumed: answer})
	a.mu.Unlock()
	return answer, nil
}

// ConfirmPath is the path of the question a run asks before its first
// agent when its forecast passes Options.ConfirmAboveUSD. Once answered
// yes, it is journaled and replayed like any checkpoint.
const ConfirmPath = "/confirm-cost"

// confirmCost asks, before the script runs, whether a run whose forecast
// passes its --confirm-above may start, through the runtime's responder
// (a terminal, the API, the dashboard). A run nobody can ask (no responder)
// fails without running anything, as does one the user declines; a yes is
// journaled, so a resume does not ask again.
func (r *Run) confirmCost() error {
	limit := r.opts.ConfirmAboveUSD
	if limit <= 0 || r.policy.Ledger().HasAnswer(ConfirmPath) {
		return nil
	}
	plan, err := r.rt.Plan(r.ctx, PlanRequest{Script: r.script, Args: r.args, Options: r.opts})
	if err != nil {
		return fmt.Errorf("forecast the run's cost for --confirm-above: %w", err)
	}
	f := plan.Forecast
	root := r.main.policy.Root()
	if f.USD <= limit {
		r.logLine(root, "info", fmt.Sprintf("forecast $%.2f for %d agent calls, within --confirm-above $%.2f", f.USD, f.Calls, limit))
		return nil
	}
	learned := "from the default usage per call"
	if f.LearnedFrom > 0 {
		learned = fmt.Sprintf("learned from %d earlier runs", f.LearnedFrom)
	}
	req := lang.CheckpointRequest{Kind: lang.Confirm, Headless: "abort",
		Prompt: fmt.Sprintf("This run is forecast to cost $%.2f (%d agent calls, %s), above --confirm-above $%.2f. Start its agents?",
			f.USD, f.Calls, learned, limit)}
	resp := r.rt.cfg.Responder
	if resp == nil {
		return newError(CodeCostNotConfirmed, ErrCostNotConfirmed, fmt.Sprintf(
			"%s Nobody can answer here (no terminal, no dynworkflow serve): nothing ran. Run it from a terminal or under serve to be asked, or pass --yes to start it anyway",
			strings.TrimSuffix(req.Prompt, " Start its agents?")+"."))
	}
	fp := callpolicy.CheckpointFingerprint(req)
	call := &callInfo{Prompt: req.Prompt}
	r.append(&record{Type: recStarted, Path: ConfirmPath, Kind: "checkpoint", Fingerprint: fp, Call: call})
	answer, err := resp.Ask(r.ctx, r.id, ConfirmPath, req)
	if err != nil {
		return err
	}
	if string(answer) != "true" {
		return newError(CodeCostNotConfirmed, ErrCostNotConfirmed,
			fmt.Sprintf("the forecast ($%.2f, above --confirm-above $%.2f) was declined: no agent ran; resume the run to be asked again", f.USD, limit))
	}
	rec := &record{Type: recFinished, Path: ConfirmPath, Kind: "checkpoint", Fingerprint: fp, Result: answer, Call: call,
		Answer: &answerInfo{Source: "human"}}
	if err := r.appendSync(context.WithoutCancel(r.ctx), rec); err != nil {
		return err
	}
	r.rt.bus.Publish(r.id, EventCheckpoint, CheckpointPayload{Path: ConfirmPath, Prompt: req.Prompt, Answer: answer, Source: "human"})
	return nil
}
