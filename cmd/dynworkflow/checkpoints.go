package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

// errNoRuntime explains why there is nothing to answer: only a live
// runtime makes checkpoints wait for a human.
var errNoRuntime = errors.New("this project has no live runtime and no run on Temporal waits on a checkpoint; checkpoints wait for an answer under `dynworkflow serve`, or on Temporal with --await-checkpoints (a plain run applies their declared default, or aborts)")

// pendingCheckpoints lists the checkpoints waiting in the project's live
// runtime, oldest first; live is false when there is no live runtime.
func (a *app) pendingCheckpoints(cmd *cobra.Command) (cps []web.Checkpoint, live bool) {
	cl, _, err := a.liveOwner(cmd.Context())
	if err != nil || cl == nil {
		return nil, false
	}
	cps, err = cl.Checkpoints(cmd.Context())
	if err != nil {
		return nil, true
	}
	return cps, true
}

// waitingCheckpoints gathers the checkpoints waiting for an answer: those
// of the live runtime, if there is one (cl, nil without), and those of the
// project's runs on Temporal, whose entries owners holds by checkpoint id.
// A live Node runtime's checkpoints are among them (nc is its client, nil
// without), by their ids, which are not ours.
func (a *app) waitingCheckpoints(ctx context.Context) (cl *web.Client, nc *web.NodeClient, cps []web.Checkpoint, owners map[string]index.Entry, err error) {
	cl, _, err = a.liveOwner(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if cl != nil {
		if cps, err = cl.Checkpoints(ctx); err != nil {
			return nil, nil, nil, nil, apiFailure(err)
		}
	} else if nc = a.nodeOwner(ctx); nc != nil {
		theirs, err := nc.Checkpoints(ctx)
		if err != nil {
			return nil, nil, nil, nil, &exitError{code: exitFailed, err: err}
		}
		for _, n := range theirs {
			cps = append(cps, nodeCheckpoint(n))
		}
	}
	remote, owners, err := a.temporalCheckpoints(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return cl, nc, append(cps, remote...), owners, nil
}

// nodeCheckpoint is a checkpoint of the Node runtime in our terms.
func nodeCheckpoint(n web.NodeCheckpoint) web.Checkpoint {
	cp := web.Checkpoint{ID: n.ID, RunID: n.RunID, Prompt: n.Prompt, Kind: lang.CheckpointKind(n.Options.Kind),
		Choices: n.Options.Choices, Default: n.Options.Default}
	switch n.Options.Kind {
	case "", "confirm":
		cp.Kind = lang.Confirm
	case "input":
		cp.Kind = lang.Text
	}
	cp.CreatedAt, _ = time.Parse(time.RFC3339Nano, n.CreatedAt)
	return cp
}

func (a *app) checkpointsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "checkpoints [RUN]",
		Short: "List the checkpoints waiting for an answer in the live runtime",
		Long: `List the checkpoints that runs of the live runtime (dynworkflow serve) are
waiting on, oldest first, with what each takes as an answer; RUN keeps one
run's (an id, a prefix of one, or "last"). Answer one with:
dynworkflow respond CHECKPOINT VALUE.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("checkpoints takes at most one run id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			runID := ""
			if len(args) == 1 {
				id, err := a.runIDArg(args[0])
				if err != nil {
					return err
				}
				runID = id
			}
			cl, nc, cps, _, err := a.waitingCheckpoints(cmd.Context())
			if err != nil {
				return err
			}
			kept := cps[:0]
			for _, cp := range cps {
				if runID == "" || cp.RunID == runID {
					kept = append(kept, cp)
				}
			}
			cps = kept
			if a.json {
				if cps == nil {
					cps = []web.Checkpoint{}
				}
				return encodeJSON(a.stdout, cps)
			}
			switch {
			case cl == nil && nc == nil && len(cps) == 0:
				fmt.Fprintln(a.stderr, "no pending checkpoints:", errNoRuntime)
				return nil
			case len(cps) == 0:
				fmt.Fprintln(a.stderr, "no pending checkpoints")
				return nil
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CHECKPOINT\tRUN\tKIND\tWAITING\tQUESTION")
			for _, cp := range cps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cp.ID, cp.RunID, cp.Kind,
					humanMs(time.Since(cp.CreatedAt).Milliseconds()), escapeControls(cp.Prompt, true))
			}
			_ = tw.Flush()
			fmt.Fprintln(out)
			for _, cp := range cps {
				fmt.Fprintf(out, "dynworkflow respond %s %s\n", cp.ID, answerHint(cp))
			}
			return nil
		},
	}
}

// answerHint says what a checkpoint takes as an answer.
func answerHint(cp web.Checkpoint) string {
	switch cp.Kind {
	case lang.Confirm:
		return "yes|no"
	case lang.Select:
		var cs []string
		for i, c := range cp.Choices {
			cs = append(cs, fmt.Sprintf("%d=%s", i+1, escapeControls(c, true)))
		}
		return "CHOICE  (the choice or its number: " + strings.Join(cs, ", ") + ")"
	default:
		return "TEXT"
	}
}

func (a *app) respondCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "respond CHECKPOINT VALUE",
		Short: "Answer a checkpoint a run in the live runtime is waiting on",
		Long: `Answer a pending checkpoint (see: dynworkflow checkpoints). CHECKPOINT is its
id, a prefix of one, or a run (an id, a prefix of one, or "last") that waits
on exactly one checkpoint. VALUE is read by the checkpoint's kind:

  confirm  yes, y, true or no, n, false
  select   one of the choices, or its number (1 for the first)
  text     the text as it is

The answer is checked against the checkpoint, journaled, and replayed on
resume. Checkpoints wait for answers under dynworkflow serve, and on
Temporal in runs started with --await-checkpoints.`,
		Args: exactArgs(2, "respond needs a checkpoint (see: dynworkflow checkpoints) and a value"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, nc, cps, owners, err := a.waitingCheckpoints(cmd.Context())
			if err != nil {
				return err
			}
			if cl == nil && nc == nil && len(cps) == 0 {
				return &exitError{code: exitFailed, kind: codeNoRuntime, err: errNoRuntime}
			}
			cp, err := a.findCheckpoint(cps, args[0])
			if err != nil {
				return err
			}
			value, err := answerValue(cp, args[1])
			if err != nil {
				// As when the runtime refuses an answer: exit 1.
				return &exitError{code: exitFailed, kind: codeBadAnswer, err: err}
			}
			if e, onTemporal := owners[cp.ID]; onTemporal {
				if err := a.respondTemporal(cmd.Context(), e, cp, value); err != nil {
					return err
				}
			} else if cl == nil && nc != nil {
				if err := nc.Respond(cmd.Context(), cp.ID, value); err != nil {
					return &exitError{code: exitFailed, err: err}
				}
			} else if err := cl.Respond(cmd.Context(), cp.ID, value); err != nil {
				return apiFailure(err)
			}
			if a.json {
				return encodeJSON(a.stdout, map[string]any{
					"ok": true, "action": "answered", "checkpointId": cp.ID, "runId": cp.RunID, "path": cp.Path, "value": value,
				})
			}
			fmt.Fprintf(a.stdout, "answered %s of %s: %s\n", cp.ID, cp.RunID, escapeControls(string(value), true))
			return nil
		},
	}
}

// findCheckpoint finds the pending checkpoint the user named: its id, a
// prefix of one, or a run waiting on exactly one.
func (a *app) findCheckpoint(cps []web.Checkpoint, typed string) (web.Checkpoint, error) {
	var matches []web.Checkpoint
	for _, cp := range cps {
		if cp.ID == typed {
			return cp, nil
		}
		if strings.HasPrefix(cp.ID, typed) {
			matches = append(matches, cp)
		}
	}
	if len(matches) == 1 && len(typed) > len("cp-") {
		return matches[0], nil
	}
	if !strings.HasPrefix(typed, "cp-") {
		if id, err := a.runIDArg(typed); err == nil {
			var ofRun []web.Checkpoint
			for _, cp := range cps {
				if cp.RunID == id {
					ofRun = append(ofRun, cp)
				}
			}
			switch len(ofRun) {
			case 1:
				return ofRun[0], nil
			case 0:
				return web.Checkpoint{}, &exitError{code: exitFailed, kind: codeNotFound,
					err: fmt.Errorf("run %s waits on no checkpoint (see: dynworkflow checkpoints)", id)}
			}
			return web.Checkpoint{}, &exitError{code: exitFailed, kind: codeAmbiguousID,
				err: fmt.Errorf("run %s waits on %d checkpoints; name one by its id (see: dynworkflow checkpoints %s)", id, len(ofRun), id)}
		}
	}
	if len(matches) > 1 {
		return web.Checkpoint{}, &exitError{code: exitFailed, kind: codeAmbiguousID,
			err: fmt.Errorf("%q is the start of %d checkpoint ids; type more of it (see: dynworkflow checkpoints)", typed, len(matches))}
	}
	return web.Checkpoint{}, &exitError{code: exitFailed, kind: codeNotFound,
		err: fmt.Errorf("no pending checkpoint %s (see: dynworkflow checkpoints)", typed)}
}

// answerValue reads what the user typed as the checkpoint's kind wants it.
func answerValue(cp web.Checkpoint, typed string) (json.RawMessage, error) {
	switch cp.Kind {
	case lang.Confirm:
		switch strings.ToLower(strings.TrimSpace(typed)) {
		case "y", "yes", "true", "ok":
			return json.RawMessage("true"), nil
		case "n", "no", "false":
			return json.RawMessage("false"), nil
		}
		return nil, fmt.Errorf("checkpoint %s asks yes or no (%q); answer yes, y, no or n, not %q", cp.ID, cp.Prompt, typed)
	case lang.Select:
		// A JSON string ("stable" quoted) is the choice it holds.
		var quoted string
		if json.Unmarshal([]byte(typed), &quoted) == nil {
			typed = quoted
		}
		choice := ""
		for _, c := range cp.Choices {
			if c == typed {
				choice = c
			}
		}
		if choice == "" {
			if n, err := strconv.Atoi(strings.TrimSpace(typed)); err == nil && n >= 1 && n <= len(cp.Choices) {
				choice = cp.Choices[n-1]
			}
		}
		if choice == "" {
			for _, c := range cp.Choices {
				if strings.EqualFold(c, typed) {
					choice = c
				}
			}
		}
		if choice == "" {
			return nil, fmt.Errorf("checkpoint %s takes one of its choices or its number: %s; not %q", cp.ID, answerHint(cp), typed)
		}
		return json.Marshal(choice)
	default:
		var s string
		if json.Unmarshal([]byte(typed), &s) == nil {
			return json.Marshal(s)
		}
		return json.Marshal(typed)
	}
}
