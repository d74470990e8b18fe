package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func TestShadowHome(t *testing.T) {
	real := t.TempDir()
	env := []string{"CODEX_HOME=" + real}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(real, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("auth.json", `{"OPENAI_API_KEY":"k"}`)
	write("config.toml", "model = \"m\"\n")
	if home, _, err := shadowHome(env, t.TempDir()); home != "" || err != nil {
		t.Fatalf("a configuration that trusts no project: shadow %q, %v; want the user's own", home, err)
	}
	write("config.toml", "model = \"m\"\nsqlite_home = \"db\"\n[projects.\"/srv/app\"]\ntrust_level = \"trusted\"\n[mcp_servers.mine]\ncommand = \"mine\"\n")
	scratch := t.TempDir()
	home, remove, err := shadowHome(env, scratch)
	if err != nil || home == "" || !strings.HasPrefix(home, scratch) {
		t.Fatalf("shadowHome = %q, %v; want a shadow in %s", home, err, scratch)
	}
	var got map[string]any
	b, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil || toml.Unmarshal(b, &got) != nil {
		t.Fatalf("the shadow's config.toml: %v\n%s", err, b)
	}
	if _, ok := got["projects"]; ok {
		t.Error("the shadow's configuration still trusts projects")
	}
	if got["model"] != "m" || got["mcp_servers"] == nil || got["sqlite_home"] != filepath.Join(real, "db") || got["log_dir"] != filepath.Join(real, "log") {
		t.Errorf("the shadow's configuration is not the user's: %v", got)
	}
	if target, err := os.Readlink(filepath.Join(home, "auth.json")); err != nil || target != filepath.Join(real, "auth.json") {
		t.Errorf("auth.json in the shadow: %q, %v", target, err)
	}
	remove()
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the shadow is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, "auth.json")); err != nil {
		t.Errorf("removing the shadow removed the user's login: %v", err)
	}
}
