package engine

import (
	"fmt"
	"testing"
)

// TestFailureGroups: failures group by class and message, the most
// frequent first, each with its first path in path order; past
// maxFailureGroups causes, the rest are counted together last.
func TestFailureGroups(t *testing.T) {
	var f failureSet
	f.add("/par.0/10/agent.0", &errorInfo{Class: "terminal", Message: "boom"})
	f.add("/par.0/2/agent.0", &errorInfo{Class: "terminal", Message: "boom"})
	f.add("/par.0/1/agent.0", &errorInfo{Class: "transient", Message: "boom"})
	f.add("/par.0/3/agent.0", &errorInfo{Class: "terminal", Code: CodeSchema, Message: "no schema"})
	got := f.list()
	if len(got) != 3 || got[0].Count != 2 || got[0].FirstPath != "/par.0/2/agent.0" || got[2].Class != "schema" {
		t.Fatalf("groups %+v", got)
	}
	for i := range maxFailureGroups + 5 {
		f.add(fmt.Sprintf("/x/%d", i), &errorInfo{Class: "terminal", Message: fmt.Sprint("cause ", i)})
	}
	got = f.list()
	last := got[len(got)-1]
	if len(got) != maxFailureGroups+1 || last.Message != otherCauses || last.Count != 8 {
		t.Fatalf("%d groups, last %+v; want %d, the last counting the 8 causes past the cap", len(got), last, maxFailureGroups+1)
	}
}
