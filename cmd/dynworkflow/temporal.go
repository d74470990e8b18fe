package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal"
	"github.com/dynworkflow/dynworkflow/web"
)

// backendFile is the project's choice of backend:
// {"backend": "temporal", "temporal": {"address": ..., "namespace": ..., "taskQueue": ...}}.
const backendFile = ".dynworkflow/backend.json"

// The backends a run can execute on.
const (
	backendLocal    = "local"
	backendTemporal = "temporal"
)

// backendFlags choose where a run executes: here, or on Temporal. A flag
// the user gives wins over the environment (DYNWORKFLOW_BACKEND,
// DYNWORKFLOW_TEMPORAL_ADDRESS, DYNWORKFLOW_TEMPORAL_NAMESPACE,
// DYNWORKFLOW_TASK_QUEUE), which wins over the project's backend file.
type backendFlags struct {
	backend          string
	temporal         temporal.Config
	awaitCheckpoints bool
	heartbeat        time.Duration
}

func (b *backendFlags) register(fs *pflag.FlagSet, forRuns bool) {
	if forRuns {
		fs.StringVar(&b.backend, "backend", backendLocal, "where the run executes: local, or temporal (its agents run on `dynworkflow worker` processes)")
		fs.BoolVar(&b.awaitCheckpoints, "await-checkpoints", false, "on Temporal, checkpoints wait for `dynworkflow respond` instead of taking their headless default")
		fs.DurationVar(&b.heartbeat, "heartbeat-timeout", temporal.DefaultHeartbeat, "on Temporal, how long a worker may go silent while an agent runs before another worker takes the call")
	}
	fs.StringVar(&b.temporal.Address, "temporal-address", "", "Temporal frontend HOST:PORT (default 127.0.0.1:7233)")
	fs.StringVar(&b.temporal.Namespace, "temporal-namespace", "", "Temporal namespace (default \"default\")")
	fs.StringVar(&b.temporal.TaskQueue, "task-queue", "", "Temporal task queue the runs and workers share (default \"dynworkflow\")")
}

// resolve fills in what the user left unset from the environment and the
// project's backend file.
func (b *backendFlags) resolve(cmd *cobra.Command, project string) error {
	var file struct {
		Backend  string          `json:"backend"`
		Temporal temporal.Config `json:"temporal"`
	}
	raw, err := os.ReadFile(filepath.Join(project, backendFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(raw, &file); err != nil {
			return usageErrorf("%s: %v", filepath.Join(project, backendFile), err)
		}
	}
	pick := func(flag string, v *string, env, fromFile, def string) {
		if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
			return
		}
		for _, s := range []string{os.Getenv(env), fromFile, def} {
			if s != "" {
				*v = s
				return
			}
		}
	}
	pick("backend", &b.backend, "DYNWORKFLOW_BACKEND", file.Backend, backendLocal)
	pick("temporal-address", &b.temporal.Address, "DYNWORKFLOW_TEMPORAL_ADDRESS", file.Temporal.Address, "127.0.0.1:7233")
	pick("temporal-namespace", &b.temporal.Namespace, "DYNWORKFLOW_TEMPORAL_NAMESPACE", file.Temporal.Namespace, temporal.DefaultNamespace)
	pick("task-queue", &b.temporal.TaskQueue, "DYNWORKFLOW_TASK_QUEUE", file.Temporal.TaskQueue, temporal.DefaultTaskQueue)
	if b.backend != backendLocal && b.backend != backendTemporal {
		return usageErrorf("--backend must be local or temporal, not %q", b.backend)
	}
	return nil
}

// resolveBackend reads the backend flags' defaults for the project.
func (a *app) resolveBackend(cmd *cobra.Command, bf *backendFlags) error {
	cwd, err := a.projectDir()
	if err != nil {
		return err
	}
	return bf.resolve(cmd, cwd)
}

// temporalIndex opens the project's index of its runs on Temporal.
func (a *app) temporalIndex() (temporal.Index, error) {
	cwd, err := a.projectDir()
	if err != nil {
		return temporal.Index{}, err
	}
	root, err := a.stateRoot()
	if err != nil {
		return temporal.Index{}, err
	}
	return temporal.OpenIndex(filepath.Join(root, "projects", store.ProjectID(cwd))), nil
}

// temporalEntry returns the index entry of run id, if the run is on
// Temporal.
func (a *app) temporalEntry(id string) (temporal.Entry, bool, error) {
	if store.ValidRunID(id) != nil {
		return temporal.Entry{}, false, nil // the local path reports the bad id
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return temporal.Entry{}, false, err
	}
	return ix.Get(id)
}

// sdkLog is where the Temporal SDK's own logs go: warnings and worse, to
// stderr.
func (a *app) sdkLog() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("DYNWORKFLOW_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(quietCancels{slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})})
}

// quietCancels drops the SDK's error line for an agent call cancelled
// because its run paused or stopped: that is the run going as asked, and
// a pause of a wide fan-out would print one per agent.
type quietCancels struct{ slog.Handler }

func (h quietCancels) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "Activity error." {
		cancelled := false
		r.Attrs(func(at slog.Attr) bool {
			if at.Key == "Error" && at.Value.String() == context.Canceled.Error() {
				cancelled = true
			}
			return !cancelled
		})
		if cancelled {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietCancels) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietCancels{h.Handler.WithAttrs(attrs)}
}

func (h quietCancels) WithGroup(name string) slog.Handler {
	return quietCancels{h.Handler.WithGroup(name)}
}

// dialTemporal connects to the Temporal of cfg, giving up after a while
// rather than hanging on an address nobody answers.
func (a *app) dialTemporal(ctx context.Context, cfg temporal.Config) (*temporal.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := temporal.Dial(ctx, cfg, hosts(), a.sdkLog())
	if err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%w (is the Temporal server up? see --temporal-address)", err)}
	}
	return c, nil
}

// runOnTemporal starts a run on Temporal and follows it.
func (a *app) runOnTemporal(cmd *cobra.Command, of *optionFlags, bf *backendFlags, ref string) error {
	opts, err := of.options(cmd)
	if err != nil {
		return err
	}
	for _, f := range []string{"simulate-latency", "simulate-failure-rate", "simulate-seed", "command-executor"} {
		if cmd.Flags().Changed(f) {
			fmt.Fprintf(a.stderr, "dynworkflow: --%s configures this process's executors; on Temporal the agents run on the workers: give it to `dynworkflow worker`\n", f)
		}
	}
	rt, scriptArgs, err := a.localRuntime(cmd, of)
	if err != nil {
		return err
	}
	script, err := a.loadScript(rt, ref)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	bundle, script, err := temporal.BundleFile(hosts(), script.Path())
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	cwd, err := a.projectDir()
	if err != nil {
		return err
	}
	c, err := a.dialTemporal(cmd.Context(), bf.temporal)
	if err != nil {
		return err
	}
	defer c.Close()
	in, err := c.Start(cmd.Context(), temporal.StartRequest{
		Bundle: bundle, Script: script, Args: scriptArgs, Options: opts, Cwd: cwd,
		Human: bf.awaitCheckpoints, Heartbeat: bf.heartbeat,
	})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return err
	}
	entry := temporal.Entry{RunID: in.RunID, Config: c.Config(), Summary: store.Summary{
		RunID: in.RunID, Name: in.Name, Description: in.Description, Status: string(engine.StatusRunning),
		ScriptPath: in.Script.Path, ScriptHash: in.ScriptHash, Executor: opts.Executor, StartedAt: in.CreatedAt, UpdatedAt: in.CreatedAt,
	}}
	if err := ix.Put(entry); err != nil {
		return fmt.Errorf("record run %s in the project's index: %w", in.RunID, err)
	}
	fmt.Fprintf(a.stderr, "%s started on Temporal at %s (namespace %s, task queue %s)\n", in.RunID, c.Config().Address, c.Config().Namespace, c.Config().TaskQueue)
	return a.followTemporal(cmd.Context(), c, ix, entry, in.Epoch)
}

// resumeOnTemporal resumes a run on Temporal, or attaches to it when it is
// still running and attach is set.
func (a *app) resumeOnTemporal(cmd *cobra.Command, of *optionFlags, bf *backendFlags, e temporal.Entry, scriptPath string, attach bool) error {
	c, err := a.dialTemporal(cmd.Context(), e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	ix, err := a.temporalIndex()
	if err != nil {
		return err
	}
	st, err := c.State(cmd.Context(), e.RunID)
	if err == nil && st.Status == engine.StatusRunning {
		if !attach {
			return &exitError{code: exitFailed, err: fmt.Errorf("%w: %s is still running on Temporal; follow it with: dynworkflow resume %s --attach", engine.ErrNotResumable, e.RunID, e.RunID)}
		}
		fmt.Fprintf(a.stderr, "%s is running on Temporal: attached\n", e.RunID)
		return a.followTemporal(cmd.Context(), c, ix, e, st.Epoch)
	}
	scriptArgs, err := of.argsJSON(cmd)
	if err != nil {
		return err
	}
	req := temporal.ResumeRequest{Args: scriptArgs, Options: func(o *engine.Options) { of.apply(cmd, o) }}
	if cmd.Flags().Changed("await-checkpoints") {
		req.Human = &bf.awaitCheckpoints
	}
	if scriptPath != "" {
		abs, err := filepath.Abs(scriptPath)
		if err != nil {
			return err
		}
		if req.Bundle, req.Script, err = temporal.BundleFile(hosts(), abs); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	}
	in, err := c.Resume(cmd.Context(), e.RunID, req)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	e.Summary.Status, e.Summary.Epoch = string(engine.StatusRunning), in.Epoch
	if err := ix.Put(e); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "%s resumed on Temporal (execution %d, %s rule)\n", e.RunID, in.Epoch, in.Rule)
	return a.followTemporal(cmd.Context(), c, ix, e, in.Epoch)
}

// followTemporal shows a run's progress on Temporal until the execution
// ends, turns Ctrl-C into pause (then stop), prints the outcome and
// returns the exit code as an error. Killing this process does not touch
// the run: it goes on in Temporal, and `resume --attach` follows it again.
func (a *app) followTemporal(ctx context.Context, c *temporal.Client, ix temporal.Index, e temporal.Entry, epoch int) error {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	src := &temporalRun{id: e.RunID}
	src.progress.Status, src.progress.Started = engine.StatusRunning, time.Now()
	view := newProgressView(a.stderr, a.json, a.logs)
	view.start(src)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	interrupts, stopping := 0, false
	var st temporal.State
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			view.stop()
			return ctx.Err()
		case <-signals:
			interrupts++
			if interrupts == 1 {
				view.note("pausing: finished calls stay; press Ctrl-C again to stop the run")
				if err := c.Pause(ctx, e.RunID, "interrupted"); err != nil {
					view.note("pause: " + err.Error())
				}
				continue
			}
			view.note("stopping")
			stopping = true
			if err := c.Stop(ctx, e.RunID); err != nil {
				view.note("stop: " + err.Error())
			}
			continue
		case <-tick.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		next, err := c.State(qctx, e.RunID)
		cancel()
		if err != nil {
			if msg := err.Error(); msg != lastErr {
				view.note("waiting for a worker on task queue " + c.Config().TaskQueue + ": " + msg)
				lastErr = msg
			}
			continue
		}
		lastErr = ""
		src.update(view, st, next)
		st = next
		if st.Epoch >= epoch && st.Status != engine.StatusRunning {
			break
		}
	}
	view.stop()
	if stopping && st.Status == engine.StatusPaused {
		// The second Ctrl-C came as the pause settled: it still means stop.
		if err := c.Stop(ctx, e.RunID); err == nil {
			st = a.waitEnd(ctx, c, e.RunID, st)
		}
	}
	if e2, err := c.Refresh(ctx, e); err == nil {
		_ = ix.Put(e2)
	}
	out := outcomeOfState(st)
	a.printOutcome(out)
	return exitFor(out.Status)
}

// waitEnd waits for a run's current execution to end, keeping st if it
// cannot tell.
func (a *app) waitEnd(ctx context.Context, c *temporal.Client, runID string, st temporal.State) temporal.State {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if next, err := c.Wait(ctx, runID); err == nil {
		return next
	}
	return st
}

// outcomeOfState is how an execution on Temporal ended, as a local run
// reports it.
func outcomeOfState(st temporal.State) engine.Outcome {
	o := engine.Outcome{RunID: st.RunID, Name: st.Name, Status: st.Status, PauseReason: st.PauseReason,
		Result: st.Result, Error: st.Error, Stats: st.Stats, Epoch: st.Epoch}
	if len(o.Result) == 0 || o.Status != engine.StatusCompleted {
		o.Result = json.RawMessage("null")
	}
	end := st.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	o.DurationMs = end.Sub(st.StartedAt).Milliseconds()
	return o
}

// temporalRun is the status line's view of a run on Temporal, from the
// states the follower polls.
type temporalRun struct {
	id       string
	mu       sync.Mutex
	progress engine.Progress
}

func (r *temporalRun) ID() string { return r.id }

func (r *temporalRun) Progress() engine.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress
}

// update takes a newer state, and shows the log lines, phases and
// checkpoints that came since the previous one.
func (r *temporalRun) update(view *progressView, prev, next temporal.State) {
	r.mu.Lock()
	r.progress.Status, r.progress.Phase, r.progress.Stats, r.progress.Calls = next.Status, next.Phase, next.Stats, next.Calls
	if !next.StartedAt.IsZero() {
		r.progress.Started = next.StartedAt
	}
	r.mu.Unlock()
	if prev.Epoch != next.Epoch {
		prev = temporal.State{}
	}
	seen := 0
	if n := len(prev.Logs); n > 0 {
		last := prev.Logs[n-1]
		for i := len(next.Logs) - 1; i >= 0; i-- {
			if next.Logs[i] == last {
				seen = i + 1
				break
			}
		}
	}
	for _, l := range next.Logs[seen:] {
		if l.Level == "phase" {
			view.apply(engine.EventPhase, engine.PhasePayload{Scope: l.Scope, Title: l.Message})
		} else {
			view.apply(engine.EventLog, engine.LogPayload{Scope: l.Scope, Level: l.Level, Message: l.Message})
		}
	}
	asked := map[string]bool{}
	for _, cp := range pendingOf(prev) {
		asked[cp.ID] = true
	}
	for _, cp := range pendingOf(next) {
		if !asked[cp.ID] {
			view.apply(web.EventCheckpointPending, cp)
		}
	}
}

// temporalRuns refreshes the project's runs on Temporal for a listing,
// one connection per server. A server that does not answer leaves its
// runs as last seen, with a warning.
func (a *app) temporalRuns(ctx context.Context) ([]store.Summary, error) {
	ix, err := a.temporalIndex()
	if err != nil {
		return nil, err
	}
	entries, err := ix.List()
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	clients := map[temporal.Config]*temporal.Client{}
	failed := map[temporal.Config]bool{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	out := make([]store.Summary, 0, len(entries))
	for _, e := range entries {
		if e.Summary.Status == string(engine.StatusStopped) || failed[e.Config] {
			out = append(out, e.Summary)
			continue
		}
		c := clients[e.Config]
		if c == nil {
			dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			c, err = temporal.Dial(dctx, e.Config, hosts(), nil)
			cancel()
			if err != nil {
				fmt.Fprintf(a.stderr, "dynworkflow: runs on Temporal at %s shown as last seen: %v\n", e.Config.Address, err)
				failed[e.Config] = true
				out = append(out, e.Summary)
				continue
			}
			clients[e.Config] = c
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fresh, err := c.Refresh(rctx, e)
		cancel()
		if err != nil {
			fmt.Fprintf(a.stderr, "dynworkflow: %s shown as last seen: %v\n", e.RunID, err)
			out = append(out, e.Summary)
			continue
		}
		if fresh.Summary != e.Summary || fresh.Execution != e.Execution {
			_ = ix.Put(fresh)
		}
		out = append(out, fresh.Summary)
	}
	return out, nil
}

// showTemporal reads a run's detail from Temporal, and the checkpoints it
// waits on.
func (a *app) showTemporal(ctx context.Context, e temporal.Entry) (*engine.Detail, []web.Checkpoint, error) {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	d, err := c.Detail(ctx, e.RunID)
	if err != nil {
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	var waiting []web.Checkpoint
	if d.Summary.Status == string(engine.StatusRunning) {
		if st, err := c.State(ctx, e.RunID); err == nil {
			waiting = pendingOf(st)
		}
	}
	return d, waiting, nil
}

// pendingOf lists the checkpoints a run on Temporal waits on, as the live
// runtime lists its own.
func pendingOf(st temporal.State) []web.Checkpoint {
	var out []web.Checkpoint
	for _, cp := range st.Checkpoints {
		if cp.Pending {
			out = append(out, web.Checkpoint{ID: web.CheckpointID(st.RunID, cp.Path), RunID: st.RunID, Path: cp.Path,
				Prompt: cp.Request.Prompt, Kind: cp.Request.Kind, Choices: cp.Request.Choices, Default: cp.Request.Default, CreatedAt: cp.AskedAt})
		}
	}
	return out
}

// controlTemporal pauses or stops a run on Temporal.
func (a *app) controlTemporal(ctx context.Context, e temporal.Entry, action string) error {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	switch action {
	case "paused":
		err = c.Pause(ctx, e.RunID, "paused by `dynworkflow pause`")
	case "stopped":
		err = c.Stop(ctx, e.RunID)
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	a.done(action, e.RunID)
	return nil
}

// temporalCheckpoints lists the checkpoints the project's runs on
// Temporal wait on, with the run each belongs to.
func (a *app) temporalCheckpoints(ctx context.Context) ([]web.Checkpoint, map[string]temporal.Entry, error) {
	ix, err := a.temporalIndex()
	if err != nil {
		return nil, nil, err
	}
	entries, err := ix.List()
	if err != nil {
		return nil, nil, err
	}
	var cps []web.Checkpoint
	owners := map[string]temporal.Entry{}
	clients := map[temporal.Config]*temporal.Client{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for _, e := range entries {
		if s := e.Summary.Status; s != string(engine.StatusRunning) && s != temporal.StatusWaiting {
			continue
		}
		c := clients[e.Config]
		if c == nil {
			dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			c, err = temporal.Dial(dctx, e.Config, hosts(), nil)
			cancel()
			if err != nil {
				continue
			}
			clients[e.Config] = c
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := c.State(qctx, e.RunID)
		cancel()
		if err != nil {
			continue
		}
		for _, cp := range pendingOf(st) {
			cps = append(cps, cp)
			owners[cp.ID] = e
		}
	}
	return cps, owners, nil
}

// respondTemporal answers a checkpoint of a run on Temporal.
func (a *app) respondTemporal(ctx context.Context, e temporal.Entry, cp web.Checkpoint, value json.RawMessage) error {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Respond(ctx, e.RunID, cp.Path, value); err != nil {
		if errors.Is(err, temporal.ErrAnswerRefused) {
			return &exitError{code: exitFailed, kind: codeBadAnswer, err: err}
		}
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

// mergeSummaries lists local and Temporal runs together, newest first.
func mergeSummaries(local, remote []store.Summary) []store.Summary {
	out := append(local, remote...)
	slices.SortStableFunc(out, func(a, b store.Summary) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.RunID, a.RunID)
	})
	return out
}

// deleteTemporal forgets a run on Temporal that has ended. Its histories
// stay on the server until the namespace's retention removes them.
func (a *app) deleteTemporal(ctx context.Context, e temporal.Entry) error {
	c, err := a.dialTemporal(ctx, e.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	if st, err := c.State(ctx, e.RunID); err == nil && st.Status == engine.StatusRunning {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s is running on Temporal; stop it before deleting it", e.RunID)}
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return err
	}
	if err := ix.Delete(e.RunID); err != nil {
		return err
	}
	a.done("deleted", e.RunID)
	return nil
}

// temporalSource shows the project's runs on Temporal through the API of
// `serve`, beside the runtime's own.
type temporalSource struct{ a *app }

func (s temporalSource) Summaries(ctx context.Context) ([]store.Summary, error) {
	return s.a.temporalRuns(ctx)
}

func (s temporalSource) Detail(ctx context.Context, id string) (*engine.Detail, bool, error) {
	e, ok, err := s.a.temporalEntry(id)
	if err != nil || !ok {
		return nil, false, err
	}
	d, _, err := s.a.showTemporal(ctx, e)
	return d, true, err
}

// adoptTemporal finds a run the project's index does not know on the
// Temporal the backend settings name (a run started from another machine,
// say), and records it, so that every command handles it from then on. It
// reports false when the settings are not Temporal's, when the project has
// a local run of that id, or when Temporal does not know it either.
func (a *app) adoptTemporal(cmd *cobra.Command, bf *backendFlags, id string) (temporal.Entry, bool, error) {
	if store.ValidRunID(id) != nil {
		return temporal.Entry{}, false, nil
	}
	if err := a.resolveBackend(cmd, bf); err != nil || bf.backend != backendTemporal {
		return temporal.Entry{}, false, err
	}
	cwd, err := a.projectDir()
	if err != nil {
		return temporal.Entry{}, false, err
	}
	root, err := a.stateRoot()
	if err != nil {
		return temporal.Entry{}, false, err
	}
	if _, err := os.Stat(filepath.Join(root, "projects", store.ProjectID(cwd), "runs", id+".jsonl")); err == nil {
		return temporal.Entry{}, false, nil
	}
	c, err := a.dialTemporal(cmd.Context(), bf.temporal)
	if err != nil {
		return temporal.Entry{}, false, err
	}
	defer c.Close()
	e, err := c.Refresh(cmd.Context(), temporal.Entry{RunID: id, Config: c.Config()})
	if errors.Is(err, engine.ErrNotFound) {
		return temporal.Entry{}, false, nil
	}
	if err != nil {
		return temporal.Entry{}, false, &exitError{code: exitFailed, err: err}
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return temporal.Entry{}, false, err
	}
	return e, true, ix.Put(e)
}

// resolveRun resolves a command's run argument as runIDArg does (an id,
// a prefix, or "last", over the local runs and the project's runs on
// Temporal), and says whether the run is on Temporal. An id no run of the
// project has is looked for on the Temporal the backend settings name,
// and adopted when found there.
func (a *app) resolveRun(cmd *cobra.Command, bf *backendFlags, typed string) (string, temporal.Entry, bool, error) {
	id, err := a.runIDArg(typed)
	if err == nil {
		e, ok, err := a.temporalEntry(id)
		return id, e, ok, err
	}
	if !errors.Is(err, engine.ErrNotFound) {
		return "", temporal.Entry{}, false, err
	}
	e, ok, aerr := a.adoptTemporal(cmd, bf, typed)
	switch {
	case aerr != nil:
		return "", e, false, aerr
	case !ok:
		return "", e, false, err
	}
	return e.RunID, e, true, nil
}
