package engine

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Liveness views. Each running call's last activity (executors.Activity:
// a tool call, a message, the CLI's "Reconnecting...", a heartbeat) is
// kept in memory, one entry per running call, and shown by the live view
// (Progress.Troubled), show (CallDetail.Activity), the dashboard and SSE
// (call.progress). It is never journaled: the snapshot carries it for
// the views of other processes, rewritten at most once a second.

// CallActivity is a running call's last activity.
type CallActivity struct {
	Path     string             `json:"path"`
	Label    string             `json:"label,omitempty"`
	Activity executors.Activity `json:"activity"`
	// Since is when the call last made progress (its start until then):
	// an activity that is not progress (a retry, an error) does not move
	// it.
	Since time.Time `json:"since"`
}

// Note records a new activity of the call: one that is progress moves
// Since.
func (c *CallActivity) Note(a executors.Activity) {
	c.Activity = a
	if !a.Stalled() {
		c.Since = a.At
	}
}

// Quiet is how long the call has gone without progress at now.
func (c CallActivity) Quiet(now time.Time) time.Duration { return now.Sub(c.Since) }

// heartbeatEventEvery spaces the call.progress events that carry nothing
// but a heartbeat: the board has every one, the event stream one per call
// in that time.
const heartbeatEventEvery = 5 * time.Second

// quietAfter is how long a call goes without progress before the live
// view names it.
const quietAfter = 30 * time.Second

// activityBoard holds the last activity of each running call.
type activityBoard struct {
	mu      sync.Mutex
	calls   map[string]*boardEntry
	version uint64 // counts changes, for the snapshot writer
}

type boardEntry struct {
	CallActivity
	published time.Time // the last heartbeat sent as an event
}

// start notes a call starting: its progress clock starts.
func (b *activityBoard) start(path, label string, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls == nil {
		b.calls = map[string]*boardEntry{}
	}
	b.calls[path] = &boardEntry{CallActivity: CallActivity{Path: path, Label: label, Since: at,
		Activity: executors.Activity{Kind: "started", At: at}}}
	b.version++
}

// note records an activity of the call at path and says whether it is
// worth an event: anything but a heartbeat, and a heartbeat now and then.
func (b *activityBoard) note(path string, a executors.Activity) (publish bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.calls[path]
	if !ok {
		return true
	}
	e.Note(a)
	b.version++
	if a.Kind != executors.ActivityStream {
		return true
	}
	if a.At.Sub(e.published) < heartbeatEventEvery {
		return false
	}
	e.published = a.At
	return true
}

// end forgets a call that is no longer running.
func (b *activityBoard) end(path string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.calls, path)
	b.version++
}

// get is the call's last activity, if it is running.
func (b *activityBoard) get(path string) (CallActivity, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.calls[path]
	if !ok {
		return CallActivity{}, false
	}
	return e.CallActivity, true
}

// all is every running call's activity, by path, and the board's version.
func (b *activityBoard) all() (map[string]CallActivity, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]CallActivity, len(b.calls))
	for p, e := range b.calls {
		out[p] = e.CallActivity
	}
	return out, b.version
}

// Troubled lists, at most n, the running calls a user should hear about
// at now: those whose CLI is retrying or cannot reach its endpoint, and
// those quiet for quietAfter, the longest quiet first.
func Troubled(calls map[string]CallActivity, now time.Time, n int) []CallActivity {
	var out []CallActivity
	for _, p := range slices.Sorted(maps.Keys(calls)) {
		c := calls[p]
		if c.Activity.Stalled() || c.Quiet(now) >= quietAfter {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b CallActivity) int { return a.Since.Compare(b.Since) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}
