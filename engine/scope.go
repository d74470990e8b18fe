package engine

import "github.com/dynworkflow/dynworkflow/engine/callpolicy"

// scope is a node of a run's scope tree. It is the call policy's (see
// callpolicy.Scope), so that both backends give a call the same identity.
type scope = callpolicy.Scope
