package main

import (
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) respondCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "respond CHECKPOINT-ID VALUE",
		Short: "Answer a checkpoint a run in the live runtime is waiting on",
		Long: `Answer a pending checkpoint (see GET /api/checkpoints, or the line an attached
run prints). VALUE is parsed as JSON when it parses (true, "beta", 3), else
taken as a string, so: respond cp-... true, respond cp-... beta. The answer is
checked against the checkpoint's kind and choices, journaled, and replayed
on resume. Checkpoints wait for answers under dynworkflow serve, and on
Temporal for runs started with --await-checkpoints.`,
		Args: exactArgs(2, "respond needs a checkpoint id and a value"),
		RunE: func(cmd *cobra.Command, args []string) error {
			value := json.RawMessage(args[1])
			if !json.Valid(value) {
				value, _ = json.Marshal(args[1])
			}
			if found, err := a.respondTemporal(cmd.Context(), args[0], value); found || err != nil {
				if err == nil {
					a.done("answered", args[0])
				}
				return err
			}
			cl, _, err := a.liveOwner(cmd.Context())
			if err != nil {
				return err
			}
			if cl == nil {
				return &exitError{code: exitFailed, err: errors.New("no run of this project waits on that checkpoint: checkpoints wait for answers under `dynworkflow serve`, or on Temporal with --await-checkpoints")}
			}
			if err := cl.Respond(cmd.Context(), args[0], value); err != nil {
				return apiFailure(err)
			}
			a.done("answered", args[0])
			return nil
		},
	}
}
