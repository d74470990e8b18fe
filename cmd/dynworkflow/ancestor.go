package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// runsAgents marks, in a command's annotations, a command that starts
// agent processes.
const runsAgents = "runs-agents"

// agentCommand marks cmd as one that starts agent processes, and returns
// it.
func agentCommand(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[runsAgents] = "yes"
	return cmd
}

// superviseAgents runs a command that starts agents in a runtime child of
// this process, which stays its ancestor, so that nothing an agent started
// outlives the runtime however it dies (proc.RunAncestor). It returns the
// runtime's exit code through cobra; or nil, to run the command here, for
// a command that starts no agent (list, show, --help pay for no second
// process), in the runtime itself, and where there is no ancestor to be.
func (a *app) superviseAgents(cmd *cobra.Command) error {
	if cmd.Annotations[runsAgents] == "" || !proc.WantsAncestor() {
		return nil
	}
	if a.handedOver != "" {
		// The runtime was handed the command too: it must know, lest it
		// hand it back (companion.go).
		_ = os.Setenv(handedOverEnv, a.handedOver)
	}
	code, err := proc.RunAncestor()
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return &exitError{code: code}
}
