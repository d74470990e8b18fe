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

// buildExecutor makes the executor e configures.
func buildExecutor(e *execconfig.Executor, sim simulate.Config, reg *proc.Registry, log *slog.Logger) executors.Executor {
	cfg := agentcli.Config{Binary: e.Binary.Value, Args: e.Args.Value, Env: e.EnvList(), Model: e.Model.Value, Effort: e.Effort.Value,
		Permissions: e.Permissions.Value, Timeout: e.Timeout.Value, Registry: reg, Logger: log}
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
func executorSet(cfg *execconfig.Config, sim simulate.Config, reg *proc.Registry, log *slog.Logger) *executors.Set {
	set := executors.NewSet()
	for _, e := range cfg.Executors {
		set.Add(buildExecutor(e, sim, reg, log))
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
			Timeout: msDuration(def.TimeoutMs), Registry: reg, Logger: log}), nil
	}
}
