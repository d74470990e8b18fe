package temporal

import (
	"strconv"
)

// scope is a node of the run's scope tree inside the workflow. Paths are
// built exactly as the local engine builds them (engine/scope.go): a call's
// path is its scope's path, the kind of primitive and its ordinal in the
// scope, so both backends give a call the same identity.
//
// Workflow code runs one coroutine at a time, so nothing here locks.
type scope struct {
	path     string
	frame    *frame
	flow     *flow
	ordinals map[string]int
	phase    string
}

// flow carries the edit-and-resume prefix rule: once a call in a flow was
// changed or new, later calls in it run live. The stages of a pipeline item
// share one flow.
type flow struct{ broken bool }

// Path implements lang.Scope.
func (s *scope) Path() string {
	if s.path == "" {
		return "/"
	}
	return s.path
}

// next returns the path element for the next primitive of kind in s.
func (s *scope) next(kind string) string {
	if s.ordinals == nil {
		s.ordinals = map[string]int{}
	}
	n := s.ordinals[kind]
	s.ordinals[kind] = n + 1
	return kind + "." + strconv.Itoa(n)
}

// callPath is the identity of the next call of kind in s.
func (s *scope) callPath(kind string) string { return s.path + "/" + s.next(kind) }

// stage returns the scope of stage k of a pipeline item.
func (s *scope) stage(k int) *scope {
	return &scope{path: s.path + "/s" + strconv.Itoa(k), frame: s.frame, flow: s.flow, phase: s.phase}
}
