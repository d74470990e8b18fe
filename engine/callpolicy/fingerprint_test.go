package callpolicy

import (
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
)

// TestFingerprintPermissions: a policy other than the default is part of a
// call's identity; the default adds nothing, so journals written before
// policies existed still replay.
func TestFingerprintPermissions(t *testing.T) {
	base := fingerprintInput{Kind: "agent", Prompt: "p", Executor: "codex"}
	withDefault, readOnly := base, base
	withDefault.Permissions = executors.WorkspaceWrite
	readOnly.Permissions = executors.ReadOnly
	if fingerprint(withDefault) != fingerprint(base) {
		t.Error("workspace-write changed the fingerprint of a call")
	}
	if fingerprint(readOnly) == fingerprint(base) {
		t.Error("read-only did not change the fingerprint of a call")
	}
}
