// Package clitest points the real agent CLIs at a fake model server in
// tests: it finds their binaries (skipping locally, failing under CI=true
// when one is missing) and writes each one's isolated configuration, so no
// test ever reads the user's config or talks to anything but 127.0.0.1.
package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The CLIs, by binary name.
const (
	Codex  = "codex"
	Claude = "claude"
	Pi     = "pi"
)

// Model is the model name the tests use: a slug Codex knows, so that it
// does not warn about unknown model metadata.
const Model = "gpt-5.5"

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
// environment that selects it. Every CLI gets its own HOME there.
func Env(name, baseURL, dir string) ([]string, error) {
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(baseURL, "/")
	switch name {
	case Codex:
		return codexEnv(base, dir, home)
	case Claude:
		return []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(dir, "claude"),
			"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=dummy",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_MAX_RETRIES=0"}, nil
	case Pi:
		return piEnv(base, dir, home)
	}
	return nil, fmt.Errorf("clitest: unknown CLI %q", name)
}

// codexEnv writes a CODEX_HOME whose provider is the fake server, with
// retries off, plugin sync (a git ls-remote to github.com) disabled, and
// no shell snapshot (a login shell per run, a third of codex's CPU here).
func codexEnv(base, dir, home string) ([]string, error) {
	codexHome := filepath.Join(dir, "codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`model = %q
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "Fake local"
base_url = %q
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[features]
plugins = false
shell_snapshot = false

[analytics]
enabled = false
`, Model, base+"/v1")
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		return nil, err
	}
	return []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "FAKE_API_KEY=dummy"}, nil
}

// piEnv writes a PI_CODING_AGENT_DIR with one provider, the fake server
// over chat completions, and retries off.
func piEnv(base, dir, home string) ([]string, error) {
	agentDir := filepath.Join(dir, "pi-agent")
	if err := os.MkdirAll(agentDir, 0o700); err != nil {
		return nil, err
	}
	models := map[string]any{"providers": map[string]any{
		"fake-openai": map[string]any{"baseUrl": base + "/v1", "api": "openai-completions", "apiKey": "dummy",
			"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
			"models": []any{map[string]any{"id": Model}}},
	}}
	settings := map[string]any{"retry": map[string]any{"enabled": false, "provider": map[string]any{"maxRetries": 0}}}
	for file, v := range map[string]any{"models.json": models, "settings.json": settings} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(agentDir, file), b, 0o600); err != nil {
			return nil, err
		}
	}
	return []string{"HOME=" + home, "PI_CODING_AGENT_DIR=" + agentDir, "PI_OFFLINE=1", "PI_TELEMETRY=0"}, nil
}

// PiModel is the --model value that selects the fake provider in Pi.
const PiModel = "fake-openai/" + Model
