package agentcli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
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
	// Args are extra arguments, placed before the prompt's.
	Args []string
	// Env is added to the environment the child inherits from us.
	Env []string
	// Registry records live children so that a later start can reap them.
	Registry *proc.Registry
	// Grace is the wait between SIGTERM and SIGKILL on abort.
	Grace  time.Duration
	Logger *slog.Logger
}

// Base holds a CLI executor's configuration and implements what every
// one of them offers beside Run.
type Base struct {
	Config
	name          string
	defaultBinary string
}

// NewBase returns the base of executor name, whose binary is usually
// called defaultBinary.
func NewBase(name, defaultBinary string, cfg Config) Base {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return Base{Config: cfg, name: name, defaultBinary: defaultBinary}
}

// Name is the executor's name as scripts and --executor select it.
func (b *Base) Name() string { return b.name }

// BinaryName is the configured binary, or the CLI's usual name.
func (b *Base) BinaryName() string {
	if b.Binary != "" {
		return b.Binary
	}
	return b.defaultBinary
}

// LookPath finds the binary. A missing binary is a terminal failure: no
// retry will install it.
func (b *Base) LookPath() (string, error) {
	p, err := exec.LookPath(b.BinaryName())
	if err != nil {
		return "", &executors.Error{Class: executors.Terminal,
			Message: fmt.Sprintf("executor %s: %s not found (install it, or put it on PATH)", b.name, b.BinaryName()), Err: err}
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
