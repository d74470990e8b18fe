// Command prebuild builds the OpenTelemetry Collector the tracing tests use
// into its cache, outside any test's timeout, and prints its path. A build
// that another process already runs is waited for. Ctrl-C stops the build
// and leaves nothing of it behind.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/dynworkflow/dynworkflow/internal/collectortest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bin, err := collectortest.Build(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
