package engine

import (
	"slices"
	"sync"
)

// FailureGroup is the failed calls of one cause, for the summary at the
// end of a run: how many, the first of them by call path, and what they
// said.
type FailureGroup struct {
	// Class is the executor's classification ("terminal", "transient"
	// after its retries ran out) or "schema" for an answer that never
	// satisfied its schema.
	Class     string `json:"class"`
	Code      string `json:"code,omitempty"`
	Message   string `json:"message"`
	Count     int    `json:"count"`
	FirstPath string `json:"firstPath"`
}

// maxFailureGroups bounds the summary: causes past it are counted in one
// last group.
const maxFailureGroups = 20

// otherCauses is the message of the group that counts the causes past
// maxFailureGroups.
const otherCauses = "other causes"

// failureSet groups failed calls by cause (class and message) as they fail.
type failureSet struct {
	mu     sync.Mutex
	groups map[string]*FailureGroup
	order  []*FailureGroup
}

func (f *failureSet) add(path string, info *errorInfo) {
	class := info.Class
	if info.Code == CodeSchema {
		class = "schema"
	}
	key := class + "\x00" + info.Message
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groups == nil {
		f.groups = map[string]*FailureGroup{}
	}
	g, ok := f.groups[key]
	if !ok {
		if len(f.order) >= maxFailureGroups {
			key = "\x00other"
			g, ok = f.groups[key]
		}
		if !ok {
			g = &FailureGroup{Class: class, Code: info.Code, Message: info.Message, FirstPath: path}
			if key == "\x00other" {
				g.Class, g.Code, g.Message = "mixed", "", otherCauses
			}
			f.groups[key] = g
			f.order = append(f.order, g)
		}
	}
	g.Count++
	if lessPath(path, g.FirstPath) {
		g.FirstPath = path
	}
}

// list returns the groups, the most frequent first, then by first path.
func (f *failureSet) list() []FailureGroup {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FailureGroup, 0, len(f.order))
	for _, g := range f.order {
		out = append(out, *g)
	}
	slices.SortStableFunc(out, func(a, b FailureGroup) int { return a.order().compare(b.order()) })
	if len(out) == 0 {
		return nil
	}
	return out
}

func (g FailureGroup) order() groupOrder {
	return groupOrder{rest: g.Message == otherCauses, count: g.Count, firstPath: g.FirstPath, message: g.Message}
}

// noteFailure counts a failed call in the run's summary.
func (r *Run) noteFailure(path string, info *errorInfo) { r.failures.add(path, info) }
