// Command prebuild builds the Temporal dev server the tests use into its
// cache, so that CI pays for a cold build once, outside any test timeout.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dynworkflow/dynworkflow/internal/temporaltest"
)

func main() {
	bin, err := temporaltest.Binary(context.Background(), os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
