package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HomeEnv names the environment variable that overrides the default root.
const HomeEnv = "DYNAMIC_WORKFLOWS_HOME"

// DefaultRoot returns $DYNAMIC_WORKFLOWS_HOME if set, else ~/.pi/workflows,
// which keeps the layout shared with the Pi extension.
func DefaultRoot() (string, error) {
	if dir := os.Getenv(HomeEnv); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state root (set %s): %w", HomeEnv, err)
	}
	return filepath.Join(home, ".pi", "workflows"), nil
}

// Slug lowercases s and turns each run of characters other than ASCII
// letters and digits into one '-', trimmed, at most 40 bytes long, or is
// fallback when nothing is left: always a valid file name and git ref
// component.
func Slug(s, fallback string) string {
	const maxLen = 40
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9') {
			dash = b.Len() > 0
			continue
		}
		if dash && b.Len()+2 > maxLen || b.Len()+1 > maxLen {
			break
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return fallback
	}
	return b.String()
}
