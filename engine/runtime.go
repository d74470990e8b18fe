package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/engine/journal"
	"github.com/dynworkflow/dynworkflow/engine/quota"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Config is what a Runtime needs.
type Config struct {
	// Store is the project's durable state.
	Store *store.Store
	// Hosts loads scripts by file extension.
	Hosts *lang.Registry
	// Executors run agent calls.
	Executors *executors.Set
	// Cwd is the project directory: agents work there, and saved
	// workflows are looked up under it.
	Cwd string
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
	// EventRing is how many recent events the bus keeps for catching up.
	EventRing int
	// Responder answers checkpoints; nil applies their headless policy.
	Responder Responder
	// Restore rebuilds an executor a resumed run's journal defines and
	// Executors lacks, such as a command executor given on the command
	// line of the first execution only. It returns nil for a definition it
	// cannot rebuild; nil Restore rebuilds none.
	Restore func(executors.Definition) (executors.Executor, error)
	// MaxNesting bounds how deeply the values of runs may nest: args, the
	// args of child workflows, agents' answers, results (see lang); 0 means
	// lang.DefaultMaxNesting. The script hosts take the same limit.
	MaxNesting int
	// Tracing gives every execution a W3C trace (see TraceContext),
	// journaled and announced in run.started and run.resumed, and every
	// agent process the TRACEPARENT of its call. Off, nothing is added.
	Tracing bool
	// ObserveFsync, if set, is told how long each journal fdatasync took
	// (the server's metrics). It must not block.
	ObserveFsync func(time.Duration)
	// Quota is the quota governor every run of the machine shares; nil
	// means the one under the store's state root.
	Quota *quota.Governor
	// Prices is the price table calls are priced with; nil is the built-in
	// one (cost.Builtin).
	Prices *cost.Table
	// NoWorktrees runs isolated calls in the project instead of a
	// worktree of their own: for a plan's walk on the simulated executor,
	// which changes nothing.
	NoWorktrees bool
	// SavedDirs are where saved workflows are looked up after the
	// project's own; nil is the store's.
	SavedDirs []string
}

// Runtime owns the runs of one project in this process.
type Runtime struct {
	cfg     Config
	store   *store.Store
	log     *slog.Logger
	bus     *Bus
	schemas schemaCache
	owner   string
	iso     *isolation
	// buffers recycles journal encoding buffers: the journal copies each
	// record into its batch, so a buffer is free again once Append returns.
	buffers sync.Pool

	mu   sync.Mutex
	runs map[string]*Run
}

// New returns a runtime for cfg.
func New(cfg Config) (*Runtime, error) {
	if cfg.Store == nil || cfg.Hosts == nil || cfg.Executors == nil {
		return nil, errors.New("engine: Config needs a Store, Hosts and Executors")
	}
	if cfg.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Cwd = wd
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.EventRing == 0 {
		cfg.EventRing = 4096
	}
	if cfg.MaxNesting != 0 {
		if err := lang.ValidMaxNesting(cfg.MaxNesting); err != nil {
			return nil, err
		}
	}
	if cfg.Quota == nil {
		cfg.Quota = quota.Open(filepath.Join(cfg.Store.Root(), "quota"))
	}
	// A schema the script writes out fails when it loads, not at its call.
	cfg.Hosts.CheckSchemasWith(CheckSchema)
	if cfg.Prices == nil {
		cfg.Prices = cost.Builtin()
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Runtime{
		cfg: cfg, store: cfg.Store, log: log, bus: NewBus(cfg.EventRing),
		owner:   fmt.Sprintf("pid%d-%s", os.Getpid(), hex.EncodeToString(id[:])),
		iso:     newIsolation(),
		schemas: schemaCache{maxNesting: lang.MaxNestingOr(cfg.MaxNesting)},
		runs:    map[string]*Run{},
	}, nil
}

// maxNesting is the limit of lang.NestingError for the runtime's values.
func (rt *Runtime) maxNesting() int { return lang.MaxNestingOr(rt.cfg.MaxNesting) }

// Events is the runtime's event bus.
func (rt *Runtime) Events() *Bus { return rt.bus }

// Hosts is the script-host registry.
func (rt *Runtime) Hosts() *lang.Registry { return rt.cfg.Hosts }

// Store is the project's durable state.
func (rt *Runtime) Store() *store.Store { return rt.store }

// Executors is the executor set agent calls run on.
func (rt *Runtime) Executors() *executors.Set { return rt.cfg.Executors }

// StartRequest starts a new run.
type StartRequest struct {
	Script  lang.Script
	Args    json.RawMessage
	Options Options
}

// Start creates a run, makes it durable, and starts executing it. The
// returned Run is already running; Wait for its outcome.
func (rt *Runtime) Start(ctx context.Context, req StartRequest) (*Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Script == nil {
		return nil, errors.New("start: no script")
	}
	if err := req.Options.Validate(); err != nil {
		return nil, err
	}
	if _, err := rt.cfg.Executors.Get(req.Options.Executor); err != nil {
		return nil, err
	}
	if err := lang.CheckJSONNesting("the run's args", req.Args, rt.maxNesting()); err != nil {
		return nil, err
	}
	args, err := NormalizeArgs(req.Args)
	if err != nil {
		return nil, err
	}
	meta := req.Script.Meta()
	if req.Options.MaxCostUSD == 0 && meta.MaxCost > 0 {
		// The script's own cap, unless the run gives one.
		req.Options.MaxCostUSD = meta.MaxCost
	}
	id := store.NewRunID(meta.Name)
	lease, err := rt.store.AcquireLease(id, rt.owner)
	if err != nil {
		return nil, err
	}
	paths := rt.store.RunPaths(id)
	now := time.Now()
	header := runHeader{
		RunID: id, Name: meta.Name, Description: meta.Description, Phases: phaseTitles(meta),
		ScriptPath: req.Script.Path(), ScriptHash: req.Script.Hash(), ScriptText: string(req.Script.Text()),
		Args: args, Options: req.Options, Cwd: rt.cfg.Cwd, Executors: rt.cfg.Executors.Definitions(),
	}
	if rt.cfg.Tracing {
		header.Trace = newTraceContext()
	}
	// The run record is durable before anything else of the run exists
	// but its lock: a run killed at any moment either has a journal that
	// starts with it, and resumes, or has no journal and never appears.
	first, err := appendRecord(nil, &record{Seq: 1, Type: recRun, Time: now.UnixMilli(), Run: &header})
	if err != nil {
		lease.Release()
		return nil, fmt.Errorf("start run: %w", err)
	}
	jw, err := journal.Create(paths.Journal, first, journal.Options{Fence: lease.Check, ObserveSync: rt.cfg.ObserveFsync})
	if err != nil {
		lease.Release()
		return nil, fmt.Errorf("start run: %w", err)
	}
	r := rt.newRun(id, paths, header, req.Script, args, req.Options, 0, callpolicy.RuleFresh, nil, rt.cfg.Executors, jw, lease, now, now)
	r.seq.Store(1)
	r.trace = header.Trace
	if err := r.writeSnapshot(); err != nil {
		err = fmt.Errorf("start run: %w", err)
		rt.abandon(r, err)
		return nil, err
	}
	rt.bus.Publish(id, EventRunStarted, StartedPayload{Name: meta.Name, Script: req.Script.Path(), Trace: header.Trace})
	go r.execute()
	return r, nil
}

func (rt *Runtime) newRun(id string, paths store.Paths, header runHeader, script lang.Script, args json.RawMessage,
	opts Options, epoch int, rule string, ledger *callpolicy.Ledger, set *executors.Set,
	jw *journal.Writer, lease *store.Lease, created, started time.Time) *Run {
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &Run{
		rt: rt, id: id, paths: paths, opts: opts, script: script, args: args, header: header, epoch: epoch,
		executors: set, journal: jw, lease: lease, ctx: ctx, cancel: cancel,
		sched: newScheduler(opts.Concurrency), status: StatusRunning, idle: make(chan struct{}, 1), scriptEnded: make(chan struct{}),
		createdAt: created, startedAt: started, done: make(chan struct{}),
	}
	limits := opts.CallLimits()
	limits.Cost = rt.costModel(header.Name, opts.MaxCostUSD > 0)
	r.policy = callpolicy.NewExecution(id, epoch, limits, ledger, runHost{r})
	r.main = newFrame(r, "", 0, script, args, nil)
	r.main.rule = rule
	r.noteFiles(script.Files()...)
	rt.mu.Lock()
	rt.runs[id] = r
	rt.mu.Unlock()
	return r
}

// abandon undoes a run that could not start. It ends the run like any
// other, for whoever already waits on it (Close, say).
func (rt *Runtime) abandon(r *Run, why error) {
	r.cancel(ErrStopped)
	_ = r.journal.Close()
	r.lease.Release()
	rt.forget(r)
	r.mu.Lock()
	r.status, r.err, r.endedAt = StatusFailed, why, time.Now()
	r.mu.Unlock()
	close(r.done)
}

func (rt *Runtime) forget(r *Run) {
	rt.mu.Lock()
	if rt.runs[r.id] == r {
		delete(rt.runs, r.id)
	}
	rt.mu.Unlock()
}

// Live returns the run executing in this process, if any.
func (rt *Runtime) Live(id string) (*Run, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	r, ok := rt.runs[id]
	return r, ok
}

// ResumeRequest resumes a paused, failed or completed run.
type ResumeRequest struct {
	// Script replaces the run's script (edit-and-resume); nil keeps it.
	Script lang.Script
	// Args replaces the run's args; nil keeps them.
	Args json.RawMessage
	// Options changes the run's options (raise a budget, say); nil keeps them.
	Options func(*Options)
	// TryNow is a user's resume of a run parked for its quota before the
	// reset: the calls are tried anyway, as many at once as the
	// concurrency allows, and the run parks again, with a longer wait, if
	// the provider still refuses. Without it such a run parks again at
	// once, calling nothing.
	TryNow bool
}

// Resume starts a new execution of a run that is not running. Finished
// calls are replayed: all of them when the script and args are unchanged,
// by the per-scope prefix rule when they changed.
func (rt *Runtime) Resume(ctx context.Context, id string, req ResumeRequest) (*Run, error) {
	if err := store.ValidRunID(id); err != nil {
		return nil, err
	}
	if r, ok := rt.Live(id); ok {
		// A pause just asked for: give the old execution a moment to settle
		// rather than overlapping old and new agents.
		settle, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		select {
		case <-r.done:
		case <-settle.Done():
			return nil, fmt.Errorf("%w: %s is still running; pause it first", ErrNotResumable, id)
		}
	}
	paths := rt.store.RunPaths(id)
	if _, err := os.Lstat(paths.Journal); err != nil {
		if rt.store.IsNodeRun(id) {
			return nil, rt.missing(id, "resume")
		}
		if d, derr := rt.journalMissing(id); derr == nil {
			return nil, fmt.Errorf("%w: %s: %s", ErrNotResumable, id, d.Summary.Error)
		}
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	lease, err := rt.store.AcquireLease(id, rt.owner)
	if err != nil {
		return nil, err
	}
	r, err := rt.resumeLeased(ctx, id, paths, lease, req)
	if err != nil {
		lease.Release()
		return nil, err
	}
	return r, nil
}

func (rt *Runtime) resumeLeased(ctx context.Context, id string, paths store.Paths, lease *store.Lease, req ResumeRequest) (*Run, error) {
	h, err := loadHistory(paths.Journal)
	if err != nil {
		return nil, err
	}
	if rep := h.report.Repair; rep.Bytes > 0 {
		rt.log.Warn("repaired a torn journal tail", "run", id, "bytes", rep.Bytes, "savedTo", rep.SidePath)
	}
	if h.end != nil && Status(h.end.Status).Terminal() {
		return nil, fmt.Errorf("%w: %s was stopped; start a new run instead", ErrNotResumable, id)
	}
	for _, d := range h.damaged {
		if d.Type == recResume && req.Script == nil {
			return nil, fmt.Errorf("%w: %s: %s; resume it with the script (and --args) it should run: dynworkflow resume %s FILE",
				ErrNotResumable, id, d, id)
		}
	}
	script := req.Script
	if script == nil {
		script, err = rt.cfg.Hosts.Load(lang.Source{Path: h.scriptPath, Text: []byte(h.scriptText)})
		if err != nil {
			return nil, fmt.Errorf("reload the journaled script: %w", err)
		}
	}
	args := h.args
	if req.Args != nil {
		if err := lang.CheckJSONNesting("the run's args", req.Args, rt.maxNesting()); err != nil {
			return nil, err
		}
		if args, err = NormalizeArgs(req.Args); err != nil {
			return nil, err
		}
	}
	opts := h.options
	if req.Options != nil {
		req.Options(&opts)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	set := rt.restoreExecutors(id, h.executors)
	if _, err := set.Get(opts.Executor); err != nil {
		return nil, err
	}
	rule := callpolicy.RuleCrash
	if script.Hash() != h.scriptHash || !bytes.Equal(args, h.args) {
		rule = callpolicy.RuleEdit
	}
	jw, err := journal.Open(paths.Journal, journal.Options{Fence: lease.Check, ObserveSync: rt.cfg.ObserveFsync})
	if err != nil {
		return nil, err
	}
	hdr := h.header
	hdr.Name, hdr.Description = script.Meta().Name, script.Meta().Description
	r := rt.newRun(id, paths, hdr, script, args, opts, h.epoch+1, rule, h.ledger, set, jw, lease,
		h.created, time.Now())
	r.seq.Store(h.lastSeq)
	r.tryNow.Store(req.TryNow)
	r.usage = h.usage
	r.policy.SetSpentUSD(h.usage.CostUSD)
	for _, d := range h.damaged {
		r.warnings = append(r.warnings, d.String())
	}
	// Before anything else: the edits of calls a crash interrupted go on
	// their branches, so the calls can run again in new worktrees.
	if err := rt.salvage(ctx, id, h.worktrees, r.appendSync); err != nil {
		err = fmt.Errorf("resume %s: %w", id, err)
		rt.abandon(r, err)
		return nil, err
	}
	r.branchNotes = rt.checkKeptBranches(id, keptWorktrees(h.ledger))
	resume := &resumeHeader{Rule: rule, OldHash: h.scriptHash, NewHash: script.Hash(), Args: args, Options: opts,
		Executors: set.Definitions()}
	if rt.cfg.Tracing {
		resume.Trace = newTraceContext()
		r.trace = resume.Trace
	}
	if script.Hash() != h.scriptHash {
		resume.ScriptPath, resume.ScriptText = script.Path(), string(script.Text())
	}
	if err := r.appendSync(ctx, &record{Type: recResume, Resume: resume}); err != nil {
		rt.abandon(r, err)
		return nil, err
	}
	if err := r.writeSnapshot(); err != nil {
		rt.abandon(r, err)
		return nil, err
	}
	rt.bus.Publish(id, EventRunResumed, StartedPayload{Name: hdr.Name, Script: script.Path(), Rule: rule, Epoch: r.epoch,
		OldHash: h.scriptHash, NewHash: script.Hash(), Trace: resume.Trace, Links: h.traces})
	go r.execute()
	return r, nil
}

// restoreExecutors is the runtime's executors plus those the journal
// defines and the runtime lacks, rebuilt by Config.Restore: a resume must
// not need the command line of the first execution again.
func (rt *Runtime) restoreExecutors(id string, defs []executors.Definition) *executors.Set {
	if rt.cfg.Restore == nil {
		return rt.cfg.Executors
	}
	var extra []executors.Executor
	for _, def := range defs {
		if _, err := rt.cfg.Executors.Get(def.Name); err == nil {
			continue // configured now: the current configuration wins
		}
		e, err := rt.cfg.Restore(def)
		if err != nil {
			rt.log.Warn("cannot rebuild an executor from the journal", "run", id, "executor", def.Name, "err", err)
			continue
		}
		if e != nil {
			rt.log.Info("rebuilt an executor from the journal", "run", id, "executor", def.Name)
			extra = append(extra, e)
		}
	}
	if len(extra) == 0 {
		return rt.cfg.Executors
	}
	return rt.cfg.Executors.With(extra...)
}

// Pause pauses a run executing in this process.
func (rt *Runtime) Pause(id string) error {
	r, ok := rt.Live(id)
	if !ok {
		return rt.notLive(id)
	}
	return r.Pause()
}

// Stop stops a run. A run executing here is cancelled; a paused or failed
// run on disk is marked stopped, so it can no longer be resumed.
func (rt *Runtime) Stop(id string) error {
	if r, ok := rt.Live(id); ok {
		return r.Stop()
	}
	if err := store.ValidRunID(id); err != nil {
		return err
	}
	paths := rt.store.RunPaths(id)
	if _, err := os.Stat(paths.Journal); err != nil {
		return rt.missing(id, "stop")
	}
	lease, err := rt.store.AcquireLease(id, rt.owner)
	if err != nil {
		return err
	}
	defer lease.Release()
	return rt.settleOnDisk(id, paths, lease, StatusStopped, "")
}

// settleOnDisk journals a final status for a run nobody executes, and
// writes its snapshot as the journal then tells it.
func (rt *Runtime) settleOnDisk(id string, paths store.Paths, lease *store.Lease, status Status, reason string) error {
	f, err := foldJournal(paths.Journal)
	if err != nil {
		return err
	}
	if !f.sawRun {
		return fmt.Errorf("%w: %s: %s", ErrNotResumable, id, f.summary(id, nil).Error)
	}
	var prior *store.Summary
	if snap, err := rt.store.ReadSnapshot(id); err == nil {
		prior = &snap.Summary
	}
	before := f.summary(id, prior)
	jw, err := journal.Open(paths.Journal, journal.Options{Fence: lease.Check, ObserveSync: rt.cfg.ObserveFsync})
	if err != nil {
		return err
	}
	r := &Run{rt: rt, id: id, journal: jw, lease: lease, epoch: before.Epoch}
	r.seq.Store(f.lastSeq)
	// A resume would do this first too; doing it now commits the edits of
	// interrupted isolated calls as soon as their owner is known dead. A
	// failure leaves the worktrees as they are, for the resume to settle.
	if h, err := loadHistory(paths.Journal); err == nil {
		if err := rt.salvage(context.Background(), id, h.worktrees, r.appendSync); err != nil {
			rt.log.Warn("settle the worktrees of interrupted calls", "run", id, "err", err)
		}
	}
	end := &endInfo{Status: string(status), PauseReason: reason,
		Replayed: before.Stats.Replayed, Live: before.Stats.Live, Failed: before.Stats.Failed}
	if err := r.appendSync(context.Background(), &record{Type: recEnd, End: end}); err != nil {
		_ = jw.Close()
		return err
	}
	m := jw.Mark()
	if err := jw.Close(); err != nil {
		return err
	}
	s := before
	s.Status, s.PauseReason, s.Error = string(status), reason, ""
	now := time.Now().UTC()
	s.UpdatedAt, s.EndedAt = now, &now
	s.JournalSeq, s.JournalSize, s.JournalHead, s.JournalTail = r.seq.Load(), m.Size, m.Head, m.Tail
	s.Stats.Running = 0
	if err := rt.store.WriteSnapshot(id, &store.Snapshot{Summary: s}); err != nil {
		return err
	}
	rt.bus.Publish(id, EventRunStatus, StatusPayload{Status: status, PauseReason: reason, Epoch: before.Epoch,
		Replayed: end.Replayed, Live: end.Live, Failed: end.Failed})
	return nil
}

func (rt *Runtime) notLive(id string) error {
	if err := store.ValidRunID(id); err != nil {
		return err
	}
	if _, err := os.Stat(rt.store.RunPaths(id).Journal); err != nil {
		return rt.missing(id, "pause")
	}
	if info, held, _ := rt.store.LeaseHolder(id); held {
		return fmt.Errorf("%w: %s is run by process %d", ErrNotRunning, id, info.PID)
	}
	return fmt.Errorf("%w: %s", ErrNotRunning, id)
}

// Delete removes a run that nobody executes.
func (rt *Runtime) Delete(id string) error {
	if _, ok := rt.Live(id); ok {
		return fmt.Errorf("%w: %s; stop it before deleting it", ErrRunning, id)
	}
	if rt.store.IsNodeRun(id) {
		return &store.ForeignError{RunID: id, Op: "delete"}
	}
	return rt.store.DeleteRun(id)
}

// missing is the error for a run without a journal: another runtime's
// (which this one only reads), or none at all.
func (rt *Runtime) missing(id, op string) error {
	if rt.store.IsNodeRun(id) {
		return &store.ForeignError{RunID: id, Op: op}
	}
	return fmt.Errorf("%w: %s", ErrNotFound, id)
}

// List returns the project's runs, newest first. A snapshot is trusted
// while its journal still has the Mark the snapshot recorded (a stat and
// two small reads per run); a journal that has changed since (grown by a
// process that crashed before its next snapshot, cut, replaced, damaged at
// its end) is folded instead: the journal decides. A run recorded as
// running whose owner is gone shows as paused: that is what it is, and the
// next owner to start makes it so on disk (see Recover).
func (rt *Runtime) List() ([]store.Summary, error) {
	sums, err := rt.store.ListSummaries()
	if err != nil {
		return nil, err
	}
	for i := range sums {
		s := &sums[i]
		if r, ok := rt.Live(s.RunID); ok {
			*s = r.summary()
			continue
		}
		if s.Foreign != "" {
			// Another runtime's run: read as it wrote it, never folded.
			rt.reconcileView(s)
			continue
		}
		if s.Status != "" && !s.Stale && rt.snapshotHolds(s) {
			rt.reconcileView(s)
			continue
		}
		if d, err := rt.Inspect(s.RunID); err == nil {
			*s = d.Summary
		} else if s.Status == "" {
			markDamaged(s, fmt.Sprintf("%v; inspect its files in %s", err, rt.store.RunsDir()))
		}
	}
	return sums, nil
}

// snapshotHolds reports whether a snapshot summary still tells the truth:
// its journal has the Mark it recorded, or another process is executing
// the run and keeps the snapshot fresh.
func (rt *Runtime) snapshotHolds(s *store.Summary) bool {
	m, err := journal.ReadMark(rt.store.RunPaths(s.RunID).Journal)
	if err == nil && m.Size == s.JournalSize && m.Head == s.JournalHead && m.Tail == s.JournalTail && s.JournalSize > 0 {
		return true
	}
	if err == nil && s.Status == string(StatusRunning) {
		_, held, _ := rt.store.LeaseHolder(s.RunID)
		return held
	}
	return false
}

func (rt *Runtime) reconcileView(s *store.Summary) {
	if s.Status != string(StatusRunning) || s.Foreign != "" {
		return
	}
	if r, ok := rt.Live(s.RunID); ok {
		*s = r.summary()
		return
	}
	if _, held, err := rt.store.LeaseHolder(s.RunID); err == nil && !held {
		s.Status, s.PauseReason = string(StatusPaused), ownerGone
		s.Stats.Running = 0
	}
}

const ownerGone = "the process running it exited"

// Recover marks every run left running by a process that is gone as
// paused, in its journal and snapshot, and sweeps what a process killed
// while starting a run left behind: a lock file or a half-made journal
// with no run, an empty journal of an older version. Processes that own
// runs (run, resume, serve) call it when they start.
func (rt *Runtime) Recover() (int, error) {
	if err := rt.store.SweepLeftovers(); err != nil {
		rt.log.Warn("sweep files left by a killed start", "err", err)
	}
	sums, err := rt.store.ListSummaries()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range sums {
		if s.Foreign != "" || s.Status != string(StatusRunning) && s.Status != "" && !s.Stale {
			continue
		}
		if _, ok := rt.Live(s.RunID); ok {
			continue
		}
		lease, err := rt.store.AcquireLease(s.RunID, rt.owner)
		if err != nil {
			continue // a live process owns it
		}
		settled, err := rt.recoverLeased(s, lease)
		lease.Release()
		if err != nil {
			rt.log.Warn("recover a run left running", "run", s.RunID, "err", err)
			continue
		}
		if settled {
			n++
		}
	}
	return n, nil
}

// recoverLeased settles one run whose snapshot says running, or could not
// be read, if its journal says it is still running.
func (rt *Runtime) recoverLeased(s store.Summary, lease *store.Lease) (bool, error) {
	paths := rt.store.RunPaths(s.RunID)
	m, err := journal.ReadMark(paths.Journal)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // a snapshot without a journal: List shows it damaged
	}
	if err != nil {
		return false, err
	}
	if m.Size == 0 && s.Status == "" {
		// An empty journal and no snapshot: a start killed before its run
		// record, by a version that did not write it first. Nothing is lost.
		return false, rt.store.DeleteLeased(s.RunID, lease)
	}
	f, err := foldJournal(paths.Journal)
	if err != nil || !f.sawRun || f.summary(s.RunID, nil).Status != string(StatusRunning) {
		return false, err
	}
	return true, rt.settleOnDisk(s.RunID, paths, lease, StatusPaused, ownerGone)
}

// Close pauses every run executing in this process and waits for them to
// settle on disk.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	runs := make([]*Run, 0, len(rt.runs))
	for _, r := range rt.runs {
		runs = append(runs, r)
	}
	rt.mu.Unlock()
	for _, r := range runs {
		r.pauseFor("the runtime shut down")
	}
	for _, r := range runs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// NormalizeArgs checks that args are JSON and compacts them, so the same
// args always compare equal (on every backend: a resume compares them to
// tell an edit).
func NormalizeArgs(args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		return nil, fmt.Errorf("args are not valid JSON: %w", err)
	}
	return buf.Bytes(), nil
}

func phaseTitles(m lang.Meta) []string {
	var out []string
	for _, p := range m.Phases {
		out = append(out, p.Title)
	}
	return out
}
