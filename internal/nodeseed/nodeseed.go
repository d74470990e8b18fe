// Package nodeseed finds the Node runtime we are compatible with (npm
// @fish59fish/dynamic-workflows, pinned in .ci/run) for the tests that run
// it next to ours: it skips them where node or the package is missing, and
// fails them under CI=true, where .ci/run installs both.
package nodeseed

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Env names the installed package's directory; .ci/run sets it.
const Env = "DYNWORKFLOW_NODE_SEED"

// Seed is a way to run the Node runtime.
type Seed struct {
	Node string // the node binary
	Pkg  string // .../node_modules/@fish59fish/dynamic-workflows
}

// Find returns the Node runtime, or skips t (fails it under CI=true).
func Find(t testing.TB) Seed {
	t.Helper()
	pkg := os.Getenv(Env)
	if pkg == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		pkg = filepath.Join(cache, "dynworkflow-ci", "node-seed", "node_modules", "@fish59fish", "dynamic-workflows")
	}
	node, err := exec.LookPath("node")
	_, serr := os.Stat(filepath.Join(pkg, "dist", "standalone-cli.js"))
	if err != nil || serr != nil {
		msg := "the Node runtime is not installed: run .ci/run once, or npm install --prefix ~/.cache/dynworkflow-ci/node-seed @fish59fish/dynamic-workflows@0.1.0 (and have node on PATH)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: the Node runtime is required)")
		}
		t.Skip(msg)
	}
	return Seed{Node: node, Pkg: pkg}
}
