// Command dynworkflow runs dynamic workflows: scripts that orchestrate many
// coding agents, with a durable journal so that no finished agent call is
// ever paid for twice.
//
// Exit codes: 0 completed, 1 failed or stopped, 2 paused, 64 usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitPaused = 2
	exitUsage  = 64
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error // nil when the message was already printed
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := app.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "dynworkflow:", ee.err)
		}
		if ee.code == exitUsage {
			fmt.Fprintln(stderr, "Run 'dynworkflow --help' for usage.")
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "dynworkflow:", err)
	if isUsage(err) {
		fmt.Fprintln(stderr, "Run 'dynworkflow --help' for usage.")
		return exitUsage
	}
	return exitFailed
}

// isUsage recognises cobra's own usage errors.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument", "flag needs an argument", "bad flag syntax"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "dynworkflow",
		Short: "Run dynamic workflows: scripts that orchestrate many coding agents",
		Long: `dynworkflow runs workflow scripts (*.workflow.js, the dialect of Claude Code's
Workflow tool) that fan out to many coding agents. Every finished agent call is
journaled before the script sees it, so a run that crashed, was paused or was
edited resumes without paying for finished calls again.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	root.PersistentFlags().StringVar(&a.cwd, "cwd", "", "project directory (default: the current directory)")
	root.PersistentFlags().StringVar(&a.stateDir, "state-dir", "", "state root (default: $DYNAMIC_WORKFLOWS_HOME, else ~/.pi/workflows)")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print machine-readable JSON")
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
		a.respondCommand(),
		a.workerCommand(),
	)
	return root
}
