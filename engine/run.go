package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/journal"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Status is where a run stands.
type Status string

// Run statuses.
const (
	StatusRunning   Status = "running"
	StatusPaused    Status = "paused"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusStopped   Status = "stopped"
	// StatusDamaged is a run whose journal is gone or lost its run record:
	// what it did cannot be read back, and it cannot be resumed.
	StatusDamaged Status = "damaged"
)

// Terminal reports whether a run in status s can no longer be resumed.
func (s Status) Terminal() bool { return s == StatusStopped || s == StatusDamaged }

// Run is one execution of a workflow in this process. A resumed run is a
// new Run with the same ID and a higher epoch.
type Run struct {
	rt     *Runtime
	id     string
	paths  store.Paths
	opts   Options
	script lang.Script
	args   json.RawMessage
	header runHeader
	epoch  int
	// trace is this execution's trace, nil when tracing is off.
	trace *TraceContext
	main  *frame
	// policy decides what each call of this execution does (identity,
	// replay, caps, budget, retries): the rules both backends share.
	policy *callpolicy.Execution
	// executors are the runtime's executors, plus those of the journal
	// that the runtime lacks (see Config.Restore).
	executors *executors.Set

	journal *journal.Writer
	lease   *store.Lease
	seq     atomic.Int64

	ctx    context.Context
	cancel context.CancelCauseFunc
	// stopping is set by Stop: it outranks any pause.
	stopping atomic.Bool
	sched    *scheduler // runs live calls under the concurrency cap
	calls    sync.WaitGroup
	// teardown counts the removals of unchanged worktrees still going on
	// in the background.
	teardown sync.WaitGroup
	// branchNotes says, by branch, how the kept branch of a call this
	// resume may replay changed since the call finished.
	branchNotes map[string]string

	running atomic.Int64
	// tryNow lets calls start although their account's quota is spent,
	// until one meets the limit (ResumeRequest.TryNow).
	tryNow atomic.Bool
	// activity is each running call's last activity (see activity.go).
	activity activityBoard
	// controls holds the agent calls running now, by path, for the user
	// to stop or restart one (control.go).
	controls sync.Map
	// idle wakes pauseWhenIdle when a call ends; capOnce starts it once.
	idle    chan struct{}
	capOnce sync.Once
	// scriptEnded is closed once the script has returned and the calls
	// under way are finishing (see callpolicy.FinishesCallsUnderWay).
	scriptEnded chan struct{}
	failures    failureSet
	// scriptErrors are the branches this execution's script errors made
	// null.
	scriptErrors scriptErrorSet
	kept         atomic.Int64 // worktrees this execution kept
	// isolationLost is set once a call found that no worktree can be made.
	isolationLost atomic.Bool

	mu          sync.Mutex
	usage       executors.Usage // what every execution of this run cost
	phase       string
	status      Status
	pauseReason string
	// resumeAt is when a run parked by a rate limit may go on: its
	// executor's quota resets then.
	resumeAt  time.Time
	createdAt time.Time // when the run was first started
	startedAt time.Time // when this execution started
	endedAt   time.Time
	result    json.RawMessage
	err       error
	files     []string // every file this execution pulled in
	done      chan struct{}

	// warnings are what the user must hear about this execution: journal
	// lines found damaged, and so calls that run again.
	warnings []string
	// settled lists the calls of this execution for the Node runtime.
	settled nodeAgents
	// phasesBegun are the phases this execution began, by phase() or by
	// the first agent() call naming one.
	phasesBegun map[string]bool
}

// Files lists every file the execution depends on: the script, what it
// loaded, and the child workflows it ran (or tried to). Watch mode follows
// them.
func (r *Run) Files() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.files)
}

func (r *Run) noteFiles(paths ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(r.files, p) {
			r.files = append(r.files, p)
		}
	}
}

// ID returns the run's id.
func (r *Run) ID() string { return r.id }

// Done is closed when the execution has ended and its state is on disk.
func (r *Run) Done() <-chan struct{} { return r.done }

// Pause cancels live work and leaves a resumable journal.
func (r *Run) Pause() error { return r.interrupt(ErrPaused) }

// Stop cancels live work and makes the run non-resumable.
func (r *Run) Stop() error { return r.interrupt(ErrStopped) }

func (r *Run) interrupt(cause error) error {
	select {
	case <-r.done:
		return fmt.Errorf("%w: %s already ended", ErrNotRunning, r.id)
	default:
	}
	// A run already winding down after the same request is not running:
	// a second pause is refused, as the Node runtime refuses it. A stop
	// after a pause (a second Ctrl-C) must win, though the first cause
	// already cancelled the context.
	if r.ctx.Err() != nil && (!errors.Is(cause, ErrStopped) || r.stopping.Load()) {
		state := "pausing"
		if r.stopping.Load() {
			state = "stopping"
		}
		return fmt.Errorf("%w: %s is already %s", ErrNotRunning, r.id, state)
	}
	if errors.Is(cause, ErrStopped) {
		r.stopping.Store(true)
	}
	r.cancel(cause)
	return nil
}

// Outcome is how an execution ended.
type Outcome struct {
	RunID       string `json:"runId"`
	Name        string `json:"name"`
	Status      Status `json:"status"`
	PauseReason string `json:"pauseReason,omitempty"`
	// ResumeAt is, for a run parked until its executor's quota resets,
	// when that is.
	ResumeAt *time.Time      `json:"resumeAt,omitempty"`
	Result   json.RawMessage `json:"result"`
	Error    string          `json:"error"`
	// ErrorCode is the stable code of Error, when it has one
	// (AGENT_LIMIT_EXCEEDED, SCRIPT_ERROR, ...).
	ErrorCode  string      `json:"errorCode,omitempty"`
	Stats      store.Stats `json:"stats"`
	Epoch      int         `json:"epoch"`
	DurationMs int64       `json:"durationMs"`
	// Warnings are what the user must hear about the execution, such as
	// damaged journal lines whose calls ran again.
	Warnings []string `json:"warnings,omitempty"`
	// Failures groups the calls of this execution that failed, by cause.
	Failures []FailureGroup `json:"failures,omitempty"`
	// ScriptErrors groups the errors the script threw in parallel()
	// branches and pipeline() items of this execution, which made them
	// null; Stats.ScriptErrors counts them.
	ScriptErrors []ScriptErrorGroup `json:"scriptErrors,omitempty"`
	// Executor is the run's executor and ExecutorSource who chose it;
	// SimulatedAnswers is true when the answers are simulated although
	// nobody asked for the simulated executor.
	Executor         string `json:"executor"`
	ExecutorSource   string `json:"executorSource,omitempty"`
	SimulatedAnswers bool   `json:"simulatedAnswers,omitempty"`
	// MaxCostUSD is the run's dollar cap (0: none); Stats.CostUSD is what
	// it spent.
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
}

// Wait blocks until the execution ends (or ctx is done) and returns how it
// ended.
func (r *Run) Wait(ctx context.Context) (Outcome, error) {
	select {
	case <-r.done:
		return r.Outcome(), nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// Outcome reports the run as it stands.
func (r *Run) Outcome() Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := Outcome{
		RunID: r.id, Name: r.header.Name, Status: r.status, PauseReason: r.pauseReason,
		Result: r.result, Stats: r.statsLocked(), Epoch: r.epoch, Failures: r.failures.list(), ScriptErrors: r.scriptErrors.list(),
		Warnings: slices.Clone(r.warnings),
		Executor: r.opts.Executor, ExecutorSource: r.opts.ExecutorSource, SimulatedAnswers: r.opts.SimulatedByDefault(),
		MaxCostUSD: r.opts.MaxCostUSD,
	}
	if o.Result == nil {
		o.Result = json.RawMessage("null")
	}
	if r.err != nil {
		o.Error = r.err.Error()
		var ee *Error
		if errors.As(r.err, &ee) {
			o.ErrorCode = ee.Code
		}
	}
	if !r.resumeAt.IsZero() {
		t := r.resumeAt
		o.ResumeAt = &t
	}
	end := r.endedAt
	if end.IsZero() {
		end = time.Now()
	}
	o.DurationMs = end.Sub(r.startedAt).Milliseconds()
	return o
}

// Progress is a cheap view of a running execution, for progress displays.
type Progress struct {
	Status   Status
	Phase    string
	Stats    store.Stats
	Started  time.Time
	Replayed int
	// Calls is the agent() calls this execution has made so far, those
	// waiting for a concurrency slot included (up to the agent cap): the
	// total a progress bar can show before the script is done.
	Calls int
	// SimulatedAnswers is true when the run's answers are simulated
	// although nobody asked for the simulated executor.
	SimulatedAnswers bool
	// Troubled are the running calls a user should hear about, at most
	// three: their CLI retries or cannot reach its endpoint, or they made
	// no progress for a while, the longest quiet first.
	Troubled []CallActivity
	// MaxCostUSD is the run's dollar cap (0: none); Stats.CostUSD is what
	// it spent.
	MaxCostUSD float64
}

// Progress reads the counters; it costs the same for 10 agents or 10,000
// (the running calls it looks at are bounded by the concurrency).
func (r *Run) Progress() Progress {
	calls, _ := r.activity.all()
	r.mu.Lock()
	defer r.mu.Unlock()
	made := min(r.policy.Agents(), int64(r.opts.MaxAgents))
	return Progress{Status: r.status, Phase: r.phase, Stats: r.statsLocked(), Started: r.startedAt, Calls: int(made),
		SimulatedAnswers: r.opts.SimulatedByDefault(), MaxCostUSD: r.opts.MaxCostUSD, Troubled: Troubled(calls, time.Now(), 3)}
}

// Activity is the last activity of the call at path, while it runs.
func (r *Run) Activity(path string) (CallActivity, bool) { return r.activity.get(path) }

func (r *Run) statsLocked() store.Stats {
	n := &r.policy.Counts
	replayed, live, failed := int(n.Replayed.Load()), int(n.Live.Load()), int(n.Failed.Load())
	running, queued := int(r.running.Load()), 0
	if r.status == StatusRunning {
		made := int(min(r.policy.Agents(), int64(r.opts.MaxAgents)))
		queued = max(0, made-replayed-live-failed-running)
	}
	return store.Stats{
		Agents:            replayed + live + failed,
		Replayed:          replayed,
		Live:              live,
		Failed:            failed,
		Retried:           int(n.Retried.Load()),
		ScriptErrors:      r.scriptErrors.count(),
		Running:           running,
		Queued:            queued,
		InputTokens:       r.usage.InputTokens,
		CachedInputTokens: r.usage.CachedInputTokens,
		OutputTokens:      r.usage.OutputTokens,
		CostUSD:           r.usage.CostUSD,
	}
}

func (r *Run) summary() store.Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := store.Summary{
		RunID: r.id, Name: r.header.Name, Description: r.header.Description,
		Status: string(r.status), PauseReason: r.pauseReason,
		ScriptPath: r.script.Path(), ScriptHash: r.script.Hash(), Executor: r.opts.Executor, MaxCostUSD: r.opts.MaxCostUSD,
		Phase: r.phase, Phases: r.header.Phases, Epoch: r.epoch, StartedAt: r.createdAt.UTC(), UpdatedAt: time.Now().UTC(),
		Stats: r.statsLocked(), JournalSeq: r.seq.Load(),
	}
	if r.journal != nil {
		m := r.journal.Mark()
		s.JournalSize, s.JournalHead, s.JournalTail = m.Size, m.Head, m.Tail
	}
	if r.err != nil {
		s.Error = r.err.Error()
		var ee *Error
		if errors.As(r.err, &ee) {
			s.ErrorCode = ee.Code
		}
	}
	if !r.endedAt.IsZero() {
		t := r.endedAt.UTC()
		s.EndedAt = &t
	}
	if !r.resumeAt.IsZero() {
		t := r.resumeAt
		s.ResumeAt = &t
	}
	return s
}

// execute runs the script and then settles the run's state on disk.
func (r *Run) execute() {
	defer close(r.done)
	for _, w := range r.warnings {
		r.logLine(r.main.policy.Root(), "warn", w)
	}
	defer func() {
		// A panic past the script (in settling the run) still ends this
		// run only: it is failed in memory, and its journal says what a
		// crash would.
		if x := recover(); x != nil {
			err := r.recovered("the end of the run", x)
			r.mu.Lock()
			r.status, r.err, r.endedAt = StatusFailed, err, time.Now()
			r.mu.Unlock()
			_ = r.journal.Close()
			r.lease.Release()
			r.rt.forget(r)
		}
	}()
	stopSnapshots := r.startSnapshots()
	var result json.RawMessage
	err := r.confirmCost()
	if err == nil {
		result, err = r.runScript()
	}
	if err == nil {
		err = lang.CheckJSONNesting("the workflow's result", result, r.rt.maxNesting())
	}
	cause := context.Cause(r.ctx)
	if callpolicy.FinishesCallsUnderWay(cause) {
		// The script returned, or threw: the calls under way are paid
		// for, so they finish and are journaled; those queued never start.
		close(r.scriptEnded)
		queued, busy := r.sched.closeCounting()
		for _, c := range queued {
			c.settle(nil, callpolicy.ErrScriptEnded)
		}
		if busy > 0 {
			r.logLine(r.main.policy.Root(), "info", callpolicy.FinishingCallsLine(busy))
		}
		r.sched.wait()
	}
	// Calls still left (the run paused or stopped, or a child script
	// still going) must not outlive the execution.
	r.cancel(errExecutionEnded)
	for _, c := range r.sched.close() {
		c.settle(nil, context.Cause(r.ctx))
	}
	r.calls.Wait()
	r.teardown.Wait()
	r.removeEmptyWorktreesDir()
	stopSnapshots()

	status, reason := StatusCompleted, ""
	var crashed *crashCause
	var resumeAt time.Time
	switch {
	case errors.As(cause, &crashed):
		status, err = StatusFailed, crashed.err
	case r.stopping.Load() || errors.Is(cause, ErrStopped):
		status, err = StatusStopped, nil
	case errors.Is(cause, ErrPaused):
		status, err = StatusPaused, nil
		var p *pauseCause
		if errors.As(cause, &p) {
			reason, resumeAt = p.reason, p.resumeAt
		}
	case errors.As(cause, new(*StrictFailure)):
		status, err = StatusFailed, cause
	case err != nil:
		status = StatusFailed
	}
	if status != StatusCompleted {
		result = nil
	}
	r.finish(status, reason, resumeAt, result, err)
}

// runScript runs the script; a panic in it (a bug of a script host, or of
// the JavaScript engine under it) fails this run, not the process.
func (r *Run) runScript() (result json.RawMessage, err error) {
	defer func() {
		if x := recover(); x != nil {
			result, err = nil, r.recovered("the script host", x)
		}
	}()
	return r.script.Run(r.ctx, r.main)
}

// callContext is what a call the script starts runs under: the run's
// context, also cancelled when the host's own context for the call is (a
// host may abandon a call before the run ends). Both hosts pass the run's
// own context, or one made from it that adds only values (a fan-out's
// lang.Batch), which costs nothing extra.
func (r *Run) callContext(host context.Context) (context.Context, context.CancelFunc) {
	if host.Done() == r.ctx.Done() || host.Done() == nil {
		return r.ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	stop := context.AfterFunc(host, func() { cancel(context.Cause(host)) })
	return ctx, func() { stop(); cancel(nil) }
}

// errExecutionEnded cancels what the script left behind when it returned.
var errExecutionEnded = errors.New("execution ended")

// pauseCause is a pause with a reason (a rate limit, a Ctrl-C, ...), and
// for a run parked until its quota resets, when.
type pauseCause struct {
	reason   string
	resumeAt time.Time
}

func (p *pauseCause) Error() string { return "run paused: " + p.reason }
func (p *pauseCause) Unwrap() error { return ErrPaused }

// pauseFor pauses the run with a reason the user will see.
func (r *Run) pauseFor(reason string) { r.cancel(&pauseCause{reason: reason}) }

// finish journals the end of the execution, writes the snapshot and lets go
// of the run. The end record decides: the status is what it says only once
// it is durable. When it cannot be written the run is failed, or paused
// when the lease was lost (another owner may have the run now; its journal
// without an end is resumable), never completed with nothing on disk to
// show for it.
func (r *Run) finish(status Status, reason string, resumeAt time.Time, result json.RawMessage, err error) {
	n := &r.policy.Counts
	end := &endInfo{
		Status: string(status), PauseReason: reason, Result: result,
		Replayed: int(n.Replayed.Load()), Live: int(n.Live.Load()), Failed: int(n.Failed.Load()), Retried: int(n.Retried.Load()),
		ScriptErrors: r.scriptErrors.count(),
	}
	if !resumeAt.IsZero() {
		t := resumeAt.UTC()
		end.ResumeAt = &t
	}
	if err != nil {
		end.Error = err.Error()
		var ee *Error
		if errors.As(err, &ee) {
			end.ErrorCode = ee.Code
		}
	}
	werr := r.appendEnd(end)
	if werr != nil && errors.Is(werr, errEncode) {
		// The result cannot be journaled (a host let through what JSON
		// cannot hold): the run fails, saying why, rather than end without
		// its end record.
		err = fmt.Errorf("the workflow's result cannot be journaled: %w", werr)
		status, result, reason = StatusFailed, nil, ""
		end.Status, end.PauseReason, end.Result, end.Error, end.ErrorCode = string(status), "", nil, err.Error(), ""
		werr = r.appendEnd(end)
	}
	if werr != nil {
		r.rt.log.Error("journal the end of a run", "run", r.id, "err", werr)
		// Without its end record the journal says the run was cut short:
		// paused, as the next listing shows it, and resumable.
		err = fmt.Errorf("the end of the run could not be journaled: %w", werr)
		status, result, reason = StatusPaused, nil, stateLost(err)
		if errors.Is(werr, store.ErrLeaseLost) {
			reason = "the run's lease was lost before its end was journaled"
		}
		end.Status, end.PauseReason, end.Result, end.Error, end.ResumeAt = string(status), reason, nil, err.Error(), nil
	}
	r.mu.Lock()
	r.status, r.pauseReason, r.result, r.err = status, reason, result, err
	if end.ResumeAt != nil {
		r.resumeAt = *end.ResumeAt
	}
	r.endedAt = time.Now()
	r.mu.Unlock()
	if werr := r.saveSnapshot(true); werr != nil {
		r.rt.log.Error("write snapshot", "run", r.id, "err", werr)
	}
	if cerr := r.journal.Close(); cerr != nil {
		r.rt.log.Error("close journal", "run", r.id, "err", cerr)
	}
	r.lease.Release()
	r.rt.forget(r)
	r.rt.bus.Publish(r.id, EventRunStatus, StatusPayload{Status: status, PauseReason: reason, ResumeAt: end.ResumeAt, Error: end.Error,
		Epoch: r.epoch, Replayed: end.Replayed, Live: end.Live, Failed: end.Failed, Retried: end.Retried,
		ScriptErrors: r.scriptErrors.list()})
}

// fail ends the run because its state can no longer be written.
func (r *Run) fail(err error) {
	r.rt.log.Error("run cannot continue", "run", r.id, "err", err)
	// What is on disk is what the journal holds, every finished call of it
	// intact: the run is paused there, and says why.
	r.cancel(&pauseCause{reason: stateLost(err)})
}

// stateLost is the pause reason of a run whose state could not be written.
func stateLost(err error) string {
	what, fix := "its state could not be written", "fix that (free disk space?) and resume it"
	switch {
	case errors.Is(err, syscall.ENOSPC):
		what, fix = "the disk is full: its state could not be written", "free disk space and resume it"
	case errors.Is(err, syscall.EROFS):
		what, fix = "the file system is read-only: its state could not be written", "make it writable and resume it"
	}
	return what + " (" + err.Error() + "); every finished call is journaled: " + fix
}

// append queues a record; it becomes durable with the next sync. A
// record that cannot be journaled pauses the run: what is not in the
// journal would be done again, or lost.
func (r *Run) append(rec *record) {
	buf, err := r.encode(rec)
	if err == nil {
		err = r.journal.Append(*buf)
	}
	if err != nil {
		r.rt.log.Warn("journal a record", "run", r.id, "type", rec.Type, "err", err)
		r.fail(fmt.Errorf("journal a %s record: %w", rec.Type, err))
	}
	r.rt.buffers.Put(buf)
}

// appendSync writes a record and waits until it is on disk, or until ctx
// is done. Records that are waited for together share one fsync.
func (r *Run) appendSync(ctx context.Context, rec *record) error {
	buf, err := r.encode(rec)
	if err == nil {
		err = r.journal.AppendSync(ctx, *buf)
	}
	r.rt.buffers.Put(buf)
	return err
}

// appendEnd writes the end record. It goes out even when an earlier write
// of the journal failed (a full disk): that write is undone, and the end
// record, which says why the run paused, may still fit.
func (r *Run) appendEnd(end *endInfo) error {
	buf, err := r.encode(&record{Type: recEnd, End: end})
	if err == nil {
		err = r.journal.AppendLast(context.Background(), *buf)
	}
	r.rt.buffers.Put(buf)
	return err
}

// errEncode marks a record that could not be encoded.
var errEncode = errors.New("cannot encode the record")

func (r *Run) encode(rec *record) (*[]byte, error) {
	rec.Seq = r.seq.Add(1)
	rec.Time = time.Now().UnixMilli()
	rec.Epoch = r.epoch
	buf, _ := r.rt.buffers.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	var err error
	if *buf, err = appendRecord((*buf)[:0], rec); err != nil {
		return buf, fmt.Errorf("%w: %w", errEncode, err)
	}
	return buf, nil
}

// appendThen journals a record and calls then once it is on disk (or
// failed to get there), from the journal's goroutine. A panic in then
// fails the run, not the journal's goroutine and with it the process.
func (r *Run) appendThen(rec *record, then func(error)) {
	guarded := func(err error) { r.guard("a journal callback of "+rec.Path, func() { then(err) }) }
	buf, err := r.encode(rec)
	if err != nil {
		guarded(err)
	} else {
		r.journal.AppendThen(*buf, guarded)
	}
	r.rt.buffers.Put(buf)
}

// startSnapshots keeps the snapshot fresh while the run goes on. The
// snapshot is a few hundred bytes whatever the size of the run, so writing
// it now and then keeps the bytes written per call flat.
func (r *Run) startSnapshots() (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go r.guard("the run's snapshots", func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var last store.Stats
		var seen uint64
		for ticks := 1; ; ticks++ {
			select {
			case <-quit:
				return
			case <-t.C:
				if ticks%10 == 0 {
					if err := r.lease.Renew(); err != nil {
						r.fail(fmt.Errorf("renew the run's lease: %w", err))
					}
				}
				r.mu.Lock()
				now := r.statsLocked()
				r.mu.Unlock()
				_, version := r.activity.all()
				if now != last || version != seen {
					if err := r.refreshSnapshot(); err != nil {
						r.rt.log.Warn("write snapshot", "run", r.id, "err", err)
					}
					last, seen = now, version
				}
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

func (r *Run) writeSnapshot() error { return r.saveSnapshot(false) }

// saveSnapshot writes the run's snapshot; a settled run's also lists its
// calls for the Node runtime (see nodeAgents).
func (r *Run) saveSnapshot(settled bool) error {
	snap, err := r.snapshot(settled)
	if err != nil {
		return err
	}
	return r.rt.store.WriteSnapshot(r.id, snap)
}

// refreshSnapshot writes the snapshot without waiting for the disk: see
// store.RefreshSnapshot.
func (r *Run) refreshSnapshot() error {
	snap, err := r.snapshot(false)
	if err != nil {
		return err
	}
	return r.rt.store.RefreshSnapshot(r.id, snap)
}

func (r *Run) snapshot(settled bool) (*store.Snapshot, error) {
	if err := r.lease.Check(); err != nil {
		return nil, err
	}
	snap := &store.Snapshot{Summary: r.summary()}
	if calls, _ := r.activity.all(); len(calls) > 0 && !settled {
		snap.Activity, _ = json.Marshal(calls)
	}
	r.mu.Lock()
	snap.Result = r.result
	r.mu.Unlock()
	snap.Phases = r.header.Phases
	if settled {
		snap.Agents = r.settled.list()
		snap.Phases = nodePhases(r.header.Phases, snap.Agents)
	}
	return snap, nil
}

func (r *Run) setPhase(sc *scope, title string) {
	r.mu.Lock()
	r.phase = title
	if r.phasesBegun == nil {
		r.phasesBegun = map[string]bool{}
	}
	r.phasesBegun[title] = true
	r.mu.Unlock()
	r.append(&record{Type: recPhase, Path: sc.Prefix(), Message: title})
	r.rt.bus.Publish(r.id, EventPhase, PhasePayload{Scope: sc.Path(), Title: title})
}

// enterPhase begins the phase an agent() call names in its options, the
// first time one does in this execution, as phase() would: the run's
// current phase, a journaled phase line and a phase event. A script that
// names its phases only in agent() (as the Node runtime's README does)
// shows them like one that calls phase().
func (r *Run) enterPhase(sc *scope, title string) {
	if title == "" {
		return
	}
	r.mu.Lock()
	begun := r.phasesBegun[title]
	r.mu.Unlock()
	if !begun {
		r.setPhase(sc, title)
	}
}

func (r *Run) logLine(sc *scope, level, msg string) {
	r.append(&record{Type: recLog, Path: sc.Prefix(), Level: level, Message: msg})
	r.rt.bus.Publish(r.id, EventLog, LogPayload{Scope: sc.Path(), Level: level, Message: msg})
}

// limitHit reports a limit the run ran into, so it is never silent.
func (r *Run) limitHit(limit, msg string) {
	r.rt.log.Warn("limit reached", "run", r.id, "limit", limit, "detail", msg)
	r.append(&record{Type: recLog, Level: "warn", Message: "limit reached: " + msg})
	r.rt.bus.Publish(r.id, EventLimit, LimitPayload{Limit: limit, Message: msg})
}

func (r *Run) addUsage(u executors.Usage) {
	r.mu.Lock()
	r.usage = r.usage.Add(u)
	r.mu.Unlock()
}

// Line renders the payload for a terminal.
func (p LimitPayload) Line() string { return "limit reached: " + p.Message }
