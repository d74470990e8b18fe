package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
)

// app holds the global flags and the streams of one invocation.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	cwd      string
	stateDir string
	json     bool
	// commandExecutors are the --command-executor specs, [NAME=]TEMPLATE.
	commandExecutors []string

	// config is the executor configuration, read once (executorConfig).
	config    *execconfig.Config
	configErr error
}

// projectDir is --cwd made absolute, or the working directory.
func (a *app) projectDir() (string, error) {
	dir := a.cwd
	if dir == "" {
		return os.Getwd()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", usageErrorf("--cwd %s is not a directory", dir)
	}
	return abs, nil
}

func (a *app) stateRoot() (string, error) {
	if a.stateDir != "" {
		return filepath.Abs(a.stateDir)
	}
	return store.DefaultRoot()
}

// hosts is every script language this build knows.
func hosts() *lang.Registry {
	return lang.NewRegistry(jsvm.New(), star.New())
}

// localEventRing is the event ring of a runtime that serves no clients:
// its events go to the progress view as they happen, and nobody catches
// up on old ones. The engine's default ring keeps the last 4,096 events
// and their payloads alive, a megabyte in a 1,000-agent run.
const localEventRing = 64

// runtime opens the project's store and a runtime over it, for commands
// that only read or control runs: a broken executor configuration is a
// warning there, and the built-in executors stand in.
func (a *app) runtime(sim simulate.Config) (*engine.Runtime, error) {
	return a.openRuntime(sim, false, func(*engine.Config) {})
}

// runtimeWith opens a runtime that runs workflows, with a last word on the
// engine's config (serve sets its checkpoint responder and a larger event
// ring). The executor configuration must be sound.
func (a *app) runtimeWith(sim simulate.Config, configure func(*engine.Config)) (*engine.Runtime, error) {
	return a.openRuntime(sim, true, configure)
}

func (a *app) openRuntime(sim simulate.Config, strict bool, configure func(*engine.Config)) (*engine.Runtime, error) {
	cwd, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	root, err := a.stateRoot()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(root, cwd)
	if err != nil {
		return nil, fmt.Errorf("open the state in %s: %w", root, err)
	}
	level := slog.LevelWarn
	if os.Getenv("DYNWORKFLOW_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	conf, err := a.executorConfig(cwd)
	if err != nil {
		if strict {
			return nil, err
		}
		fmt.Fprintln(a.stderr, "dynworkflow: warning:", err)
		conf = execconfig.BuiltInOnly(builtIns)
	}
	// Opening the child registry reaps the agents a killed dynworkflow
	// left running, before anything new starts.
	reg := a.openChildren(context.Background(), root, log)
	cfg := engine.Config{
		Store:     st,
		Hosts:     hosts(),
		Executors: executorSet(conf, sim, reg, log),
		Restore:   restorer(reg, log),
		Cwd:       cwd,
		Logger:    log,
		EventRing: localEventRing,
	}
	configure(&cfg)
	return engine.New(cfg)
}
