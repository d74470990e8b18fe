package jsvm

import (
	"errors"
	"testing"

	"github.com/dynworkflow/dynworkflow/lang"
)

// FuzzLoad loads arbitrary text as a JavaScript workflow: the meta reader
// and the checks before a run must answer with a positioned error or a
// script whose meta has its required fields, never panic.
//
//	go test -run '^$' -fuzz FuzzLoad -fuzztime 10m ./jsvm
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		okMeta + "return 1",
		"export const meta = { name: 'a' + 'b' + 'c', description: `d`, phases: ['x', { title: 'y', detail: 'z' }] }\nreturn await agent('p')",
		"export const meta = { 'name': \"n\", description: -1 + 2, phases: [,] }",
		"export const meta = { name: 'n', description: 'd', ...x }",
		"/* c */ export const meta = { name: 'n', description: 'd' }; throw 42",
		"export const meta = { name: 'n', description: 'd' }\nimport x from 'y'",
		"export const meta = { name: 'é€😀', description: '\\u00e9' }\nwhile (true) {}",
		"export const meta = { name: 'n', description: 'd' + 1 }",
	} {
		f.Add(seed)
	}
	h := New()
	f.Fuzz(func(t *testing.T, text string) {
		s, err := h.Load(lang.Source{Path: "f.workflow.js", Text: []byte(text)})
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
