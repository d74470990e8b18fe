// Command spawnfloor measures the floor under any runtime that drives an
// agent CLI as a child process: it spawns a command n times at a given
// concurrency, feeding each a prompt on stdin and reading its output, and
// does nothing else. A runtime cannot be faster than this on the same
// machine, so bench/executors.sh prints it beside the runtimes it compares.
//
//	spawnfloor -n 1000 -c 16 -- codex exec --json -
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "how many children")
	c := flag.Int("c", 16, "how many at once")
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: spawnfloor [-n N] [-c C] -- COMMAND [ARGS...]")
		os.Exit(64)
	}
	start := time.Now()
	slots := make(chan struct{}, *c)
	errs := make(chan error, *n)
	var wg sync.WaitGroup
	for i := range *n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin = bytes.NewReader(fmt.Appendf(nil, "parallel task %d\n", i))
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		fmt.Fprintln(os.Stderr, "spawnfloor:", err)
		os.Exit(1)
	}
	fmt.Printf("wall_ms=%.1f\n", float64(time.Since(start).Microseconds())/1000)
}
