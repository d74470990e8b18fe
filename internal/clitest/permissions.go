package clitest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// RunPermissions runs the real CLI against a fake model that asks for one
// tool call writing a file, under each permission policy, and checks what
// a user would: under workspace-write (the default, also what an empty
// policy means) the file is there with its content, inside the agent's
// directory, and a write to the directory's parent is refused; under
// read-only the file is not written, and the call's history shows the
// refusal; under full-access a write outside the directory goes through.
func RunPermissions(t *testing.T, s Suite) {
	Binary(t, s.CLI)
	tests := []struct {
		name        string
		permissions executors.Permissions
		scenario    fakemodel.Scenario
		// file is where the write would land, relative to the test's
		// directory (the agent works in its "work" subdirectory).
		file       string
		wantWrite  bool
		skipReason string
	}{
		{name: "default writes inside", scenario: fakemodel.Write, file: "work/" + fakemodel.WriteFile, wantWrite: true},
		{name: "workspace-write writes inside", permissions: executors.WorkspaceWrite, scenario: fakemodel.Write, file: "work/" + fakemodel.WriteFile, wantWrite: true},
		{name: "read-only refuses", permissions: executors.ReadOnly, scenario: fakemodel.Write, file: "work/" + fakemodel.WriteFile},
		{name: "workspace-write refuses outside", permissions: executors.WorkspaceWrite, scenario: fakemodel.WriteOutside, file: fakemodel.OutsideFile,
			skipReason: map[bool]string{true: s.CLI + "'s workspace-write sandbox lets agents write /tmp, where test directories live"}[s.TmpWritable]},
		{name: "read-only refuses outside", permissions: executors.ReadOnly, scenario: fakemodel.WriteOutside, file: fakemodel.OutsideFile},
		{name: "full-access writes outside", permissions: executors.FullAccess, scenario: fakemodel.WriteOutside, file: fakemodel.OutsideFile, wantWrite: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skipReason != "" {
				t.Skip(tc.skipReason)
			}
			t.Parallel()
			srv, reg := Serve(t)
			root := t.TempDir()
			work := filepath.Join(root, "work")
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			exec := s.New(Setup(t, s.CLI, srv.URL()), reg)
			req := executors.Request{RunID: "test", Path: "/0:agent", Prompt: "write a file " + fakemodel.Marker(tc.scenario),
				Model: s.Model, Dir: work, Permissions: tc.permissions, Attempt: 1}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := exec.Run(ctx, req, nil)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			t.Logf("answer %q; history %+v", res.Text, res.History)
			if !strings.HasPrefix(res.Text, fakemodel.WriteAnswer) {
				t.Fatalf("answer %q: the tool call did not come back to the model", res.Text)
			}
			got, err := os.ReadFile(filepath.Join(root, tc.file))
			switch {
			case tc.wantWrite && err != nil:
				t.Fatalf("the agent did not write %s: %v", tc.file, err)
			case tc.wantWrite && string(got) != fakemodel.WriteContent:
				t.Fatalf("%s holds %q, want %q", tc.file, got, fakemodel.WriteContent)
			case !tc.wantWrite && !errors.Is(err, os.ErrNotExist):
				t.Fatalf("the agent wrote %s under %s (err %v)", tc.file, req.Permissions.Or(executors.WorkspaceWrite), err)
			case !tc.wantWrite && !refused(res):
				t.Errorf("the history does not show the refusal: %+v", res.History)
			}
		})
	}
}

// refused reports whether a call's history shows a refused tool call: a
// tool result marked as an error, or (Codex reports no event for a
// refused patch) the agent's answer quoting the refusal.
func refused(res executors.Result) bool {
	for _, h := range res.History {
		if h.Kind == "tool_result" && h.IsError {
			return true
		}
		if h.Kind == "message" && h.Role == "assistant" && strings.HasPrefix(h.Text, fakemodel.WriteAnswer) &&
			strings.Contains(strings.ToLower(h.Text), "read-only") {
			return true
		}
	}
	return false
}
