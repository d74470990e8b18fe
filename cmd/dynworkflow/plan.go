package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/lang"
)

func (a *app) planCommand() *cobra.Command {
	var of optionFlags
	cmd := &cobra.Command{
		Use:   "plan FILE|NAME|-",
		Short: "Say what a run would do and cost, without running any agent",
		Long: `Walk the workflow as a run would go, on the simulated executor: no agent runs,
nothing is paid, and nothing is left in the project's state. Print, per phase
and per label pattern (scan-1 … scan-200 are "scan *"), how many agent calls
it makes, on which executor, model and effort (with the routes that chose
them), and a cost forecast.

The forecast takes each call's tokens from earlier runs of the same workflow
in this project (the same call by its path, else calls of its label pattern,
else of its phase; it says how many runs it learned from), else from the
price table's default per call; and prices them with the price table (the
built-in one, dated, with the user's dynworkflow/prices.json laid over it).
Answers are simulated, so a script whose control flow follows its answers is
planned for the simulator's answers; checkpoints take their default, else
yes, the first choice or empty text, and the plan says so.`,
		Args: exactArgs(1, "plan needs a workflow file or a saved workflow's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.options(cmd, &of)
			if err != nil {
				return err
			}
			if args[0] == "-" {
				if err := a.readStdinScript(); err != nil {
					return err
				}
			}
			rt, scriptArgs, err := a.localRuntime(cmd, &of, nil)
			if err != nil {
				return err
			}
			if err := checkExecutor(rt, "--executor", opts.Executor); err != nil {
				return err
			}
			script, err := a.loadScript(rt, args[0])
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			p, err := rt.Plan(cmd.Context(), engine.PlanRequest{Script: script, Args: scriptArgs, Options: opts})
			if err != nil {
				return err
			}
			if a.json {
				return encodeJSON(a.stdout, p)
			}
			printPlan(a.stdout, p, rt.Prices())
			return nil
		},
	}
	of.register(cmd.Flags())
	return cmd
}

// printPlan prints a plan as a table, per phase and label pattern.
func printPlan(w io.Writer, p *engine.Plan, prices *cost.Table) {
	out := bufio.NewWriter(w)
	defer out.Flush()
	f := p.Forecast
	fmt.Fprintf(out, "plan of %s (%s): %s, forecast $%s", escapeControls(p.Name, true), p.Script, plural(f.Calls, "agent call"), dollars(f.USD))
	if p.MaxCostUSD > 0 {
		fmt.Fprintf(out, " (cap $%s)", dollars(p.MaxCostUSD))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "  %s\n", forecastBasis(f))
	if p.Status != engine.StatusCompleted {
		fmt.Fprintf(out, "  the walk ended %s: %s (the plan covers the calls made until then)\n", p.Status, escapeControls(p.Error, true))
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE / CALLS\tN\tEXECUTOR\tMODEL\tEFFORT\tPER CALL (IN/CACHED/OUT)\tBASIS\tCOST")
	phases := f.Phases()
	for _, ph := range phases {
		title := ph.Phase
		if title == "" {
			title = "(no phase)"
		}
		if len(phases) > 1 || ph.Phase != "" {
			fmt.Fprintf(tw, "%s\t%d\t\t\t\t\t\t$%s\n", escapeControls(title, true), ph.Calls, dollars(ph.USD))
		}
		for _, g := range f.Groups {
			if g.Phase != ph.Phase {
				continue
			}
			model := g.Model
			switch {
			case model == "":
				model = "(the CLI's own)"
			case g.ModelAssumed:
				model += " (its default)"
			}
			if g.Route != "" {
				model += " ← route " + g.Route
			}
			if g.PricedAs == "" && g.Model != "" {
				model += " [no price]"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s/%s/%s\t%s\t$%s\n", escapeControls(g.Pattern, true), g.Calls, g.Executor,
				escapeControls(model, true), g.Effort, humanCount(g.PerCall.InputTokens), humanCount(g.PerCall.CachedInputTokens),
				humanCount(g.PerCall.OutputTokens), basisText(g.Basis), dollars(g.USD))
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(out)
	for _, cp := range p.Checkpoints {
		fmt.Fprintf(out, "checkpoint %s %q: assumed %s\n", cp.Path, escapeControls(firstLineOf(cp.Prompt), true), escapeControls(string(cp.Assumed), true))
	}
	for _, l := range p.Limits {
		fmt.Fprintf(out, "limit reached: %s\n", escapeControls(l, true))
	}
	if len(f.Unpriced) > 0 {
		fmt.Fprintf(out, "no price for %s: their calls count as $0; add them to %s\n", strings.Join(f.Unpriced, ", "), pricesFileHint())
	}
	fmt.Fprintf(out, "prices: the built-in table of %s", prices.Taken)
	if len(prices.Files) > 0 {
		fmt.Fprintf(out, ", with %s", strings.Join(prices.Files, ", "))
	}
	fmt.Fprintln(out, " (dollars per million tokens; edit them in "+pricesFileHint()+")")
}

// forecastBasis says what the forecast's token counts come from.
func forecastBasis(f cost.Forecast) string {
	d := f.Default
	def := fmt.Sprintf("the default of %s in (%s cached) / %s out per call", humanCount(d.InputTokens), humanCount(d.CachedInputTokens), humanCount(d.OutputTokens))
	if f.LearnedFrom == 0 {
		return "tokens per call: " + def + " (no earlier run of this workflow in this project to learn from)"
	}
	learned := f.Calls - f.Basis[cost.BasisDefault]
	s := fmt.Sprintf("tokens per call learned from %s of this workflow in this project, for %d of %d calls", plural(f.LearnedFrom, "earlier run"), learned, f.Calls)
	if n := f.Basis[cost.BasisDefault]; n > 0 {
		s += fmt.Sprintf("; %d by %s", n, def)
	}
	return s
}

// basisText lists a group's bases: "path", "4 group, 2 default".
func basisText(b map[string]int) string {
	var parts []string
	total := 0
	for _, k := range []string{cost.BasisPath, cost.BasisGroup, cost.BasisPhase, cost.BasisDefault} {
		total += b[k]
	}
	for _, k := range []string{cost.BasisPath, cost.BasisGroup, cost.BasisPhase, cost.BasisDefault} {
		switch n := b[k]; {
		case n == 0:
		case n == total:
			return k
		default:
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

func pricesFileHint() string { return "~/.config/dynworkflow/prices.json" }

// refuseUnconfirmed is --confirm-above for a run nobody can be asked about
// (no terminal): it plans the run, and refuses it, before it exists, when
// the forecast passes the threshold. --yes clears the threshold first.
func (a *app) refuseUnconfirmed(ctx context.Context, rt *engine.Runtime, script lang.Script, args json.RawMessage, opts engine.Options) error {
	p, err := rt.Plan(ctx, engine.PlanRequest{Script: script, Args: args, Options: opts})
	if err != nil {
		return err
	}
	if f := p.Forecast; f.USD > opts.ConfirmAboveUSD {
		return &exitError{code: exitFailed, kind: "cost_not_confirmed", err: fmt.Errorf(
			"the run is forecast to cost $%s (%s; %s), above --confirm-above $%s, and there is no terminal to ask in: nothing ran. Pass --yes to start it anyway, or see: dynworkflow plan",
			dollars(f.USD), plural(f.Calls, "agent call"), forecastBasis(f), dollars(opts.ConfirmAboveUSD))}
	}
	return nil
}
