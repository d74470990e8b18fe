package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/claudecode"
	"github.com/dynworkflow/dynworkflow/executors/codex"
	"github.com/dynworkflow/dynworkflow/executors/command"
	"github.com/dynworkflow/dynworkflow/executors/pi"
	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

// childrenDir is the child registry's directory under the state root:
// one registry for every project, so that any start reaps any orphan.
const childrenDir = "children"

// executorsFile is the project's file of command executors:
// {"commands": {"NAME": "TEMPLATE", ...}}.
const executorsFile = ".dynworkflow/executors.json"

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

// openChildren opens the child registry of the state root and reaps the
// children that a killed dynworkflow left running. Agents start through a
// supervisor, started with the first of them, which kills them and all
// they started as soon as this process dies.
func (a *app) openChildren(ctx context.Context, root string, log *slog.Logger) *proc.Registry {
	reg, err := proc.OpenRegistry(filepath.Join(root, childrenDir), log)
	if err != nil {
		log.Warn("agent processes will not be tracked", "err", err)
		return nil
	}
	reg.Supervise(proc.NewSupervisor(log))
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

// cliExecutors are the built-in executors that run agent CLIs.
func cliExecutors(reg *proc.Registry, log *slog.Logger) []cliExecutor {
	cfg := func(name string) agentcli.Config {
		return agentcli.Config{Binary: os.Getenv(binaryEnv[name]), Registry: reg, Logger: log}
	}
	return []cliExecutor{codex.New(cfg(codex.Name)), claudecode.New(cfg(claudecode.Name)), pi.New(cfg(pi.Name))}
}

// commandSpecs are the command executors of --command-executor and of
// the project's executors file; a flag replaces a file entry of its name.
func (a *app) commandSpecs(project string) ([]command.Spec, error) {
	byName := map[string]command.Spec{}
	b, err := os.ReadFile(filepath.Join(project, executorsFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		var file struct {
			Commands map[string]string `json:"commands"`
		}
		if err := json.Unmarshal(b, &file); err != nil {
			return nil, fmt.Errorf("%s: %w", executorsFile, err)
		}
		for name, template := range file.Commands {
			spec, err := command.ParseSpec(name + "=" + template)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", executorsFile, err)
			}
			byName[name] = spec
		}
	}
	for _, s := range a.commandExecutors {
		spec, err := command.ParseSpec(s)
		if err != nil {
			return nil, usageErrorf("--command-executor: %v", err)
		}
		byName[spec.Name] = spec
	}
	specs := make([]command.Spec, 0, len(byName))
	for _, s := range byName {
		switch s.Name {
		case simulate.Name, codex.Name, claudecode.Name, pi.Name:
			return nil, usageErrorf("command executor %q would replace the built-in executor of that name; pick another name", s.Name)
		}
		specs = append(specs, s)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs, nil
}

// executorSet is every executor a run can use.
func (a *app) executorSet(project string, sim simulate.Config, reg *proc.Registry, log *slog.Logger) (*executors.Set, error) {
	set := executors.NewSet(simulate.New(sim))
	for _, e := range cliExecutors(reg, log) {
		set.Add(e)
	}
	specs, err := a.commandSpecs(project)
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		set.Add(command.New(s, agentcli.Config{Registry: reg, Logger: log}))
	}
	return set, nil
}
