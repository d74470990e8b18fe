package fakemodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The CLIs ClientEnv configures, by binary name.
const (
	Codex  = "codex"
	Claude = "claude"
	Pi     = "pi"
)

// Model is the model name the fake server is asked for: a slug Codex
// knows, so that it does not warn about unknown model metadata.
const Model = "gpt-5.5"

// ClientEnv writes the configuration of CLI name (Codex, Claude or Pi)
// for the server at baseURL into dir, and returns the environment that
// selects it: every CLI gets its own HOME and configuration directory
// there, so nothing of the user's is read, and every request goes to
// 127.0.0.1.
func ClientEnv(name, baseURL, dir string) ([]string, error) {
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
	return nil, fmt.Errorf("fakemodel: unknown CLI %q (codex, claude or pi)", name)
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
