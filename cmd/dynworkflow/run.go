package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/lang"
)

func (a *app) runCommand() *cobra.Command {
	var of optionFlags
	var watchFiles bool
	var fw forwardFlagSet
	var bf backendFlags
	cmd := &cobra.Command{
		Use:   "run FILE|NAME",
		Short: "Run a workflow script, or a saved workflow by name",
		Long: `Run a workflow and wait for it. NAME finds a saved workflow in the project's
.claude/workflows/ and .dynworkflow/workflows/, then in the state's saved/.

When the project has a live runtime (dynworkflow serve), the run goes to it:
its id is printed at once, and --attach follows it to its end (--local runs
it here instead).

Ctrl-C pauses the run (its journal stays resumable); a second Ctrl-C stops it.
Exit codes: 0 completed, 1 failed or stopped, 2 paused, 64 usage error.`,
		Args: exactArgs(1, "run needs a workflow file or a saved workflow's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := of.options(cmd)
			if err != nil {
				return err
			}
			if err := a.resolveBackend(cmd, &bf); err != nil {
				return err
			}
			if bf.backend == backendTemporal {
				if watchFiles {
					return usageErrorf("--watch runs in this process; it does not go with --backend temporal")
				}
				return a.runOnTemporal(cmd, &of, &bf, args[0])
			}
			if !fw.local && !watchFiles {
				if cl, d, err := a.liveOwner(cmd.Context()); err != nil {
					return err
				} else if cl != nil {
					return a.forwardRun(cmd, &of, cl, d, args[0], fw.attach)
				}
			}
			rt, scriptArgs, err := a.localRuntime(cmd, &of)
			if err != nil {
				return err
			}
			script, err := a.loadScript(rt, args[0])
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if _, err := rt.Recover(); err != nil {
				return err
			}
			r, err := rt.Start(cmd.Context(), engine.StartRequest{Script: script, Args: scriptArgs, Options: opts})
			if err != nil {
				return err
			}
			if watchFiles {
				return a.watchRun(cmd.Context(), rt, r)
			}
			return a.follow(cmd.Context(), rt, r)
		},
	}
	cmd.Flags().BoolVar(&watchFiles, "watch", false, "re-run the workflow each time its files are saved, replaying what did not change")
	fw.register(cmd)
	of.register(cmd.Flags())
	bf.register(cmd.Flags(), true)
	return cmd
}

// loadScript loads a file by path, or a saved workflow by name.
func (a *app) loadScript(rt *engine.Runtime, ref string) (lang.Script, error) {
	if fi, err := os.Stat(ref); err == nil && !fi.IsDir() {
		abs, err := filepath.Abs(ref)
		if err != nil {
			return nil, err
		}
		return rt.Hosts().LoadFile(abs)
	}
	script, err := rt.ResolveWorkflow(ref, ".")
	var le *lang.Error
	if err != nil && !errors.As(err, &le) {
		return nil, fmt.Errorf("%s is neither a file nor a saved workflow: %w", ref, err)
	}
	return script, err
}

func exactArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s", msg)
		}
		return nil
	}
}
