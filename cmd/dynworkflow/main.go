// Command dynworkflow runs dynamic workflows: scripts that orchestrate many
// coding agents, with a durable journal so that no finished agent call is
// ever paid for twice.
//
// Exit codes: 0 completed, 1 failed or stopped, 2 paused, 3 completed with
// script errors swallowed, 64 usage error (README: "Exit codes").
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
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
	// exitScriptErrors is a run that completed although its script threw
	// in parallel() branches or pipeline() items, which became null.
	exitScriptErrors = 3
	exitUsage        = 64
)

// The main goroutine runs on the main thread, which a runtime keeps to
// reap what its agents leave behind (see proc.Main).
func init() { runtime.LockOSThread() }

func main() {
	os.Exit(proc.Main(func() int {
		return run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}))
}

// agentsGCPercent is the garbage collector's target in a command that runs
// agents, unless GOGC says otherwise. Such a command waits on agents: a
// 1,000-agent run allocates about 27 MB in all, and its live heap (about
// 4 MB, mostly the script's pending promises) is what the default target of
// 100 lets double before a collection. At 50 the heap stays within half
// again its live size; the extra collections cost no measurable CPU in
// bench/executors.sh, and the peak RSS of that run drops by about 2 MB. A
// short command (list, show) keeps the default: at 50 it collects once for
// nothing, 4-6 ms of its 30 ms.
const agentsGCPercent = 50

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &app{stdin: stdin, stdout: stdout, stderr: stderr, logs: &logSink{out: stderr}, handedOver: os.Getenv(handedOverEnv)}
	// Only this process was handed the command: what it starts (agents
	// that run dynworkflow, say) must not think so too.
	_ = os.Unsetenv(handedOverEnv)
	defer app.stopTracing()
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
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if a.jsBusyLimit <= 0 {
			return usageErrorf("--js-busy-limit must be a positive duration, such as 30s or 5m, not %s", a.jsBusyLimit)
		}
		if err := lang.ValidMaxNesting(a.maxNesting); err != nil {
			return usageErrorf("%v", err)
		}
		if err := a.handOverForTracing(cmd); err != nil {
			return err
		}
		if cmd.Annotations[runsAgents] != "" && os.Getenv("GOGC") == "" {
			debug.SetGCPercent(agentsGCPercent)
		}
		return a.superviseAgents(cmd)
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version and the revision it was built from")
	root.PersistentFlags().StringVar(&a.cwd, "cwd", "", "project directory (default: the current directory)")
	root.PersistentFlags().StringVar(&a.stateDir, "state-dir", "", "state root (default: $DYNAMIC_WORKFLOWS_HOME, else ~/.pi/workflows)")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print machine-readable JSON")
	root.PersistentFlags().DurationVar(&a.jsBusyLimit, "js-busy-limit", jsvm.DefaultBusyLimit,
		"stop a JavaScript workflow that computes this long without waiting for the engine (an endless loop)")
	root.PersistentFlags().IntVar(&a.maxNesting, "max-nesting", lang.DefaultMaxNesting,
		fmt.Sprintf("how deeply a script, and the values it passes on (args, results, answers), may nest; at most %d", lang.MaxNestingCeiling))
	root.PersistentFlags().BoolVar(&a.trace, "trace", false,
		"export every run execution as an OpenTelemetry trace over OTLP, configured by the OTEL_* variables (also on with OTEL_TRACES_EXPORTER=otlp)")
	root.PersistentFlags().StringArrayVar(&a.commandExecutors, "command-executor", nil,
		"add an executor that runs a command template, [NAME=]TEMPLATE (NAME defaults to \"command\"); placeholders {prompt_file} {prompt} {model} {effort} {schema} {schema_file} {dir} {permissions}; without {prompt} or {prompt_file} the prompt goes to stdin ({prompt} is readable by every local user: prefer the others)")
	root.AddCommand(
		agentCommand(a.runCommand()),
		a.planCommand(),
		agentCommand(a.resumeCommand()),
		a.listCommand(),
		a.showCommand(),
		a.pauseCommand(),
		a.stopCommand(),
		a.restartCommand(),
		agentCommand(a.forkCommand()),
		a.diffCommand(),
		a.deleteCommand(),
		a.doctorCommand(),
		agentCommand(a.serveCommand()),
		a.checkpointsCommand(),
		a.respondCommand(),
		a.versionCommand(),
		a.fakeModelCommand(),
		a.worktreesCommand(),
		a.workerCommand(),
		a.allowCommand(),
		a.denyCommand(),
		a.scheduleCommand(),
	)
	return root
}
