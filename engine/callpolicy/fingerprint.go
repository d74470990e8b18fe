package callpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// fingerprint hashes what determines a call's answer. Label and phase are
// cosmetic and left out, so renaming a label never re-runs an agent.
type fingerprintInput struct {
	Kind      string
	Prompt    string
	Executor  string
	Model     string
	Effort    string
	AgentType string
	Isolation string
	// Permissions changes what an agent can do, so a call run read-only
	// and the same call run with writes allowed are different calls. It
	// is hashed only when not workspace-write, the default, so that the
	// fingerprints of runs journaled before policies existed still match.
	Permissions executors.Permissions
	Schema      []byte // canonical JSON
}

func fingerprint(in fingerprintInput) string {
	h := sha256.New()
	field := func(h hash.Hash, s string) {
		var n [8]byte
		l := len(s)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(h, in.Kind)
	field(h, in.Prompt)
	field(h, in.Executor)
	field(h, in.Model)
	field(h, in.Effort)
	field(h, in.AgentType)
	field(h, in.Isolation)
	field(h, string(in.Schema))
	if in.Permissions != "" && in.Permissions != executors.WorkspaceWrite {
		field(h, string(in.Permissions))
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:16])
}

// AgentFingerprint is the fingerprint of an agent() call: what determines
// its answer. s is what the call runs with, as Resolve fixed it (a call
// whose configured model changed is another call); canonicalSchema is the
// canonical JSON of its schema, or nil.
func AgentFingerprint(prompt string, s Settings, opts lang.AgentOptions, canonicalSchema []byte) string {
	return fingerprint(fingerprintInput{Kind: "agent", Prompt: prompt, Executor: s.Executor, Model: s.Model,
		Effort: s.Effort, AgentType: opts.AgentType, Isolation: opts.Isolation,
		Permissions: s.Permissions, Schema: canonicalSchema})
}

// CheckpointFingerprint is the fingerprint of a checkpoint() call.
func CheckpointFingerprint(req lang.CheckpointRequest) string {
	shape, _ := json.Marshal(struct {
		Kind    lang.CheckpointKind `json:"kind"`
		Choices []string            `json:"choices,omitempty"`
		Default json.RawMessage     `json:"default,omitempty"`
	}{req.Kind, req.Choices, req.Default})
	return fingerprint(fingerprintInput{Kind: "checkpoint", Prompt: req.Prompt, Schema: shape})
}
