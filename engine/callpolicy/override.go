package callpolicy

import (
	"encoding/json"
	"fmt"
)

// Override changes one call of a run: a fork (see engine.Runtime.Fork)
// runs the call at Path again, with another prompt or none, or takes a
// given answer for it, while every call before it replays. It holds from
// execution Since on: answers of the call made before that are not
// replayed, while those made since are, by the usual rules, so a fork that
// is resumed does not run its changed call again.
type Override struct {
	Path  string `json:"path"`
	Since int    `json:"since"`
	// Prompt replaces the call's prompt (an agent call); nil keeps it.
	Prompt *string `json:"prompt,omitempty"`
	// Answer is given to the call instead of running it: an agent's
	// result, or a checkpoint's answer.
	Answer json.RawMessage `json:"answer,omitempty"`
}

// Check reports what is wrong with an override.
func (o Override) Check() error {
	switch {
	case o.Path == "" || o.Path[0] != '/':
		return fmt.Errorf("override: %q is not a call path", o.Path)
	case o.Prompt != nil && o.Answer != nil:
		return fmt.Errorf("override of %s: give a new prompt or an answer, not both", o.Path)
	case o.Answer != nil && !json.Valid(o.Answer):
		return fmt.Errorf("override of %s: the answer is not JSON", o.Path)
	}
	return nil
}

// override is the override of the call at path, if any.
func (x *Execution) override(path string) *Override {
	for i := range x.limits.Overrides {
		if o := &x.limits.Overrides[i]; o.Path == path && x.epoch >= o.Since {
			return o
		}
	}
	return nil
}

// overridden applies an override to the answer reuse found: an answer
// from before the override's execution does not stand.
func overridden(o *Override, prior *Answer) *Answer {
	if o != nil && prior != nil && prior.Epoch < o.Since {
		return nil
	}
	return prior
}
