// Command prebuild builds what the tracing tests need, outside any test's
// timeout, and prints the collector's path: the OpenTelemetry Collector, into
// its cache, and the race-enabled Temporal companion, into the Go build
// cache. A build that another process already runs is waited for. Ctrl-C
// stops the build and leaves nothing of it behind.
package main

import (
	"github.com/dynworkflow/dynworkflow/internal/collectortest"
	"github.com/dynworkflow/dynworkflow/internal/devbuild"
)

func main() { devbuild.Prebuild(collectortest.Build) }
