package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

func (a *app) worktreesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktrees [RUN]",
		Short: "List the git worktrees that isolated agents kept, with their diff stats",
		Long: `List the worktrees kept by agent calls made with isolation: 'worktree', of
one run or of every run of the project. Each holds an agent's edits on its own
branch, dynworkflow/<run>/<label>, started from the commit the project was on.
Review one with git diff HEAD...BRANCH, take it with git merge BRANCH.

STATE says whether the branch is merged into HEAD, moved since the agent
ended, gone, has uncommitted edits in its directory, or holds the partial
edits of an interrupted call. A call that was running when its process died
is "unsettled" until the run is resumed: the resume commits its edits first.`,
		Args: maxArgs(1, "worktrees takes at most one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 1 {
				if id, err = worktreesRunID(rt, args[0]); err != nil {
					return err
				}
			}
			states, err := rt.Worktrees(cmd.Context(), id)
			if err != nil {
				return err
			}
			if a.json {
				if states == nil {
					states = []engine.WorktreeState{}
				}
				return encodeJSON(a.stdout, states)
			}
			if len(states) == 0 {
				fmt.Fprintln(a.stderr, "no kept worktrees")
				return nil
			}
			printWorktrees(a.stdout, states)
			fmt.Fprintln(a.stderr, "review: git diff HEAD...BRANCH · take: git merge BRANCH · remove the merged ones: dynworkflow worktrees clean")
			return nil
		},
	}
	cmd.AddCommand(a.worktreesCleanCommand())
	return cmd
}

func (a *app) worktreesCleanCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "clean [RUN] [BRANCH...]",
		Short: "Remove kept worktrees whose branches are merged, or the ones named",
		Long: `Remove kept worktrees and their branches. Without BRANCH, every worktree of
RUN (of every run, without RUN) whose branch is merged into HEAD goes; the
others are listed and kept. With BRANCH (the full name, or the part after
dynworkflow/<run>/), the named ones go. Unmerged work, uncommitted edits and
the edits of an interrupted call are never removed without --force; a named
worktree that is refused makes the exit code 1.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(simulate.Config{})
			if err != nil {
				return err
			}
			id, branches := "", args
			if len(args) > 0 && !strings.Contains(args[0], "/") {
				if run, err := worktreesRunID(rt, args[0]); err == nil {
					id, branches = run, args[1:]
				}
			}
			results, err := rt.CleanWorktrees(cmd.Context(), id, branches, force)
			if a.json {
				if results == nil {
					results = []engine.CleanResult{}
				}
				if jerr := encodeJSON(a.stdout, results); jerr != nil {
					return jerr
				}
			} else {
				printCleaned(a.stdout, results)
			}
			if errors.Is(err, engine.ErrUnmerged) {
				return &exitError{code: exitFailed, err: err}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "also remove unmerged work and uncommitted edits")
	return cmd
}

func printWorktrees(w io.Writer, states []engine.WorktreeState) {
	out := bufio.NewWriter(w)
	defer out.Flush()
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCALL\tBRANCH\tCHANGES\tSTATE")
	for _, s := range states {
		call := s.Path
		if s.Label != "" {
			call = s.Label
		}
		changes := s.Now.String()
		if s.BranchHead == "" {
			changes = s.Stat().String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.RunID, cutWidth(escapeControls(call, true), 30), s.Branch, changes, worktreeState(s))
	}
	_ = tw.Flush()
}

// worktreeState says in a few words where a kept worktree stands.
func worktreeState(s engine.WorktreeState) string {
	var parts []string
	switch {
	case s.Active && s.Worker:
		return "active on a Temporal worker (its call is running, or its next attempt will commit it)"
	case s.Active:
		return "active (its call is running)"
	case s.Unsettled:
		return "unsettled: its call was cut short; resume the run to commit its edits"
	case s.BranchHead == "":
		parts = append(parts, "branch gone")
	case s.Merged:
		parts = append(parts, "merged")
	default:
		parts = append(parts, "unmerged")
	}
	if s.Moved() {
		parts = append(parts, "branch moved")
	}
	switch {
	case s.Refused != "":
		parts = append(parts, "its .git was rewritten: git is not run in it")
	case s.Dirty:
		parts = append(parts, "uncommitted edits")
	}
	if !s.Exists && s.BranchHead != "" {
		parts = append(parts, "directory gone")
	}
	if s.Interrupted {
		parts = append(parts, "interrupted call")
	}
	if s.Orphan {
		parts = append(parts, "run deleted")
	}
	if s.Worker {
		parts = append(parts, "made on a Temporal worker")
	}
	if s.Leftover {
		parts = append(parts, "no changes, removal failed")
	}
	if s.Error != "" {
		parts = append(parts, "not committed: "+cutWidth(escapeControls(s.Error, true), 60))
	}
	return strings.Join(parts, ", ")
}

func printCleaned(w io.Writer, results []engine.CleanResult) {
	if len(results) == 0 {
		fmt.Fprintln(w, "nothing to clean")
		return
	}
	for _, r := range results {
		if r.Removed {
			fmt.Fprintf(w, "removed %s (%s)\n", r.Branch, worktreeState(r.WorktreeState))
		} else {
			fmt.Fprintf(w, "kept    %s: %s\n", r.Branch, r.Reason)
		}
	}
}

// printKeptWorktrees adds the worktrees a run kept to show's text.
func printKeptWorktrees(w io.Writer, d *engine.Detail) {
	if len(d.Worktrees) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWorktrees kept (their state now: dynworkflow worktrees %s)\n", d.Summary.RunID)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range d.Worktrees {
		line := fmt.Sprintf("  %s\t%s\t%s\t%s", k.Path, cutWidth(escapeControls(k.Label, true), 30), k.Branch, k.Stat())
		if k.Interrupted {
			line += "\tpartial edits of an interrupted call"
		}
		if k.Error != "" {
			line += "\tnot committed: " + cutWidth(escapeControls(k.Error, true), 60)
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
}

// noteKeptWorktrees tells, after a run, where its agents' edits went.
func (a *app) noteKeptWorktrees(r *engine.Run) {
	if n := r.KeptWorktrees(); n > 0 && !a.json {
		fmt.Fprintf(a.stderr, "%d worktrees kept the isolated agents' edits on their branches; see: dynworkflow worktrees %s\n", n, r.ID())
	}
}

// worktreesRunID resolves a run argument as show does (an id, a prefix,
// "last"), and also accepts the id of a deleted run whose worktrees are
// still on disk.
func worktreesRunID(rt *engine.Runtime, typed string) (string, error) {
	id, err := resolveRunID(rt.Store(), typed)
	if err == nil {
		return id, nil
	}
	if store.ValidRunID(typed) == nil {
		if _, serr := os.Stat(rt.Store().WorktreesDir(typed)); serr == nil {
			return typed, nil
		}
	}
	return "", err
}

// worktreeLine is a call's worktree in one line, for show RUN CALL.
func worktreeLine(w *engine.Worktree) string {
	if w == nil {
		return ""
	}
	switch w.Status {
	case "active":
		return fmt.Sprintf("%s, branch %s from %.12s (the agent is working in it)", w.Dir, w.Branch, w.Base)
	case "removed":
		return fmt.Sprintf("removed: the agent changed nothing (it worked in %s, from %.12s)", w.Dir, w.Base)
	}
	line := fmt.Sprintf("kept on branch %s, %.12s..%.12s, %s, in %s", w.Branch, w.Base, w.Head, w.Stat(), w.Dir)
	if w.Interrupted {
		line += "; partial edits of an interrupted call"
	}
	if w.Error != "" {
		line += "; not committed: " + escapeControls(w.Error, true)
	}
	return line
}

func maxArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("%s", msg)
		}
		return nil
	}
}
