package pi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// node finds Node, which Pi runs on: skipped locally without it, failed
// under CI=true.
func node(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is required (CI=true)")
		}
		t.Skip("node is not on PATH: install Node.js to test Pi's workspace guard")
	}
	return p
}

// TestWorkspaceGuard asks the guard Pi loads (the embedded file itself,
// under Node) about writes whose paths try to leave the working directory
// or reach the files that make programs run.
func TestWorkspaceGuard(t *testing.T) {
	bin := node(t)
	base := t.TempDir()
	work := filepath.Join(base, "app")
	outside := filepath.Join(base, "outside")
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	for _, d := range []string{work, outside, filepath.Join(work, "sub"), filepath.Join(base, "apple")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"dang":       "../outside/dang.txt",               // dangling, relative
		"absdang":    filepath.Join(elsewhere, "abs.txt"), // dangling, absolute, its directory missing
		"outdir":     outside,                             // a directory outside
		"sub/up":     "../../outside",                     // an ancestor that leaves
		"loop1":      "loop2",                             // a loop
		"loop2":      "loop1",                             // ...
		"inner":      "sub",                               // stays inside
		"chain":      "dang",                              // a link to a dangling link
		"dotdotlink": "sub/../../outside/x.txt",           // .. after a real directory
		"hooks":      ".git/hooks",                        // inside, to a protected place
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	workLink := filepath.Join(base, "worklink")
	if err := os.Symlink(work, workLink); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cwd, path string
		allowed   bool
	}{
		{work, "file.txt", true},
		{work, "sub/new/deeper/file.txt", true},
		{work, filepath.Join(work, "abs.txt"), true},
		{work, "inner/file.txt", true},
		{work, "..foo", true},
		{workLink, "file.txt", true},
		{work, "../outside/x.txt", false},
		{work, "sub/../../outside/x.txt", false},
		{work, "dang", false},
		{work, "absdang", false},
		{work, "chain", false},
		{work, "outdir/x.txt", false},
		{work, "sub/up/x.txt", false},
		{work, "loop1", false},
		{work, "dotdotlink", false},
		{work, filepath.Join(base, "apple", "x.txt"), false}, // shares the prefix "app"
		{work, filepath.Join(base, "aapp", "x.txt"), false},
		{"/tmp", "/ttmp/evil.txt", false}, // a missing top-level directory
		{work, ".git/hooks/pre-commit", false},
		{work, "sub/.git/config", false},
		{work, "hooks/post-checkout", false},
		{work, ".pi/extensions/pwn.js", false},
		{work, ".PI/extensions/pwn.js", false},
		{work, ".claude/settings.json", false},
		{work, ".codex/config.toml", false},
		{work, ".mcp.json", false},
		{work, ".dynworkflow/executors.json", false},
		{work, "~/x.txt", false},
		{work, "@../outside/x.txt", false},
	}
	guard := filepath.Join(t.TempDir(), "workspace_guard.mjs")
	if err := os.WriteFile(guard, workspaceGuard, 0o600); err != nil {
		t.Fatal(err)
	}
	type query struct{ Cwd, Path string }
	var qs []query
	for _, tc := range tests {
		qs = append(qs, query{tc.cwd, tc.path})
	}
	in, _ := json.Marshal(qs)
	// As Pi does: the extension registers its tool_call handler, which is
	// called with each write.
	script := `const ext = (await import(process.argv[1])).default;
let handler;
ext({ on: (event, h) => { if (event === "tool_call") handler = h; } });
const qs = JSON.parse(process.argv[2]);
const out = [];
for (const q of qs) {
  const r = await handler({ toolName: "write", input: { path: q.Path } }, { cwd: q.Cwd });
  out.push(r && r.block ? r.reason : "");
}
console.log(JSON.stringify(out));`
	out, err := exec.Command(bin, "--input-type=module", "-e", script, guard, string(in)).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var reasons []string
	if err := json.Unmarshal(out, &reasons); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	for i, tc := range tests {
		if got := reasons[i] == ""; got != tc.allowed {
			t.Errorf("write %q from %s: allowed = %v (%q), want %v", tc.path, strings.TrimPrefix(tc.cwd, base), got, reasons[i], tc.allowed)
		}
	}
}
