package star

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

// TestReadFileBundle loads a script whose helper exists only in memory, as
// a run on another machine does from the script's bundle, and gets the same
// hash as the same files on disk would give.
func TestReadFileBundle(t *testing.T) {
	main := "load(\"lib/a.star\", \"A\")\nmeta = {\"name\": \"m\", \"description\": \"d\"}\ndef main(args):\n    return A\n"
	files := map[string]string{"/nowhere/lib/a.star": "A = 41 + 1\n"}
	var asked []string
	read := func(path string) ([]byte, error) {
		asked = append(asked, path)
		text, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("%s is not in the bundle: %w", path, fs.ErrNotExist)
		}
		return []byte(text), nil
	}
	s, err := New().Load(lang.Source{Path: "/nowhere/m.workflow.star", Text: []byte(main), ReadFile: read})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "/nowhere/lib/a.star" {
		t.Errorf("ReadFile was asked for %v", asked)
	}
	out, err := runScript(t, s, langtest.NewEnv())
	if err != nil || string(out) != "42" {
		t.Fatalf("result %s, error %v", out, err)
	}

	delete(files, "/nowhere/lib/a.star")
	_, err = New().Load(lang.Source{Path: "/nowhere/m.workflow.star", Text: []byte(main), ReadFile: read})
	if err == nil || !strings.Contains(err.Error(), "/nowhere/m.workflow.star:1:6") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a file missing from the bundle gave %v", err)
	}
}
