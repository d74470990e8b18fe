package executors

import "time"

// Defaults are what an executor's configuration sets for the calls that do
// not set it themselves.
type Defaults struct {
	Model       string
	Effort      string
	Permissions Permissions
	// Timeout bounds one attempt; zero means none.
	Timeout time.Duration
	// IdleTimeout stops an attempt that makes no progress for that long;
	// zero leaves it to the built-in default, negative turns it off.
	IdleTimeout time.Duration
}

// Configurable is an executor with configured defaults. The engine
// resolves each call's model, effort, permissions and timeout against them
// before it runs the call, so that the journal records what the call ran
// with, and so that a changed default changes the call's fingerprint.
type Configurable interface {
	Defaults() Defaults
}

// DefaultsOf is e's configured defaults, or none.
func DefaultsOf(e Executor) Defaults {
	if c, ok := e.(Configurable); ok {
		return c.Defaults()
	}
	return Defaults{}
}

// Definition is how an executor was configured, as a run journals it: so
// that show can say what a call ran on, and so that resume can rebuild a
// command executor that was given on the command line and is not given
// again. Environment values are left out (they hold keys and tokens); their
// names say what was set.
type Definition struct {
	Name string `json:"name"`
	// Kind is the built-in executor it is ("codex", "claude-code", "pi",
	// "simulate") or "command".
	Kind string `json:"kind"`
	// Command is a command executor's template, word by word.
	Command     []string    `json:"command,omitempty"`
	Binary      string      `json:"binary,omitempty"`
	Args        []string    `json:"args,omitempty"`
	EnvNames    []string    `json:"envNames,omitempty"`
	Model       string      `json:"model,omitempty"`
	Effort      string      `json:"effort,omitempty"`
	Permissions Permissions `json:"permissions,omitempty"`
	TimeoutMs   int64       `json:"timeoutMs,omitempty"`
	// IdleTimeoutMs is the configured idle timeout; -1 means off.
	IdleTimeoutMs int64 `json:"idleTimeoutMs,omitempty"`
	// Settings are an executor's own settings as flags gave them (the
	// simulated executor's latency, failure rate and seed), so that a
	// resume keeps them when the flags are not given again.
	Settings map[string]string `json:"settings,omitempty"`
}

// Describer is an executor that can say how it is configured.
type Describer interface {
	Describe() Definition
}

// Describe is e's definition: what it says of itself, or its name.
func Describe(e Executor) Definition {
	if d, ok := e.(Describer); ok {
		return d.Describe()
	}
	return Definition{Name: e.Name(), Kind: e.Name()}
}

// Definitions describes every executor of the set, sorted by name.
func (s *Set) Definitions() []Definition {
	names := s.Names()
	defs := make([]Definition, 0, len(names))
	for _, n := range names {
		defs = append(defs, Describe(s.byName[n]))
	}
	return defs
}

// Accounted is an executor that can say which provider account its calls
// are billed to (see AccountOf).
type Accounted interface {
	Account() string
}

// AccountOf names the provider account e's calls are billed to, and so
// whose quota they spend: executors with the same account share one quota
// (engine/quota). It is the executor's own say, else its name.
func AccountOf(e Executor) string {
	if a, ok := e.(Accounted); ok {
		return a.Account()
	}
	return e.Name()
}
