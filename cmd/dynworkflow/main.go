// Command dynworkflow runs dynamic workflows: scripts that orchestrate many
// coding agents, with a durable journal so that no finished agent call is
// ever paid for twice.
//
// Exit codes: 0 completed, 1 failed or stopped, 2 paused, 64 usage error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// handedOverEnv names, in the environment of a process, the build without
// Temporal that handed it its command (companion.go).
const handedOverEnv = "DYNWORKFLOW_HANDED_OVER"

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitPaused = 2
	exitUsage  = 64
)

func main() {
	// The agent supervisor is this binary run again (see proc.Supervisor).
	proc.RunSupervisorIfAsked()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// gcPercent is the garbage collector's target unless GOGC says otherwise.
// dynworkflow waits on agents: a 1,000-agent run allocates about 27 MB in
// all, and its live heap (about 4 MB, mostly the script's pending promises)
// is what the default target of 100 lets double before a collection. At 50
// the heap stays within half again its live size; the extra collections
// cost no measurable CPU in bench/executors.sh, and the peak RSS of that
// run drops by about 2 MB (of 28).
const gcPercent = 50

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &app{stdin: stdin, stdout: stdout, stderr: stderr, logs: &logSink{out: stderr}, handedOver: os.Getenv(handedOverEnv)}
	// Only this process was handed the command: what it starts (agents
	// that run dynworkflow, say) must not think so too.
	_ = os.Unsetenv(handedOverEnv)
	root := app.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	app.json = app.json || wantsJSON(args)
	f := failureOf(err)
	app.report(f, cmd)
	return f.exit
}

func (a *app) rootCommand() *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "dynworkflow",
		Short: "Run dynamic workflows: scripts that orchestrate many coding agents",
		Long: `dynworkflow runs workflow scripts (*.workflow.js, the dialect of Claude Code's
Workflow tool) that fan out to many coding agents. Every finished agent call is
journaled before the script sees it, so a run that crashed, was paused or was
edited resumes without paying for finished calls again.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case showVersion:
				return a.printVersion()
			case len(args) > 0:
				return unknownCommand(cmd, args[0])
			}
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(flagError)
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if a.jsBusyLimit <= 0 {
			return usageErrorf("--js-busy-limit must be a positive duration, such as 30s or 5m, not %s", a.jsBusyLimit)
		}
		if err := lang.ValidMaxNesting(a.maxNesting); err != nil {
			return usageErrorf("%v", err)
		}
		return nil
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version and the revision it was built from")
	root.PersistentFlags().StringVar(&a.cwd, "cwd", "", "project directory (default: the current directory)")
	root.PersistentFlags().StringVar(&a.stateDir, "state-dir", "", "state root (default: $DYNAMIC_WORKFLOWS_HOME, else ~/.pi/workflows)")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print machine-readable JSON")
	root.PersistentFlags().DurationVar(&a.jsBusyLimit, "js-busy-limit", jsvm.DefaultBusyLimit,
		"stop a JavaScript workflow that computes this long without waiting for the engine (an endless loop)")
	root.PersistentFlags().IntVar(&a.maxNesting, "max-nesting", lang.DefaultMaxNesting,
		fmt.Sprintf("how deeply a script, and the values it passes on (args, results, answers), may nest; at most %d", lang.MaxNestingCeiling))
	root.PersistentFlags().StringArrayVar(&a.commandExecutors, "command-executor", nil,
		"add an executor that runs a command template, [NAME=]TEMPLATE (NAME defaults to \"command\"); placeholders {prompt} {model} {effort} {schema} {schema_file} {dir}; without {prompt} the prompt goes to stdin")
	root.AddCommand(
		a.runCommand(),
		a.resumeCommand(),
		a.listCommand(),
		a.showCommand(),
		a.pauseCommand(),
		a.stopCommand(),
		a.deleteCommand(),
		a.doctorCommand(),
		a.serveCommand(),
		a.checkpointsCommand(),
		a.respondCommand(),
		a.versionCommand(),
		a.fakeModelCommand(),
		a.worktreesCommand(),
		a.workerCommand(),
	)
	return root
}
