//go:build !unix

package temporaltest

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
func runBuild(ctx context.Context, b builder, tmp string, _, log *os.File) error {
	out := filepath.Join(tmp, "out")
	cmd := exec.CommandContext(ctx, b.argv[0], append(b.argv[1:], out)...)
	cmd.Dir, cmd.Env = b.src, b.env
	cmd.Stdout, cmd.Stderr = log, log
	fmt.Fprintf(log, "temporaltest: building %s\n", b.path())
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("temporaltest: build %s in %s: %w", b.name, b.src, err)
	}
	return os.Rename(out, b.path())
}

func processAlive(int) bool { return true }
