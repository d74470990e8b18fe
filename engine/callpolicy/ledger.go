package callpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Identity is what a frame ran in one execution: its script and its args.
// Two executions of a frame with the same identity make the same calls in
// the same flows, so an answer of one is good for the other wherever its
// call now is.
type Identity struct {
	// Script is the script's content hash.
	Script string `json:"script"`
	// Args is a hash of the args' JSON, "" for none.
	Args string `json:"args,omitempty"`
}

// IdentityOf is the identity of a frame running the script whose hash is
// scriptHash with args (normalized JSON, or nil).
func IdentityOf(scriptHash string, args json.RawMessage) Identity {
	id := Identity{Script: scriptHash}
	if len(args) > 0 {
		sum := sha256.Sum256(args)
		id.Args = hex.EncodeToString(sum[:16])
	}
	return id
}

// RecordKind says what a Record is.
type RecordKind string

// What an execution can do with a call.
const (
	// Started is a call that began running live: an earlier answer of it
	// is superseded, whether or not this one finishes.
	Started RecordKind = "started"
	// Finished is a call's answer.
	Finished RecordKind = "finished"
	// Failed is a call that ended without an answer.
	Failed RecordKind = "failed"
)

// Record is one thing an execution did with a call. A backend gives the
// Ledger its records in the order they happened (per call path, at least).
type Record struct {
	Epoch int        `json:"epoch"`
	Path  string     `json:"path"`
	FP    string     `json:"fp"`
	Kind  RecordKind `json:"kind"`
	// Result and Usage are a finished call's answer and what it cost,
	// which its replay counts against the token budget.
	Result json.RawMessage `json:"result,omitempty"`
	Usage  executors.Usage `json:"usage,omitzero"`
}

// Run says which script and args a frame ran in an execution.
type Run struct {
	Frame    string   `json:"frame,omitempty"` // "" for the main script
	Epoch    int      `json:"epoch"`
	Identity Identity `json:"identity"`
}

// Answer is a finished call of an earlier execution that a resume may
// replay.
type Answer struct {
	Path   string
	FP     string
	Epoch  int
	Result json.RawMessage
	Usage  executors.Usage
	// Kept is what a backend keeps with the answer: for a local run, the
	// worktree an isolated call kept.
	Kept any

	superseded, claimed bool
}

// Ledger is what the earlier executions of a run did with its calls, and
// which of their answers a new execution may replay. Its rules:
//
//   - An answer is current until a later record of its path supersedes it:
//     any record of the same call (same fingerprint: it ran again, failed,
//     or began and never finished), or a record of another call made by an
//     execution of another script or args. So the newest answer of a call
//     is the only one ever replayed, whatever later line is lost, as long
//     as one record of the later run survives; and once an edit put another
//     call at a path, reverting the edit does not bring the old answer back.
//   - Crash rule: a current answer made by an execution of the same script
//     and args as its frame runs now replays wherever its call is (by path,
//     or failing that in the same scope with the same fingerprint, which
//     absorbs calls that a Promise.all the runtime cannot see reordered).
//   - Edit rule: a current answer made under another script or args replays
//     only at its own path, and only while every call before it in its flow
//     (its scope, a pipeline item's stages, the scopes it was opened from) is
//     the call that stood there when the answer was made. The first call that
//     differs, or is new, makes the later calls of its flow run live; sibling
//     branches keep their answers. A call that began and never finished, or
//     failed, is not a change.
type Ledger struct {
	mu        sync.Mutex
	runs      map[string][]Run // by frame, oldest first
	paths     map[string]*pathLog
	byScopeFP map[string][]*Answer // scope path + "\x00" + fp, for the crash rule's fallback
}

// pathLog is what happened at one call path.
type pathLog struct {
	// marks are the fingerprint of the call at the path, from each
	// execution that recorded one, oldest first.
	marks []mark
	// answers are the path's current answers: one, or a few when a
	// reordering Promise.all put several calls at it.
	answers []*Answer
}

type mark struct {
	epoch int
	fp    string
}

// NewLedger returns an empty ledger: a run's first execution replays
// nothing.
func NewLedger() *Ledger {
	return &Ledger{runs: map[string][]Run{}, paths: map[string]*pathLog{}, byScopeFP: map[string][]*Answer{}}
}

// Ran records what a frame ran in an execution. A backend records it
// before the execution's calls in that frame.
func (l *Ledger) Ran(r Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := l.runs[r.Frame]
	if n := len(runs); n > 0 && runs[n-1].Epoch == r.Epoch {
		runs[n-1] = r
		return
	}
	l.runs[r.Frame] = append(runs, r)
}

// LastRun is what the frame at path ran in the latest execution that ran
// it.
func (l *Ledger) LastRun(frame string) (Identity, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := l.runs[frame]
	if len(runs) == 0 {
		return Identity{}, false
	}
	return runs[len(runs)-1].Identity, true
}

// identityAt is what frame ran in execution epoch, if the ledger knows.
func (l *Ledger) identityAt(frame string, epoch int) (Identity, bool) {
	runs := l.runs[frame]
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Epoch == epoch {
			return runs[i].Identity, true
		}
		if runs[i].Epoch < epoch {
			break
		}
	}
	return Identity{}, false
}

// Note adds a record. For a finished call it returns its answer, so that a
// backend can keep something with it.
func (l *Ledger) Note(r Record) *Answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	pl := l.paths[r.Path]
	if pl == nil {
		pl = &pathLog{}
		l.paths[r.Path] = pl
	}
	frame := frameOf(r.Path)
	id, known := l.identityAt(frame, r.Epoch)
	current := pl.answers[:0]
	for _, a := range pl.answers {
		if a.FP != r.FP && known {
			if aid, ok := l.identityAt(frame, a.Epoch); ok && aid == id {
				// Another call the same script put at this path (a
				// reordering): both answers stand.
				current = append(current, a)
				continue
			}
		}
		a.superseded = true
	}
	clear(pl.answers[len(current):])
	pl.answers = current
	if n := len(pl.marks); n > 0 && pl.marks[n-1].epoch == r.Epoch {
		pl.marks[n-1].fp = r.FP
	} else if n == 0 || pl.marks[n-1].fp != r.FP {
		pl.marks = append(pl.marks, mark{epoch: r.Epoch, fp: r.FP})
	}
	if r.Kind != Finished {
		return nil
	}
	a := &Answer{Path: r.Path, FP: r.FP, Epoch: r.Epoch, Result: r.Result, Usage: r.Usage}
	pl.answers = append(pl.answers, a)
	k := ParentPath(r.Path) + "\x00" + r.FP
	l.byScopeFP[k] = append(l.byScopeFP[k], a)
	return a
}

// HasAnswer reports whether the call at path has a current answer: what a
// crash resume would replay there.
func (l *Ledger) HasAnswer(path string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	pl := l.paths[path]
	return pl != nil && len(pl.answers) > 0
}

// Answers calls fn with every current answer.
func (l *Ledger) Answers(fn func(*Answer)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pl := range l.paths {
		for _, a := range pl.answers {
			fn(a)
		}
	}
}

// reuse finds the answer the call at path with fingerprint fp may replay
// in scope sc, claiming it, and moves sc's flow past the call. epoch is
// the current execution's.
func (l *Ledger) reuse(sc *Scope, path, fp string, epoch int) *Answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	pl := l.paths[path]
	fl := sc.flow
	fl.mu.Lock()
	stale := fl.stale
	fl.stale = stale.withRanges(pl.differs(fp, epoch))
	fl.mu.Unlock()

	frame := sc.frame
	if pl != nil {
		for _, a := range pl.answers {
			if a.FP != fp || a.claimed {
				continue
			}
			if l.sameRun(frame, a.Epoch) || !stale.has(a.Epoch) {
				a.claimed = true
				return a
			}
		}
	}
	for _, a := range l.byScopeFP[sc.prefix+"\x00"+fp] {
		if !a.superseded && !a.claimed && l.sameRun(frame, a.Epoch) {
			a.claimed = true
			return a
		}
	}
	return nil
}

// sameRun reports whether frame runs now what it ran in execution epoch.
func (l *Ledger) sameRun(frame *Frame, epoch int) bool {
	id, ok := l.identityAt(frame.Path, epoch)
	return ok && id == frame.Identity
}

// differs returns the executions before epoch in which the call at the
// path was not the one with fingerprint fp (another call, or none yet):
// their answers of later calls in the flow were made after something else.
func (pl *pathLog) differs(fp string, epoch int) []span {
	if epoch <= 0 {
		return nil
	}
	var out []span
	add := func(lo, hi int) {
		hi = min(hi, epoch)
		if lo < hi {
			out = append(out, span{lo, hi})
		}
	}
	lo, cur, defined := 0, "", false
	if pl != nil {
		for _, m := range pl.marks {
			if !defined || cur != fp {
				add(lo, m.epoch)
			}
			lo, cur, defined = m.epoch, m.fp, true
		}
	}
	if !defined || cur != fp {
		add(lo, epoch)
	}
	return out
}

// The rules an execution, or a child workflow in it, resumes by, as the
// journal records them and the log says them. What each call replays is
// decided answer by answer (see Ledger); the rule names the common case.
const (
	RuleFresh = "fresh" // a run's first execution: nothing to replay
	RuleCrash = "crash" // the same script and args as last time
	RuleEdit  = "edit"  // the script or args changed: the prefix rule
)

// Rule is the rule a child workflow at frame running id resumes by: crash
// when it runs what it ran last, edit when its script or args changed, and
// parent's rule when the run never ran it.
func (l *Ledger) Rule(frame string, id Identity, parent string) string {
	last, ok := l.LastRun(frame)
	switch {
	case !ok || parent == RuleFresh:
		return parent
	case last == id:
		return RuleCrash
	}
	return RuleEdit
}
