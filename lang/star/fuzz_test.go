package star

import (
	"errors"
	"testing"

	"github.com/dynworkflow/dynworkflow/lang"
)

// FuzzLoad loads arbitrary text as a Starlark workflow: the meta reader and
// the checks before a run must answer with a positioned error or a script
// whose meta has its required fields, never panic.
//
//	go test -run '^$' -fuzz FuzzLoad -fuzztime 10m ./lang/star
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"meta = {\"name\": \"n\", \"description\": \"d\"}\ndef main(args):\n    return 1\n",
		"meta = {\"name\": \"a\" + \"b\", \"description\": \"d\", \"phases\": [\"x\", {\"title\": \"y\"}]}\ndef main(args):\n    return agent(\"p\")\n",
		"meta = {\"name\": \"n\", \"name\": \"d\"}\ndef main(args): pass\n",
		"meta = {name: 1}\n",
		"meta = dict(name = \"n\")\ndef main(args): pass\n",
		"load(\"x.star\", \"y\")\nmeta = {\"name\": \"n\", \"description\": \"d\"}\ndef main(args): pass\n",
		"meta = {\"name\": \"n\", \"description\": (\"d\" + (\"e\"))}\nmain = lambda args: 1\n",
	} {
		f.Add(seed)
	}
	h := New()
	f.Fuzz(func(t *testing.T, text string) {
		s, err := h.Load(lang.Source{Path: "f.workflow.star", Text: []byte(text)})
		if err != nil {
			var le *lang.Error
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v (%T), want a *lang.Error", err, err)
			}
			return
		}
		if m := s.Meta(); m.Name == "" || m.Description == "" {
			t.Fatalf("Load accepted a meta without name or description: %+v", m)
		}
	})
}
