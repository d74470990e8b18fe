package executors

import (
	"fmt"
	"strings"
)

// Permissions is what an agent may change on the machine: a policy that
// each executor maps onto its CLI's own controls (a sandbox, a tool set, a
// permission mode). The mapping of every built-in executor is in its
// package documentation and in the README.
type Permissions string

// The policies.
const (
	// WorkspaceWrite, the default, lets the agent edit files inside its
	// working directory and nothing outside it.
	WorkspaceWrite Permissions = "workspace-write"
	// ReadOnly lets the agent read and search, and change nothing.
	ReadOnly Permissions = "read-only"
	// FullAccess lifts every restriction the CLI can lift: for machines
	// that are themselves a sandbox (a container, a throwaway VM).
	FullAccess Permissions = "full-access"
)

// PermissionNames lists the policies, the default first.
var PermissionNames = []string{string(WorkspaceWrite), string(ReadOnly), string(FullAccess)}

// ParsePermissions reads a policy name; "" is "".
func ParsePermissions(s string) (Permissions, error) {
	switch p := Permissions(s); p {
	case "", WorkspaceWrite, ReadOnly, FullAccess:
		return p, nil
	}
	return "", fmt.Errorf("unknown permissions %q: use %s", s, strings.Join(PermissionNames, ", "))
}

// Or returns p, or def when p is empty.
func (p Permissions) Or(def Permissions) Permissions {
	if p == "" {
		return def
	}
	return p
}

// readOnlyAgentTypes are the agent types that only look: Claude Code's
// built-in Explore and Plan agents. A call of one of these types runs
// read-only unless it sets permissions itself.
var readOnlyAgentTypes = map[string]bool{"explore": true, "plan": true}

// AgentTypePermissions is the policy an agentType implies, or "" when it
// implies none.
func AgentTypePermissions(agentType string) Permissions {
	if readOnlyAgentTypes[strings.ToLower(agentType)] {
		return ReadOnly
	}
	return ""
}
