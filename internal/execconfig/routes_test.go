package execconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/execconfig"
)

func TestLoadRoutes(t *testing.T) {
	project, user := t.TempDir(), filepath.Join(t.TempDir(), "routes.json")
	if err := os.MkdirAll(filepath.Join(project, ".dynworkflow"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(project, execconfig.RoutesFile), `{"routes": ["scan *=haiku", {"phase": "Verify", "model": "sonnet", "effort": "low"}]}`)
	write(user, `{"routes": ["scan *=opus"]}`)
	routes, err := execconfig.LoadRoutes(project, user)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 3 || routes[0].Model != "haiku" || routes[0].Source != execconfig.SourceProject ||
		routes[1].Phase != "Verify" || routes[1].Effort != "low" || routes[2].Source != execconfig.SourceUser {
		t.Errorf("routes %+v: want the project's two, then the user's", routes)
	}
	write(user, `{"routes": [
  "scan *=haiku",
  "no target"
]}`)
	if _, err := execconfig.LoadRoutes(project, user); err == nil || !strings.Contains(err.Error(), user+":3:") {
		t.Errorf("a bad route should be named by file and line: %v", err)
	}
	write(user, `{"rooutes": []}`)
	if _, err := execconfig.LoadRoutes(project, user); err == nil || !strings.Contains(err.Error(), user+":1:") {
		t.Errorf("an unknown key should be named by file and position: %v", err)
	}
}

func TestLoadPrices(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prices.json")
	tab, err := execconfig.LoadPrices(file) // none: the built-in table
	if err != nil || len(tab.Files) != 0 {
		t.Fatalf("no file: %v, %v", err, tab.Files)
	}
	if err := os.WriteFile(file, []byte(`{"models": {"qwen3-coder": {"input": 0.3, "cachedInput": 0.03, "output": 1.2}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err = execconfig.LoadPrices(file)
	if err != nil {
		t.Fatal(err)
	}
	if p, _, ok := tab.Lookup("qwen3-coder"); !ok || p.Output != 1.2 || len(tab.Files) != 1 {
		t.Errorf("the user's price was not taken: %+v %v", p, tab.Files)
	}
	if _, _, ok := tab.Lookup("sonnet"); !ok {
		t.Error("the built-in prices were lost")
	}
	if err := os.WriteFile(file, []byte(`{"models": {"m": {"input": -1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := execconfig.LoadPrices(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("a negative price should be refused, naming the file: %v", err)
	}
}
