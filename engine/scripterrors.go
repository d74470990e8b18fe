package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dynworkflow/dynworkflow/lang"
)

// A script error is what a parallel() branch or a pipeline() item threw
// when the fan-out turned it into null: a ReferenceError, a TypeError, a
// value the script threw, Starlark's fail() or "cannot append to frozen
// list". The Node runtime swallows these too, and scripts count on it, so
// the run goes on; but the work that branch should have done did not
// happen, so every screen that tells how a run ended says how many there
// were, and where (DESIGN.md 9a). An agent that failed is not a script
// error: it is a failed call, counted apart (FailureGroup), and it makes
// its branch null only when the script does not cope with the null.
//
// With the run's Strict option or its meta's strict: true, the first
// script error fails the run instead.

// ScriptErrorGroup is the script errors of one cause: the same message
// thrown at the same place, how many branches it made null and the first
// of them by path.
type ScriptErrorGroup struct {
	Message string `json:"message"`
	// Position is file:line:col of the throw, as far as it is known.
	Position  string `json:"position,omitempty"`
	Count     int    `json:"count"`
	FirstPath string `json:"firstPath"`
}

// ScriptError is one branch that became null because it threw.
type ScriptError struct {
	// Path is the branch's scope: /par.0/3, /pipe.0/7/s1.
	Path     string `json:"path"`
	Message  string `json:"message"`
	Position string `json:"position,omitempty"`
}

// ScriptErrorOf describes what a branch at path threw. The hosts report a
// *lang.Error with the throw's position; anything else is its message.
func ScriptErrorOf(path string, err error) ScriptError {
	var le *lang.Error
	if errors.As(err, &le) {
		msg := le.Message
		if le.Hint != "" {
			msg += " (" + le.Hint + ")"
		}
		return ScriptError{Path: path, Message: msg, Position: le.Position()}
	}
	return ScriptError{Path: path, Message: err.Error()}
}

// Line is the error as one line for a terminal or a log.
func (e ScriptError) Line() string {
	return fmt.Sprintf("branch %s became null: %s", e.Path, e.where())
}

func (e ScriptError) where() string {
	if e.Position == "" {
		return e.Message
	}
	return e.Position + ": " + e.Message
}

// maxScriptErrorGroups bounds the groups a run keeps: a script error
// whose message holds a value (an index, an id) is a new group each time.
// Causes past it are counted in one last group.
const maxScriptErrorGroups = 20

// otherScriptErrors is the message of the group that counts the rest.
const otherScriptErrors = "other script errors"

// AddScriptError counts e in groups and returns them. Both backends keep
// their groups with it: the local engine under a lock, a Temporal
// workflow in its state.
func AddScriptError(groups []ScriptErrorGroup, e ScriptError) []ScriptErrorGroup {
	i := slices.IndexFunc(groups, func(g ScriptErrorGroup) bool { return g.Message == e.Message && g.Position == e.Position })
	if i < 0 && len(groups) >= maxScriptErrorGroups {
		i = slices.IndexFunc(groups, func(g ScriptErrorGroup) bool { return g.Message == otherScriptErrors && g.Position == "" })
		if i < 0 {
			groups = append(groups, ScriptErrorGroup{Message: otherScriptErrors, FirstPath: e.Path})
			i = len(groups) - 1
		}
	}
	if i < 0 {
		groups = append(groups, ScriptErrorGroup{Message: e.Message, Position: e.Position, FirstPath: e.Path})
		i = len(groups) - 1
	}
	g := &groups[i]
	g.Count++
	if lessPath(e.Path, g.FirstPath) {
		g.FirstPath = e.Path
	}
	return groups
}

// CountScriptErrors is how many branches the groups made null.
func CountScriptErrors(groups []ScriptErrorGroup) int {
	n := 0
	for _, g := range groups {
		n += g.Count
	}
	return n
}

// SortScriptErrors orders groups for a reader: the most frequent first,
// then by first path, the rest last.
func SortScriptErrors(groups []ScriptErrorGroup) []ScriptErrorGroup {
	out := slices.Clone(groups)
	slices.SortStableFunc(out, func(a, b ScriptErrorGroup) int { return a.order().compare(b.order()) })
	if len(out) == 0 {
		return nil
	}
	return out
}

func (g ScriptErrorGroup) order() groupOrder {
	return groupOrder{rest: g.Message == otherScriptErrors && g.Position == "", count: g.Count, firstPath: g.FirstPath, message: g.Message}
}

// Strict reports whether a script error fails a run with opts running a
// script with meta, rather than making its branch null.
func Strict(opts Options, meta lang.Meta) bool { return opts.Strict || meta.Strict }

// CodeScriptError is the code of a run that a script error failed in
// strict mode.
const CodeScriptError = "SCRIPT_ERROR"

// StrictFailure is the error a strict run fails with at its first script
// error.
type StrictFailure struct{ ScriptError }

func (s *StrictFailure) Error() string {
	return fmt.Sprintf("a script error in strict mode: branch %s threw %s", s.Path, s.where())
}

// Unwrap gives the failure its code, as the run's error records it.
func (s *StrictFailure) Unwrap() error { return &Error{Code: CodeScriptError, Message: s.Error()} }

// scriptErrorSet is a run's script errors as they come.
type scriptErrorSet struct {
	mu     sync.Mutex
	groups []ScriptErrorGroup
}

func (s *scriptErrorSet) add(e ScriptError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups = AddScriptError(s.groups, e)
}

func (s *scriptErrorSet) list() []ScriptErrorGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SortScriptErrors(s.groups)
}

func (s *scriptErrorSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return CountScriptErrors(s.groups)
}

// ScriptErrorPayload comes with branch.failed: a branch the script's own
// error made null.
type ScriptErrorPayload = ScriptError

// scriptError records that a branch at sc threw err and became null: in
// the journal (a script.error record, durable with the end of the run at
// the latest), in the run's counts, on the bus as branch.failed and as a
// warning in the log. A strict run fails instead.
func (r *Run) scriptError(sc *scope, err error) {
	e := ScriptErrorOf(sc.Path(), err)
	r.scriptErrors.add(e)
	r.append(&record{Type: recScriptError, Path: sc.Path(), Message: e.Message, Position: e.Position})
	r.rt.bus.Publish(r.id, EventBranchFailed, e)
	r.rt.bus.Publish(r.id, EventLog, LogPayload{Scope: sc.Path(), Level: "warn", Message: e.Line()})
	if Strict(r.opts, r.script.Meta()) {
		r.cancel(&StrictFailure{e})
	}
}
