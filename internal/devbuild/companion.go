package devbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// CompileCompanion compiles the Temporal companion (cmd/dynworkflow with
// -tags temporal) with -race into the Go build cache, as the CLI tests
// build it under go test -race: compiling the Temporal SDK takes minutes
// cold, and the tests' own build of it is then a link. Every prebuild
// does it, since the tests that use a prebuilt program run the companion.
func CompileCompanion(ctx context.Context, log io.Writer) error {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return errors.New("devbuild: cannot locate its own source")
	}
	fmt.Fprintln(log, "devbuild: compiling the race-enabled Temporal companion into the Go build cache")
	cmd := exec.CommandContext(ctx, "go", "build", "-race", "-tags", "temporal", "-o", os.DevNull, "./cmd/dynworkflow")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("devbuild: compile the companion: %w", err)
	}
	return nil
}
