package callpolicy

import (
	"strconv"
	"strings"
	"sync"

	"github.com/dynworkflow/dynworkflow/lang"
)

// A Frame is one workflow running in an execution: the main script, or a
// child started by workflow(). What it ran (its script and args) decides
// which earlier answers it may reuse as they are (see Ledger).
type Frame struct {
	// Path is "" for the main script, the workflow() call's frame path
	// for a child (see ChildFramePath).
	Path string
	// Identity is the script and args the frame runs now.
	Identity Identity
	// Meta is the frame's script's meta: its models route the frame's
	// calls (see Resolve).
	Meta lang.Meta
	root *Scope
}

// NewFrame returns the frame at path running what id names. A child's
// root scope continues the flow of parent, the scope of its workflow()
// call: calls after a change in the parent run live in the child too,
// unless the child's answers come from the same script and args.
func NewFrame(path string, id Identity, meta lang.Meta, parent *Scope) *Frame {
	f := &Frame{Path: path, Identity: id, Meta: meta}
	fl := &flow{}
	phase := ""
	if parent != nil {
		fl.stale = parent.flow.snapshot()
		phase = parent.Phase()
	}
	f.root = &Scope{prefix: path, frame: f, flow: fl, phase: phase}
	return f
}

// Root is the scope the frame's script body runs in.
func (f *Frame) Root() *Scope { return f.root }

// ChildFramePath is the frame path of a child workflow: its workflow()
// call's scope, the call's element ("wf.0") and the child's name, made
// path-safe.
func ChildFramePath(sc *Scope, elem, name string) string {
	return sc.prefix + "/" + elem + ":" + pathSafe(name)
}

// Scope is a node of a run's scope tree. Its path depends only on its
// parent's path and the ordinal of the primitive that opened it, never on
// timing, which is what makes call identities stable across executions
// and the same on every backend. It implements lang.Scope.
type Scope struct {
	prefix string // "" for the main script's root
	frame  *Frame
	flow   *flow // prefix-rule state; the stages of a pipeline item share one

	mu       sync.Mutex
	ordinals map[string]int // next ordinal per kind of primitive
	phase    string
}

// flow carries the edit-and-resume prefix rule: the executions whose
// answers a later call of the flow may no longer reuse, because a call
// before it in the flow differs from what ran then (see Ledger).
type flow struct {
	mu    sync.Mutex
	stale epochSet // shared with flows opened from this one: never changed in place
}

func (f *flow) snapshot() epochSet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stale
}

// Path implements lang.Scope: "/" for a script's root.
func (s *Scope) Path() string {
	if s.prefix == "" {
		return "/"
	}
	return s.prefix
}

// Prefix is what the paths of the scope's calls start with: "" for the
// main script's root scope.
func (s *Scope) Prefix() string { return s.prefix }

// Frame is the workflow the scope belongs to.
func (s *Scope) Frame() *Frame { return s.frame }

// Next returns the path element for the next primitive of kind in s,
// such as "agent.3".
func (s *Scope) Next(kind string) string {
	s.mu.Lock()
	n := s.ordinals[kind]
	if s.ordinals == nil {
		s.ordinals = map[string]int{}
	}
	s.ordinals[kind] = n + 1
	s.mu.Unlock()
	return kind + "." + strconv.Itoa(n)
}

// CallPath is the identity of the next call of kind in s.
func (s *Scope) CallPath(kind string) string { return s.prefix + "/" + s.Next(kind) }

// Stage returns the scope of stage k of a pipeline item. Stages share the
// item's flow, so a change in stage 1 makes stages 2 and 3 of that item run
// live while other items keep their results.
func (s *Scope) Stage(k int) *Scope {
	return &Scope{prefix: s.prefix + "/s" + strconv.Itoa(k), frame: s.frame, flow: s.flow, phase: s.Phase()}
}

// SetPhase makes title the phase of the calls s makes from now on.
func (s *Scope) SetPhase(title string) {
	s.mu.Lock()
	s.phase = title
	s.mu.Unlock()
}

// Phase is the scope's current phase.
func (s *Scope) Phase() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

// open opens n child scopes under base, each with a flow of its own that
// starts where s's flow stands: a change before the fan-out makes every
// branch run live, a change in one branch touches no other.
func (s *Scope) open(base string, n int) []*Scope {
	stale, phase := s.flow.snapshot(), s.Phase()
	scopes := make([]*Scope, n)
	for i := range scopes {
		scopes[i] = &Scope{prefix: base + "/" + strconv.Itoa(i), frame: s.frame, flow: &flow{stale: stale}, phase: phase}
	}
	return scopes
}

// ParentPath returns the scope part of a call path.
func ParentPath(callPath string) string {
	if i := strings.LastIndexByte(callPath, '/'); i >= 0 {
		return callPath[:i]
	}
	return ""
}

// frameOf returns the frame path of the call at path: the path up to its
// last child-workflow element ("wf.N:name"), or "" for the main script.
func frameOf(path string) string {
	frame := ""
	for i := 0; i < len(path); {
		end := len(path)
		if next := strings.IndexByte(path[i+1:], '/'); next >= 0 {
			end = i + 1 + next
		}
		if elem := path[i+1 : end]; strings.HasPrefix(elem, "wf.") && strings.IndexByte(elem, ':') > 0 {
			frame = path[:end]
		}
		i = end
	}
	return frame
}

// pathSafe turns a workflow name into something that can sit in a path.
func pathSafe(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
