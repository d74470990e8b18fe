package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/claudecode"
	"github.com/dynworkflow/dynworkflow/executors/codex"
	"github.com/dynworkflow/dynworkflow/executors/command"
	"github.com/dynworkflow/dynworkflow/executors/pi"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
	"github.com/dynworkflow/dynworkflow/internal/trust"
)

// childrenDir is the child registry's directory under the state root:
// one registry for every project, so that any start reaps any orphan.
const childrenDir = "children"

// builtIns are the built-in executors and their usual binaries; the
// first, the simulated executor, is the default executor.
var builtIns = []execconfig.BuiltIn{
	{Name: simulate.Name}, {Name: codex.Name, Binary: "codex"}, {Name: claudecode.Name, Binary: "claude"}, {Name: pi.Name, Binary: "pi"},
}

// binaryEnv names the variables that override each CLI's binary.
var binaryEnv = map[string]string{
	codex.Name:      "DYNWORKFLOW_CODEX_BIN",
	claudecode.Name: "DYNWORKFLOW_CLAUDE_BIN",
	pi.Name:         "DYNWORKFLOW_PI_BIN",
}

// cliExecutor is what doctor asks of an executor that runs a binary.
type cliExecutor interface {
	executors.Executor
	BinaryName() string
	LookPath() (string, error)
	Version(ctx context.Context) (string, error)
}

// executorConfig reads the executor configuration of project: its file,
// the user's, and the command line. It is read once per invocation.
func (a *app) executorConfig(project string) (*execconfig.Config, error) {
	if a.config != nil || a.configErr != nil {
		return a.config, a.configErr
	}
	o := execconfig.Overrides{Commands: a.commandExecutors, Binaries: map[string]execconfig.Value[string]{}}
	for name, v := range binaryEnv {
		if b := os.Getenv(v); b != "" {
			o.Binaries[name] = execconfig.Value[string]{Value: b, Source: execconfig.SourceEnv + " " + v}
		}
	}
	a.config, a.configErr = execconfig.Load(project, execconfig.UserFile(), builtIns, o)
	if a.configErr != nil {
		a.configErr = &exitError{code: exitFailed, err: a.configErr}
	}
	return a.config, a.configErr
}

// runConfig is the executor configuration of a command that runs agents:
// a project file the user has not allowed stops it, with the line that
// says how to allow it.
func (a *app) runConfig(project string) (*execconfig.Config, error) {
	cfg, err := a.executorConfig(project)
	if err != nil {
		return nil, err
	}
	if err := a.projectFile(cfg.NotAllowed, true); err != nil {
		return nil, err
	}
	return cfg, nil
}

// projectFile handles a project file left out for want of the user's
// approval: a command that would run with it (strict) stops, with the
// one line that names the file and the command that allows it; any other
// goes on without it, after that line.
func (a *app) projectFile(na *trust.NotAllowedError, strict bool) error {
	if na == nil {
		return nil
	}
	if strict {
		return &exitError{code: exitFailed, kind: codeNotAllowed, err: na}
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	if msg := na.Error(); !a.warned[msg] {
		a.warned[msg] = true
		fmt.Fprintln(a.stderr, "dynworkflow: "+msg)
	}
	return nil
}

// executorSource is how the run options name where the configuration's
// default executor came from.
func executorSource(source string) string {
	switch source {
	case execconfig.SourceProject:
		return "project config"
	case execconfig.SourceUser:
		return "user config"
	}
	return engine.ExecutorDefault
}

// openChildren opens the child registry of the state root and reaps the
// children that a killed dynworkflow left running: the second line, after
// the ancestor process that kills them and all they started as soon as
// the runtime dies (ancestor.go).
func (a *app) openChildren(ctx context.Context, root string, log *slog.Logger) *proc.Registry {
	reg, err := proc.OpenRegistry(filepath.Join(root, childrenDir), log)
	if err != nil {
		log.Warn("agent processes will not be tracked", "err", err)
		return nil
	}
	orphans, err := reg.Reap(ctx)
	if err != nil {
		log.Warn("reaping orphaned agent processes", "err", err)
	}
	for _, o := range orphans {
		if o.Killed {
			fmt.Fprintf(a.stderr, "dynworkflow: stopped agent process %d (%s), left running by a dynworkflow that was killed\n", o.Pid, o.Name)
		}
	}
	return reg
}

// scratchDir is the directory under the state root for what agent calls
// need on disk beside the child, away from the system's temporary
// directory (agentcli.Config.Scratch).
const scratchDir = "scratch"

// buildExecutor makes the executor e configures; scratch is its
// agentcli.Config.Scratch.
func buildExecutor(e *execconfig.Executor, sim simulate.Config, reg *proc.Registry, log *slog.Logger, scratch string) executors.Executor {
	cfg := agentcli.Config{Binary: e.Binary.Value, Args: e.Args.Value, Env: e.EnvList(), Model: e.Model.Value, Effort: e.Effort.Value,
		Permissions: e.Permissions.Value, Timeout: e.Timeout.Value, IdleTimeout: e.IdleTimeout.Value, Registry: reg, Logger: log, Scratch: scratch}
	switch e.Kind {
	case simulate.Name:
		sim.Defaults = e.Defaults()
		return simulate.New(sim)
	case codex.Name:
		return codex.New(cfg)
	case claudecode.Name:
		return claudecode.New(cfg)
	case pi.Name:
		return pi.New(cfg)
	}
	return command.New(command.Spec{Name: e.Name, Words: e.Command.Value}, cfg)
}

// executorSet is every executor the configuration defines.
func executorSet(cfg *execconfig.Config, sim simulate.Config, reg *proc.Registry, log *slog.Logger, scratch string) *executors.Set {
	set := executors.NewSet()
	for _, e := range cfg.Executors {
		set.Add(buildExecutor(e, sim, reg, log, scratch))
	}
	return set
}

// restorer rebuilds a command executor that a resumed run's journal
// defines and today's configuration does not: a resume need not repeat
// the first run's --command-executor. Environment values are not
// journaled; the configuration files still give them.
func restorer(reg *proc.Registry, log *slog.Logger) func(executors.Definition) (executors.Executor, error) {
	return func(def executors.Definition) (executors.Executor, error) {
		if def.Kind != command.Kind || len(def.Command) == 0 {
			return nil, nil
		}
		return command.New(command.Spec{Name: def.Name, Words: def.Command}, agentcli.Config{
			Model: def.Model, Effort: def.Effort, Permissions: def.Permissions,
			Timeout: msDuration(def.TimeoutMs), IdleTimeout: msDuration(def.IdleTimeoutMs), Registry: reg, Logger: log}), nil
	}
}

// promptInArgsWarning is what is said of a command executor whose template
// passes the prompt as an argument.
const promptInArgsWarning = "passes the prompt as an argument ({prompt}), which every local user can read (ps, /proc/PID/cmdline) while it runs; use {prompt_file} (a file only you can read), or leave {prompt} out to pass it on standard input"

// warnPromptInArgs warns, once per command, of every command executor
// that passes the prompt as an argument.
func (a *app) warnPromptInArgs(cfg *execconfig.Config) {
	for _, e := range cfg.Executors {
		if e.Command != nil && (command.Spec{Name: e.Name, Words: e.Command.Value}).PromptInArgs() {
			fmt.Fprintf(a.stderr, "dynworkflow: warning: command executor %s %s\n", e.Name, promptInArgsWarning)
		}
	}
}
