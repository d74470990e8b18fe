package langtest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dynworkflow/dynworkflow/lang"
)

// A Scope is named so that assertions read well: the root is "/", the
// second branch of the first parallel() in it is "/par.0/1", and stage 2 of
// item 0 of a pipeline is "/pipe.0/0/stage.2".
type Scope struct {
	path string

	mu      sync.Mutex
	fanouts int // parallel() and pipeline() calls opened in this scope so far
}

// Path returns the scope's path, such as "/par.0/1".
func (s *Scope) Path() string { return s.path }

func (s *Scope) child(name string) *Scope {
	return &Scope{path: strings.TrimSuffix(s.path, "/") + "/" + name}
}

// nextFanout opens the scope of the next parallel() ("par") or pipeline()
// ("pipe") in s.
func (s *Scope) nextFanout(kind string) *Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.fanouts
	s.fanouts++
	return s.child(fmt.Sprintf("%s.%d", kind, n))
}

// children returns the n scopes "0" to "n-1" under s.
func (s *Scope) children(n int) []lang.Scope {
	out := make([]lang.Scope, n)
	for i := range out {
		out[i] = s.child(fmt.Sprint(i))
	}
	return out
}
