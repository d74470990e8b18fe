package codex

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Codex reads a project's .codex/config.toml (and the rest of its .codex
// folder: hooks, rules, skills) when the user's own configuration marks
// the project trusted ([projects."/path"] trust_level = "trusted", which
// Codex writes when the user trusts a folder), and runs what it names, MCP
// servers and notify programs among them, outside its sandbox, under every
// sandbox policy. The file comes with the repository, or from an agent.
// Trust is read from $CODEX_HOME/config.toml alone: no -c override or flag
// of Codex 0.171 changes it.
//
// So a call whose user configuration trusts any project runs with a
// CODEX_HOME of its own (a shadow): a private directory whose config.toml
// is the user's without its projects table, and where every other entry
// of the user's CODEX_HOME (auth.json, skills, rules, prompts, ...) is a
// symbolic link to the original. Codex then reads and refreshes the
// user's login and finds the user's own skills and rules, while no
// project is trusted. Its databases and logs stay at their real paths
// (sqlite_home and log_dir point at the user's CODEX_HOME), and what it
// would create anew in the shadow (a session it does not keep) goes with
// the shadow when the call ends.

// shadowPrefix starts the name of every shadow, so that those a killed
// process left behind can be found and removed.
const shadowPrefix = "codex-home-"

// staleShadow is how old a left-behind shadow is before it is removed.
const staleShadow = 24 * time.Hour

// userHome is the CODEX_HOME a child would use: the last CODEX_HOME of
// env (the executor's configured environment), else ours, else ~/.codex.
func userHome(env []string) string {
	home := os.Getenv("CODEX_HOME")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			home = v
		}
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = filepath.Join(h, ".codex")
	}
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	return home
}

// shadowHome returns the CODEX_HOME for one call, and what removes it.
// It is the user's own ("" and a no-op) when the user's configuration
// trusts no project, or cannot be read (Codex then says why itself).
func shadowHome(env []string, scratch string) (string, func(), error) {
	none := func() {}
	real := userHome(env)
	if real == "" {
		return "", none, nil
	}
	data, err := os.ReadFile(filepath.Join(real, "config.toml"))
	if err != nil {
		return "", none, nil
	}
	var config map[string]any
	if err := toml.Unmarshal(data, &config); err != nil {
		return "", none, nil
	}
	if _, ok := config["projects"]; !ok {
		return "", none, nil
	}
	delete(config, "projects")
	for key, def := range map[string]string{"sqlite_home": real, "log_dir": filepath.Join(real, "log")} {
		v, ok := config[key].(string)
		switch {
		case !ok:
			config[key] = def
		case !filepath.IsAbs(v):
			config[key] = filepath.Join(real, v)
		}
	}
	text, err := toml.Marshal(config)
	if err != nil {
		return "", none, fmt.Errorf("codex: rewrite %s without its trusted projects: %w", filepath.Join(real, "config.toml"), err)
	}
	if scratch == "" {
		scratch = os.TempDir()
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return "", none, fmt.Errorf("codex: %w", err)
	}
	removeStale(scratch)
	dir, err := os.MkdirTemp(scratch, shadowPrefix)
	if err != nil {
		return "", none, fmt.Errorf("codex: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) } // removes the links, never what they point at
	entries, err := os.ReadDir(real)
	if err != nil {
		cleanup()
		return "", none, fmt.Errorf("codex: %w", err)
	}
	for _, e := range entries {
		if e.Name() == "config.toml" {
			continue
		}
		if err := os.Symlink(filepath.Join(real, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			cleanup()
			return "", none, fmt.Errorf("codex: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), text, 0o600); err != nil {
		cleanup()
		return "", none, fmt.Errorf("codex: %w", err)
	}
	return dir, cleanup, nil
}

// removeStale removes the shadows a killed process left in scratch.
func removeStale(scratch string) {
	entries, err := os.ReadDir(scratch)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), shadowPrefix) {
			continue
		}
		info, err := e.Info()
		if err == nil && time.Since(info.ModTime()) > staleShadow {
			if err := os.RemoveAll(filepath.Join(scratch, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
	}
}
