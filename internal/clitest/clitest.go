// Package clitest points the real agent CLIs at a fake model server in
// tests: it finds their binaries (skipping locally, failing under CI=true
// when one is missing) and writes each one's isolated configuration, so no
// test ever reads the user's config or talks to anything but 127.0.0.1.
package clitest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors/proc"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

// The CLIs, by binary name.
const (
	Codex  = fakemodel.Codex
	Claude = fakemodel.Claude
	Pi     = fakemodel.Pi
)

// Model is the model name the tests use.
const Model = fakemodel.Model

// Binary returns the path of a CLI. When it is not on PATH the test is
// skipped with a note on how to install it, or fails under CI=true,
// where .ci/run installs every CLI.
func Binary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s is not on PATH: run .ci/run once, or put ${XDG_CACHE_HOME:-$HOME/.cache}/dynworkflow-ci/npm/node_modules/.bin on PATH", name)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: the real CLIs are required)")
	}
	t.Skip(msg)
	return ""
}

// Setup writes the isolated configuration of CLI name for the server at
// baseURL into a new temporary directory and returns the environment
// variables to add to the child's.
func Setup(t testing.TB, name, baseURL string) []string {
	t.Helper()
	env, err := Env(name, baseURL, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// Env writes the configuration of CLI name into dir and returns the
// environment that selects it (see fakemodel.ClientEnv).
func Env(name, baseURL, dir string) ([]string, error) {
	return fakemodel.ClientEnv(name, baseURL, dir)
}

// PiModel is the --model value that selects the fake provider in Pi.
const PiModel = fakemodel.PiModel

// Serve starts a fake model server and opens a registry for the CLI's
// processes, both for the length of t: what every real-CLI call runs
// against.
func Serve(t testing.TB) (*fakemodel.Server, *proc.Registry) {
	t.Helper()
	srv, err := fakemodel.Start(fakemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	reg, err := proc.OpenRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, reg
}
