package temporal

import "github.com/dynworkflow/dynworkflow/engine/callpolicy"

// scope is a node of the run's scope tree inside the workflow: the call
// policy's (callpolicy.Scope), so both backends give a call the same
// identity.
type scope = callpolicy.Scope
