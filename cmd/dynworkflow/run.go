package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

func (a *app) runCommand() *cobra.Command {
	var of optionFlags
	var watchFiles, ui bool
	var fw forwardFlagSet
	var bf backendFlags
	cmd := &cobra.Command{
		Use:   "run FILE|NAME|-",
		Short: "Run a workflow script, or a saved workflow by name",
		Long: `Run a workflow and wait for it. NAME finds a saved workflow in the project's
.claude/workflows/ and .dynworkflow/workflows/, then in the state's saved/.
"-" reads the script from standard input: JavaScript, or Starlark when it
defines main (def main(...)); errors name it stdin.workflow.js (.star).

When the project has a live runtime (dynworkflow serve), the run goes to it:
its id is printed at once, and --attach follows it to its end (--local runs
it here instead).

With --ui this process serves the dashboard and the API while the run goes
on, prints the run's dashboard link, and keeps serving after the run ends
until Ctrl-C; checkpoints then wait for an answer from the page (or
dynworkflow respond) instead of taking their headless default.

Ctrl-C pauses the run (its journal stays resumable); a second Ctrl-C stops it.
Exit codes: 0 completed, 1 failed or stopped, 2 paused, 64 usage error.`,
		Args: exactArgs(1, "run needs a workflow file or a saved workflow's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.options(cmd, &of)
			if err != nil {
				return err
			}
			if args[0] == "-" && watchFiles {
				return usageErrorf("run - --watch: a script read from standard input has no file to watch")
			}
			// The backend is known before standard input is read: a build
			// without Temporal hands the whole command, stdin unread, to the
			// build with it.
			if err := a.resolveBackendFor(cmd, &bf, true); err != nil {
				return err
			}
			if bf.backend == backendTemporal {
				if watchFiles {
					return usageErrorf("--watch runs in this process; it does not go with --backend temporal")
				}
				return a.runOnTemporal(cmd, &of, &bf, args[0])
			}
			if args[0] == "-" {
				if err := a.readStdinScript(); err != nil {
					return err
				}
			}
			if !fw.local && !watchFiles {
				if cl, d, err := a.liveOwner(cmd.Context()); err != nil {
					return err
				} else if cl != nil {
					return a.forwardRun(cmd, &of, cl, d, args[0], fw.attach)
				}
				if nc := a.nodeOwner(cmd.Context()); nc != nil && !ui {
					a.noteNodeOwner(nc, args[0])
				}
			}
			if ui {
				return a.runWithUI(cmd, &of, args[0], opts, watchFiles)
			}
			questions := a.terminalQuestions()
			rt, scriptArgs, err := a.localRuntime(cmd, &of, questions)
			if err != nil {
				return err
			}
			if err := checkExecutor(rt, "--executor", opts.Executor); err != nil {
				return err
			}
			r, view, err := a.startHere(cmd.Context(), rt, args[0], scriptArgs, opts, questions)
			if err != nil {
				return err
			}
			if watchFiles {
				return a.watchRun(cmd.Context(), rt, r, view)
			}
			return a.follow(cmd.Context(), rt, r, view)
		},
	}
	cmd.Flags().BoolVar(&watchFiles, "watch", false, "re-run the workflow each time its files are saved, replaying what did not change")
	cmd.Flags().BoolVar(&ui, "ui", false, "serve the dashboard for this run (link on stderr) and keep it up until Ctrl-C; checkpoints wait for an answer there")
	fw.register(cmd)
	of.register(cmd.Flags())
	bf.register(cmd.Flags(), true)
	return cmd
}

// readStdinScript reads the script of `run -` once, before anything may
// need it.
func (a *app) readStdinScript() error {
	b, err := io.ReadAll(io.LimitReader(a.stdin, maxStdinScript+1))
	if err != nil {
		return fmt.Errorf("read the script from standard input: %w", err)
	}
	if len(b) > maxStdinScript {
		return usageErrorf("the script on standard input is over %d MiB", maxStdinScript>>20)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return usageErrorf("run -: standard input is empty; pipe a workflow script into it, as in: dynworkflow run - < review.workflow.js")
	}
	a.stdinScript = b
	return nil
}

// maxStdinScript bounds a script read from standard input.
const maxStdinScript = 4 << 20

// stdinName is the name a script read from standard input goes by:
// Starlark when it defines main, else JavaScript.
func stdinName(text []byte) string {
	if starMain.Match(text) {
		return "stdin.workflow.star"
	}
	return "stdin.workflow.js"
}

var starMain = regexp.MustCompile(`(?m)^def\s+main\s*\(`)

// startHere starts the script ref in this process's runtime, with a
// progress view that listens before the run starts: a log() line before
// the first agent is not lost. The view asks the questions of questions
// in the terminal, if any.
func (a *app) startHere(ctx context.Context, rt *engine.Runtime, ref string, args json.RawMessage, opts engine.Options,
	questions *web.Checkpoints) (*engine.Run, *progressView, error) {
	script, err := a.loadScript(rt, ref)
	if err != nil {
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	if _, err := rt.Recover(); err != nil {
		return nil, nil, err
	}
	if opts.ConfirmAboveUSD > 0 && questions == nil {
		if err := a.refuseUnconfirmed(ctx, rt, script, args, opts); err != nil {
			return nil, nil, err
		}
	}
	view := newProgressView(a.stderr, a.json, a.logs)
	view.subscribe(rt.Events())
	a.askHere(view, questions)
	r, err := rt.Start(ctx, engine.StartRequest{Script: script, Args: args, Options: opts})
	if err != nil {
		view.stop()
		return nil, nil, err
	}
	return r, view, nil
}

// loadScript loads a file by path, a saved workflow by name, or the
// script read from standard input for "-".
func (a *app) loadScript(rt *engine.Runtime, ref string) (lang.Script, error) {
	if ref == "-" {
		cwd, err := a.projectDir()
		if err != nil {
			return nil, err
		}
		return rt.Hosts().Load(lang.Source{Path: filepath.Join(cwd, stdinName(a.stdinScript)), Text: a.stdinScript})
	}
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
