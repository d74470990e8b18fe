package agentcli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// Config is what every CLI executor is configured with.
type Config struct {
	// Binary is the program to run: a path, or a name looked up on PATH
	// at each call. Empty means the CLI's usual name.
	Binary string
	// Args are extra arguments, placed before the call's own.
	Args []string
	// Env is added to the environment the child inherits from us.
	Env []string
	// Model, Effort, Permissions and Timeout are the defaults of calls that
	// do not set them (see executors.Defaults). The engine resolves them
	// before it calls Run; Run fills in the first three for callers that
	// do not (WithDefaults).
	Model       string
	Effort      string
	Permissions executors.Permissions
	Timeout     time.Duration
	// IdleTimeout is the calls' idle timeout: zero leaves the built-in
	// default, negative turns it off.
	IdleTimeout time.Duration
	// Registry records live children so that a later start can reap them.
	Registry *proc.Registry
	// Scratch is a private directory of ours, outside the system's
	// temporary directory, for what a call needs on disk beside the
	// child (a CLI's configuration directory of its own); empty means the
	// temporary directory.
	Scratch string
	// Grace is the wait between SIGTERM and SIGKILL on abort.
	Grace  time.Duration
	Logger *slog.Logger
}

// Fixes tell the user how to make an executor usable again, by cause.
type Fixes struct {
	// Install is the fix for a missing binary.
	Install string
	// Login is the fix for credentials the CLI lacks or the provider refuses.
	Login string
	// Model is the fix for a model that does not exist.
	Model string
}

// Base holds a CLI executor's configuration and implements what every
// one of them offers beside Run.
type Base struct {
	Config
	name          string
	kind          string
	defaultBinary string
	fixes         Fixes
}

// NewBase returns the base of executor name, of the given kind (the
// built-in it is, or "command"), whose binary is usually called
// defaultBinary.
func NewBase(name, kind, defaultBinary string, fixes Fixes, cfg Config) Base {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return Base{Config: cfg, name: name, kind: kind, defaultBinary: defaultBinary, fixes: fixes}
}

// Name is the executor's name as scripts and --executor select it.
func (b *Base) Name() string { return b.name }

// Defaults are the configured defaults of calls.
func (b *Base) Defaults() executors.Defaults {
	return executors.Defaults{Model: b.Model, Effort: b.Effort, Permissions: b.Permissions, Timeout: b.Timeout, IdleTimeout: b.IdleTimeout}
}

// WithDefaults fills in the request's model, effort and permissions from
// the configuration where the request leaves them empty.
func (b *Base) WithDefaults(req executors.Request) executors.Request {
	if req.Model == "" {
		req.Model = b.Model
	}
	if req.Effort == "" {
		req.Effort = b.Effort
	}
	if req.Permissions == "" {
		req.Permissions = b.Permissions
	}
	return req
}

// Describe is the executor's definition, environment values left out.
func (b *Base) Describe() executors.Definition {
	d := executors.Definition{Name: b.name, Kind: b.kind, Binary: b.Binary, Args: b.Args, Model: b.Model, Effort: b.Effort,
		Permissions: b.Permissions, TimeoutMs: b.Timeout.Milliseconds(), IdleTimeoutMs: b.IdleTimeout.Milliseconds()}
	if b.IdleTimeout < 0 {
		d.IdleTimeoutMs = -1
	}
	for _, kv := range b.Env {
		if k, _, ok := strings.Cut(kv, "="); ok {
			d.EnvNames = append(d.EnvNames, k)
		}
	}
	return d
}

// credentialVars are the variables of our environment that say which
// account a CLI uses: its configuration and login directories, API keys,
// and the endpoint.
var credentialVars = []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL",
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"}

// Account names the account the CLI's calls are billed to: its kind and
// a hash of what selects the account (the binary, the configured
// environment and arguments, and the credential variables it inherits),
// so that every run on the machine that uses the same login shares one
// quota. Nothing secret is kept: only the hash. A command executor's name
// is part of it: two commands are two services.
func (b *Base) Account() string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(b.kind)
	if b.kind == "command" {
		field(b.name)
	}
	field(b.BinaryName())
	for _, a := range b.Args {
		field(a)
	}
	env := append([]string(nil), b.Env...)
	for _, k := range credentialVars {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	sort.Strings(env)
	for _, kv := range env {
		field(kv)
	}
	return b.kind + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Unavailable is the error of an executor that cannot serve any call.
// cause is CauseLogin, CauseModel or "" (a missing binary); the fix is the
// executor's own for that cause.
func (b *Base) Unavailable(cause, msg string, err error) *executors.Error {
	fix := b.fixes.Install
	switch cause {
	case CauseLogin:
		fix = b.fixes.Login
	case CauseModel:
		fix = b.fixes.Model
	}
	return &executors.Error{Class: executors.Unavailable, Message: msg, Fix: fix, Err: err}
}

// BinaryName is the configured binary, or the CLI's usual name.
func (b *Base) BinaryName() string {
	if b.Binary != "" {
		return b.Binary
	}
	return b.defaultBinary
}

// LookPath finds the binary. A missing binary makes the executor
// unavailable: no retry will install it, and every call would fail alike.
func (b *Base) LookPath() (string, error) {
	p, err := exec.LookPath(b.BinaryName())
	if err != nil {
		return "", b.Unavailable("", fmt.Sprintf("%s not found", b.BinaryName()), err)
	}
	return p, nil
}

// Version runs the binary with --version and returns its first line.
func (b *Base) Version(ctx context.Context) (string, error) {
	p, err := b.LookPath()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var first string
	ex, err := proc.Run(ctx, proc.Spec{Path: p, Args: []string{"--version"}, Env: b.environ(), Grace: time.Second},
		func(line []byte) {
			if first == "" {
				first = strings.TrimSpace(string(line))
			}
		})
	if err != nil {
		return "", err
	}
	if first == "" {
		// Pi prints its version to standard error.
		first, _, _ = strings.Cut(ex.Stderr, "\n")
	}
	if !ex.Success() {
		return first, fmt.Errorf("%s --version: %s", p, ex)
	}
	return first, nil
}

// environ is our environment plus the configured additions.
func (b *Base) environ() []string {
	if len(b.Env) == 0 {
		return nil
	}
	return append(os.Environ(), b.Env...)
}
