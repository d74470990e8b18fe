// Command prebuild builds what the Temporal tests need, outside any test's
// timeout, and prints the dev server's path: the Temporal dev server, into
// its cache, and the race-enabled Temporal companion, into the Go build
// cache. A build that another process already runs is waited for. Ctrl-C
// stops the build and leaves nothing of it behind.
package main

import (
	"github.com/dynworkflow/dynworkflow/internal/devbuild"
	"github.com/dynworkflow/dynworkflow/internal/temporaltest"
)

func main() { devbuild.Prebuild(temporaltest.Binary) }
