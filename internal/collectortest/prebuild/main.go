// Command prebuild builds the OpenTelemetry Collector the tracing tests use
// into its cache, so that no test pays for a build inside its timeout.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dynworkflow/dynworkflow/internal/collectortest"
)

func main() {
	bin, err := collectortest.Build(context.Background(), os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
