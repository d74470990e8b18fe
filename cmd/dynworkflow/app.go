package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

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
	// logs carries the runtime's log to stderr, or above a live view.
	logs *logSink
	// stdinScript is the script `run -` read from standard input.
	stdinScript []byte

	cwd      string
	stateDir string
	json     bool
	// commandExecutors are the --command-executor specs, [NAME=]TEMPLATE.
	commandExecutors []string

	// jsBusyLimit is --js-busy-limit.
	jsBusyLimit time.Duration
	// maxNesting is --max-nesting.
	maxNesting int

	// config is the executor configuration, read once (executorConfig).
	config    *execconfig.Config
	configErr error
	// warned holds the lines already printed about project files that
	// are not allowed, so each is printed once.
	warned map[string]bool

	// trace is --trace; tracing exports the runs of this process's
	// runtime when tracing is on (tracing.go, tracing_lean.go).
	trace   bool
	tracing tracingState

	// handedOver is the build without Temporal that started this process
	// in its place to run a Temporal command (companion.go); empty when
	// the user started it.
	handedOver string
}

// projectDir is --cwd made absolute, or the working directory. Both are
// physical paths, as the Node runtime's process.cwd() and path.resolve give
// them (getcwd(2), not $PWD), so that both runtimes hash the same path to
// the same project.
func (a *app) projectDir() (string, error) {
	wd, err := unix.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the working directory: %w", err)
	}
	dir := a.cwd
	if dir == "" {
		return wd, nil
	}
	abs := filepath.Clean(dir)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(wd, dir)
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

// openStore opens the project's state.
func (a *app) openStore() (*store.Store, error) {
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
	return st, nil
}

// hosts is every script language this build knows.
func (a *app) hosts() *lang.Registry {
	r := lang.NewRegistry(jsvm.NewWithConfig(jsvm.Config{BusyLimit: a.jsBusyLimit, MaxNesting: a.maxNesting}),
		star.NewWithConfig(star.Config{MaxNesting: a.maxNesting}))
	r.CheckSchemasWith(engine.CheckSchema)
	return r
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
	st, err := a.openStore()
	if err != nil {
		return nil, err
	}
	cwd, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	root := st.Root()
	if dir := st.LegacyDir(); dir != "" {
		fmt.Fprintf(a.stderr, "warning: some of this project's runs are still in %s (the project id changed to match the Node runtime's, %s); they move there once no process uses them and no file of the same name is in the way\n",
			dir, st.ProjectID())
	}
	level := slog.LevelWarn
	if os.Getenv("DYNWORKFLOW_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(sinkHandler{slog.NewTextHandler(a.logs, &slog.HandlerOptions{Level: level}), a.logs})
	conf, err := a.executorConfig(cwd)
	if err == nil {
		err = a.projectFile(conf.NotAllowed, strict)
	}
	if err != nil {
		if strict {
			return nil, err
		}
		fmt.Fprintln(a.stderr, "dynworkflow: warning:", err)
		conf = execconfig.BuiltInOnly(builtIns)
	}
	if strict {
		a.warnPromptInArgs(conf)
	}
	prices, err := execconfig.LoadPrices(execconfig.UserConfigFile("prices.json"))
	if err != nil {
		if strict {
			return nil, &exitError{code: exitFailed, err: err}
		}
		fmt.Fprintln(a.stderr, "dynworkflow: warning:", err)
		prices = nil // the built-in table
	}
	// Opening the child registry reaps the agents a killed dynworkflow
	// left running, before anything new starts.
	reg := a.openChildren(context.Background(), root, log)
	cfg := engine.Config{
		Store:      st,
		Hosts:      a.hosts(),
		Executors:  executorSet(conf, sim, reg, log, filepath.Join(root, scratchDir)),
		Restore:    restorer(reg, log),
		Cwd:        cwd,
		Logger:     log,
		EventRing:  localEventRing,
		Prices:     prices,
		MaxNesting: a.maxNesting,
	}
	configure(&cfg)
	var follow func(*engine.Bus)
	if strict {
		if follow, err = a.setUpTracing(&cfg, log); err != nil {
			return nil, err
		}
	}
	rt, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	if follow != nil {
		follow(rt.Events())
	}
	return rt, nil
}
