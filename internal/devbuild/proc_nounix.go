//go:build !unix

package devbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// buildsLock is false: without flock, concurrent builds both finish and
// the second rename replaces the first program with an identical one,
// and nothing can tell a killed build's directory from a running one's.
const buildsLock = false

func lockFile(_ context.Context, path string, _ func()) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}

// runBuild runs b's build into tmp and renames the output into place.
func runBuild(ctx context.Context, b Builder, tmp string, _, log *os.File) error {
	out := filepath.Join(tmp, "out")
	cmd := exec.CommandContext(ctx, b.Argv[0], append(b.Argv[1:], out)...)
	cmd.Dir, cmd.Env = b.Src, b.Env
	cmd.Stdout, cmd.Stderr = log, log
	fmt.Fprintf(log, "devbuild: building %s\n", b.Path())
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("devbuild: build %s in %s: %w", b.Name, b.Src, err)
	}
	return os.Rename(out, b.Path())
}

func processAlive(int) bool { return true }
