// Command temporaldev runs a real Temporal server for dynworkflow's tests: the embeddable dev server
// from go.temporal.io/server/temporaltest, with SQLite in memory, listening on a loopback port.
//
// It lives in its own Go module so the product's go.mod never pulls the server and its large
// dependency tree in; the tests build it into a cache outside the repository when it is missing.
//
// On start it prints one JSON line to stdout, {"address":"127.0.0.1:PORT","namespace":"NS"}, and it
// serves until its stdin is closed or it receives SIGINT or SIGTERM, so a test that dies also takes
// its server down.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/temporaltest"
)

func main() {
	ts := temporaltest.NewServer()
	defer ts.Stop()

	line, err := json.Marshal(struct {
		Address   string `json:"address"`
		Namespace string `json:"namespace"`
	}{ts.GetFrontendHostPort(), ts.GetDefaultNamespace()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporaldev:", err)
		os.Exit(1)
	}
	fmt.Println(string(line))

	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
}
