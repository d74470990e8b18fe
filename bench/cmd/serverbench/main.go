// Command serverbench measures the runtime server for bench/server.sh. It
// prints figures and never asserts a timing.
//
//	serverbench populate -state DIR -project DIR -runs 1000
//	serverbench overview -descriptor runtime.json -rate 200 -duration 10s
//	serverbench sse -descriptor runtime.json -clients 200 -agents 1000
//
// populate creates finished runs on disk in process (fast); overview paces
// GET /api/overview at a fixed rate and reports latency percentiles; sse
// attaches clients, starts a fan-out run, checks that every client saw
// every event exactly once, and reports the server's RSS growth per
// client (read from /proc, so Linux only).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: serverbench populate|overview|sse [flags]")
		os.Exit(64)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	state := fs.String("state", "", "state root (populate)")
	project := fs.String("project", "", "project directory (populate)")
	runs := fs.Int("runs", 1000, "runs to create (populate)")
	desc := fs.String("descriptor", "", "the server's runtime.json")
	rate := fs.Int("rate", 200, "requests per second (overview)")
	duration := fs.Duration("duration", 10*time.Second, "how long to send requests (overview)")
	clients := fs.Int("clients", 200, "SSE clients (sse)")
	agents := fs.Int("agents", 1000, "agents of the run the clients follow (sse)")
	_ = fs.Parse(os.Args[2:])
	ctx := context.Background()
	var err error
	switch os.Args[1] {
	case "populate":
		err = populate(ctx, *state, *project, *runs)
	case "overview":
		err = overview(ctx, *desc, *rate, *duration)
	case "sse":
		err = sse(ctx, *desc, *clients, *agents)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serverbench:", err)
		os.Exit(1)
	}
}
