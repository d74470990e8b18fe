package engine

import (
	"strconv"
	"strings"
	"sync"
)

// scope is a node of a run's scope tree. Its path depends only on its
// parent's path and the ordinal of the primitive that opened it, never on
// timing, which is what makes call identities stable across executions.
type scope struct {
	path  string
	frame *frame // the workflow (main script or a child) running in it
	flow  *flow  // prefix-rule state; the stages of a pipeline item share one

	mu       sync.Mutex
	ordinals map[string]int // next ordinal per kind of primitive
	phase    string
}

// flow carries the edit-and-resume prefix rule: once a call in a flow was
// changed or new, later calls in it run live.
type flow struct {
	mu     sync.Mutex
	broken bool
}

func (f *flow) isBroken() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.broken
}

func (f *flow) breakNow() {
	f.mu.Lock()
	f.broken = true
	f.mu.Unlock()
}

// Path implements lang.Scope.
func (s *scope) Path() string {
	if s.path == "" {
		return "/"
	}
	return s.path
}

// next returns the path element for the next primitive of kind in s,
// such as "agent.3".
func (s *scope) next(kind string) string {
	s.mu.Lock()
	n := s.ordinals[kind]
	if s.ordinals == nil {
		s.ordinals = map[string]int{}
	}
	s.ordinals[kind] = n + 1
	s.mu.Unlock()
	return kind + "." + strconv.Itoa(n)
}

// callPath is the identity of the next call of kind in s.
func (s *scope) callPath(kind string) string {
	return s.path + "/" + s.next(kind)
}

// stage returns the scope of stage k of a pipeline item. Stages share the
// item's flow, so a change in stage 1 makes stages 2 and 3 of that item run
// live while other items keep their results.
func (s *scope) stage(k int) *scope {
	return &scope{path: s.path + "/s" + strconv.Itoa(k), frame: s.frame, flow: s.flow, phase: s.currentPhase()}
}

func (s *scope) setPhase(title string) {
	s.mu.Lock()
	s.phase = title
	s.mu.Unlock()
}

func (s *scope) currentPhase() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

// parentPath returns the scope part of a call path.
func parentPath(callPath string) string {
	if i := strings.LastIndexByte(callPath, '/'); i >= 0 {
		return callPath[:i]
	}
	return ""
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
