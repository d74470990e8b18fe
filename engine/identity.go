package engine

import (
	"encoding/json"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// The functions here let another execution backend (engine/temporal) give
// calls the same identities this engine does, so that both backends show,
// replay and resume a run by the same rules.

// AgentFingerprint is the fingerprint of an agent() call: what determines
// its answer. executor is the one that runs it (the option, else the
// run's default); opts carries the call's model, effort and permissions as
// resolved (option, run, configuration); canonicalSchema is
// Schema.Canonical of its schema, or nil.
func AgentFingerprint(prompt, executor string, opts lang.AgentOptions, canonicalSchema []byte) string {
	return fingerprint(fingerprintInput{Kind: "agent", Prompt: prompt, Executor: executor, Model: opts.Model,
		Effort: opts.Effort, AgentType: opts.AgentType, Isolation: opts.Isolation,
		Permissions: executors.Permissions(opts.Permissions), Schema: canonicalSchema})
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

// ChildFrame is the path element of a child workflow's frame: the
// workflow() call's element ("wf.0") and the child's name, made path-safe.
func ChildFrame(elem, name string) string { return elem + ":" + pathSafe(name) }

// Schema is a compiled JSON Schema of an agent() call.
type Schema struct{ c *compiledSchema }

// CompileSchema compiles raw, or returns nil for no schema. Its errors are
// the ones a script sees for a bad schema.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	var cache schemaCache
	c, err := cache.get(raw)
	if c == nil || err != nil {
		return nil, err
	}
	return &Schema{c}, nil
}

// Canonical is the schema re-encoded with sorted keys, as fingerprints use it.
func (s *Schema) Canonical() []byte { return s.c.canonical }

// Validate parses an agent's answer as JSON (tolerating a code fence or
// prose around it) and checks it against the schema.
func (s *Schema) Validate(answer string) (json.RawMessage, error) { return s.c.validate(answer) }

// RepairPrompt is the prompt that asks an agent again after an answer
// failed the schema.
func RepairPrompt(prompt string, verr error, schema json.RawMessage) string {
	return repairPrompt(prompt, verr, schema)
}

// LessPath orders call paths as show lists them: element by element, with
// numbers compared as numbers.
func LessPath(a, b string) bool { return lessPath(a, b) }

// ExecutionEnd is how an execution ended, as Detail reports it.
type ExecutionEnd = endInfo
