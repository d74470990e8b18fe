// Command prebuild builds what the tracing tests need, outside any test's
// timeout, and prints the collector's path: the OpenTelemetry Collector, into
// its cache, and the race-enabled Temporal companion, into the Go build
// cache. A build that another process already runs is waited for. Ctrl-C
// stops the build and leaves nothing of it behind.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/dynworkflow/dynworkflow/internal/collectortest"
	"github.com/dynworkflow/dynworkflow/internal/devbuild"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bin, err := collectortest.Build(ctx, os.Stderr)
	if err == nil {
		err = devbuild.CompileCompanion(ctx, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
