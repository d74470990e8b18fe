// Command fakemodel serves the fake model server of package fakemodel on
// 127.0.0.1 until interrupted, for trying an agent CLI by hand:
//
//	go run ./internal/fakemodel/cmd/fakemodel -env codex
//
// It prints the base URL, and with -env the environment (and writes the
// config files) that point that CLI at the server.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
)

func main() {
	cli := flag.String("env", "", "print the environment for this CLI: codex, claude or pi")
	dir := flag.String("dir", "", "where to write the CLI's config (default: a new temporary directory)")
	logFile := flag.String("log", "", "append every request (path, scenario, body) to this file as JSON lines")
	flag.Parse()
	var opts fakemodel.Options
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		opts.Log = f
	}
	srv, err := fakemodel.Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer srv.Close()
	fmt.Println("fake model server at", srv.URL())
	if *cli != "" {
		d := *dir
		if d == "" {
			if d, err = os.MkdirTemp("", "fakemodel-"+*cli+"-"); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		env, err := fakemodel.ClientEnv(*cli, srv.URL(), d)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("export " + strings.Join(quoteAll(env), " "))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	<-sig
	fmt.Println("sent usage:", srv.Sent())
}

func quoteAll(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out[i] = k + "='" + strings.ReplaceAll(v, "'", `'\''`) + "'"
	}
	return out
}
