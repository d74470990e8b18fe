package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
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

// runtime opens the project's store and a runtime over it.
func (a *app) runtime(sim simulate.Config) (*engine.Runtime, error) {
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
	return engine.New(engine.Config{
		Store:     st,
		Hosts:     hosts(),
		Executors: executors.NewSet(simulate.New(sim)),
		Cwd:       cwd,
		Logger:    slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})),
	})
}
