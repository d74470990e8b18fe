package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

// optionFlags are the run options shared by run and resume. On resume only
// the flags given change the journaled options.
type optionFlags struct {
	executor       string
	model          string
	permissions    string
	concurrency    int
	maxAgents      int
	maxItems       int
	agentRetries   int
	agentTimeoutMs int64
	idleTimeout    time.Duration
	tokenBudget    int64
	strict         bool
	maxCost        float64
	confirmAbove   float64
	yes            bool
	routes         []string
	args           string

	simLatency     string
	simFailureRate float64
	simSeed        uint64
}

func (o *optionFlags) register(fs *pflag.FlagSet) {
	d := engine.DefaultOptions()
	fs.StringVar(&o.executor, "executor", "", "executor for agent calls that name none: simulate, codex, claude-code, pi, or a command executor's name (default: defaultExecutor of the executor configuration, else simulate)")
	fs.StringVar(&o.model, "model", "", "model of the calls on the run's executor that name none (default: the executor's configured model, else the CLI's own)")
	fs.StringVar(&o.permissions, "permissions", "", "what agents may change, for calls that say nothing: workspace-write, read-only or full-access (default: the executor's configured permissions, else workspace-write)")
	fs.IntVar(&o.concurrency, "concurrency", d.Concurrency, "agent calls running at once")
	fs.IntVar(&o.maxAgents, "max-agents", d.MaxAgents, "agent() calls per run, nested workflows included")
	fs.IntVar(&o.maxItems, "max-items", d.MaxItems, "items per parallel() or pipeline() call")
	fs.IntVar(&o.agentRetries, "agent-retries", d.AgentRetries, "retries of a transient agent failure")
	fs.Int64Var(&o.agentTimeoutMs, "agent-timeout-ms", 0, "timeout of one agent attempt in milliseconds (0: none)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 0, "stop an agent attempt that shows no progress (no tool call, message or output) for this long, and retry it (default: the executor's configured idleTimeoutMs, else "+callpolicy.DefaultIdleTimeout.String()+"; 0 turns it off)")
	fs.Int64Var(&o.tokenBudget, "token-budget", 0, "hard ceiling on input+output tokens (0: none)")
	fs.BoolVar(&o.strict, "strict", false, "fail the run at the first error the script throws in a parallel() branch or pipeline() item, instead of making that branch null (exit 3 when a run completes with such errors)")
	fs.Float64Var(&o.maxCost, "max-cost", 0, "hard ceiling on what the run may cost, in dollars: no call starts once what was spent and what the running calls are expected to cost would pass it; the run pauses (0: none, or the script's meta.maxCost)")
	fs.Float64Var(&o.confirmAbove, "confirm-above", 0, "ask before the first agent when the run's forecast passes this many dollars (in the terminal, the API or the dashboard; without anyone to ask, refuse unless --yes)")
	fs.BoolVar(&o.yes, "yes", false, "start without asking, whatever --confirm-above says")
	fs.StringArrayVar(&o.routes, "route", nil, "send calls to another model without editing the script: 'LABEL PATTERN=MODEL' ('scan *=haiku'), 'phase:TITLE=MODEL', with ,effort=E or ,executor=NAME; repeat it, first match wins")
	fs.StringVar(&o.args, "args", "", "the script's args: JSON, or @FILE to read JSON from a file")
	fs.StringVar(&o.simLatency, "simulate-latency", "0", "simulated latency per call: MIN..MAX (5ms..50ms) or a fixed duration")
	fs.Float64Var(&o.simFailureRate, "simulate-failure-rate", 0, "share of simulated attempts that fail transiently (0..1)")
	fs.Uint64Var(&o.simSeed, "simulate-seed", 0, "seed of the simulated executor's latency and failures (0: random)")
}

// apply writes the flags the user gave into opts, through the same
// mapping a forwarded request uses, so local and served runs agree.
func (o *optionFlags) apply(cmd *cobra.Command, opts *engine.Options) {
	o.apiOptions(cmd).Apply(opts)
	if cmd.Flags().Changed("executor") {
		opts.ExecutorSource = "flag"
	}
}

// check reports a flag whose value cannot be used, before anything starts.
func (o *optionFlags) check() error {
	for _, spec := range o.routes {
		if _, err := callpolicy.ParseRoute(spec); err != nil {
			return usageErrorf("--route: %v", err)
		}
	}
	return nil
}

// options is the full option set of a new run: the built-in defaults, the
// executor configuration's default executor, then the flags.
func (a *app) options(cmd *cobra.Command, o *optionFlags) (engine.Options, error) {
	opts := engine.DefaultOptions()
	cwd, err := a.projectDir()
	if err != nil {
		return opts, err
	}
	cfg, err := a.runConfig(cwd)
	if err != nil {
		return opts, err
	}
	opts.Executor, opts.ExecutorSource = cfg.DefaultExecutor.Value, executorSource(cfg.DefaultExecutor.Source)
	if err := o.check(); err != nil {
		return opts, err
	}
	routes, err := execconfig.LoadRoutes(cwd, execconfig.UserConfigFile("routes.json"))
	if err != nil {
		return opts, &exitError{code: exitFailed, err: err}
	}
	opts.Routes = routes
	o.apply(cmd, &opts)
	if o.yes {
		opts.ConfirmAboveUSD = 0
	}
	if err := opts.Validate(); err != nil {
		return opts, usageErrorf("%v", err)
	}
	return opts, nil
}

func (o *optionFlags) simulate() (simulate.Config, error) {
	lo, hi, err := simulate.ParseLatency(o.simLatency)
	if err != nil {
		return simulate.Config{}, usageErrorf("--simulate-latency: %v", err)
	}
	if o.simFailureRate < 0 || o.simFailureRate > 1 {
		return simulate.Config{}, usageErrorf("--simulate-failure-rate must be between 0 and 1, not %v", o.simFailureRate)
	}
	return simulate.Config{MinLatency: lo, MaxLatency: hi, FailureRate: o.simFailureRate, Seed: o.simSeed}, nil
}

// argsJSON reads --args: inline JSON, or @FILE. Nil means no args. Args
// nested deeper than maxNesting are refused here, before encoding/json's
// own limit would call them invalid.
func (o *optionFlags) argsJSON(cmd *cobra.Command, maxNesting int) (json.RawMessage, error) {
	if !cmd.Flags().Changed("args") {
		return nil, nil
	}
	text, source := []byte(o.args), "--args"
	if name, ok := strings.CutPrefix(o.args, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, usageError(codeBadArgs, fmt.Errorf("--args: %w", err))
		}
		text, source = b, name
	}
	if err := lang.CheckJSONNesting(source, text, lang.MaxNestingOr(maxNesting)); err != nil {
		return nil, usageError(codeBadArgs, err)
	}
	if !json.Valid(text) {
		var v any
		err := json.Unmarshal(text, &v)
		return nil, usageError(codeBadArgs, fmt.Errorf("%s is not valid JSON (%v); pass a JSON value such as '{\"items\":[1,2]}', or @FILE to read one", source, err))
	}
	return text, nil
}

// localRuntime reads the flags a command running here needs (the simulated
// executor's settings, the script's args) and opens the runtime. Its
// checkpoints go to asker when there is one (a terminal to ask in).
func (a *app) localRuntime(cmd *cobra.Command, of *optionFlags, asker *web.Checkpoints) (*engine.Runtime, json.RawMessage, error) {
	sim, err := of.simulate()
	if err != nil {
		return nil, nil, err
	}
	scriptArgs, err := of.argsJSON(cmd, a.maxNesting)
	if err != nil {
		return nil, nil, err
	}
	rt, err := a.runtimeWith(sim, func(c *engine.Config) {
		if asker != nil {
			c.Responder = asker
		}
	})
	if err == nil && asker != nil {
		asker.Attach(rt.Events())
	}
	return rt, scriptArgs, err
}

// terminalQuestions is the checkpoint broker of a run that asks its
// questions in this terminal, or nil when there is no terminal to ask in
// (the run then keeps its headless behaviour).
func (a *app) terminalQuestions() *web.Checkpoints {
	if !a.canAsk() {
		return nil
	}
	return web.NewCheckpoints()
}

// askHere makes view ask the questions of broker in the terminal.
func (a *app) askHere(view *progressView, broker *web.Checkpoints) {
	if broker == nil {
		return
	}
	view.askIn(a, func(_ context.Context, cp web.Checkpoint, value json.RawMessage) error {
		_, err := broker.Respond(cp.ID, value)
		return err
	})
}

// msDuration is a count of milliseconds as a duration.
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
