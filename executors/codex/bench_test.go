package codex_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/codex"
	"github.com/dynworkflow/dynworkflow/executors/proc"
)

// fastCodex is the research's bin-fast/codex: a bash script that reads
// the prompt and prints a three-event codex stream, with no Node or Rust
// start-up, so that what is measured around it is ours.
const fastCodex = `#!/bin/bash
if [ "$1" = "--version" ]; then echo "codex-cli 0.0.0 (fast-fake)"; exit 0; fi
while IFS= read -r line; do last=$line; done
[ -n "$line" ] && last=$line
last=${last//\\/\\\\}; last=${last//\"/\\\"}; last=${last:0:80}
printf '{"type":"thread.started","thread_id":"fast-%s"}\n{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ECHO: %s"}}\n{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}\n' "$$" "$last"
`

// BenchmarkCallOverhead measures what the codex executor adds to a call
// beyond the child's own run: each iteration runs the fake codex once
// directly (os/exec, output discarded) and once through the executor
// (process group, registry file, stdin, line parsing, result), and
// reports both and their difference. The target is at most 5 ms.
func BenchmarkCallOverhead(b *testing.B) {
	dir := b.TempDir()
	script := filepath.Join(dir, "codex")
	if err := os.WriteFile(script, []byte(fastCodex), 0o755); err != nil {
		b.Fatal(err)
	}
	reg, err := proc.OpenRegistry(filepath.Join(dir, "children"), nil)
	if err != nil {
		b.Fatal(err)
	}
	e := codex.New(agentcli.Config{Binary: script, Registry: reg})
	req := executors.Request{RunID: "bench", Path: "/0:agent", Prompt: "review the change in file.go", Dir: dir, Attempt: 1}
	args, cleanup, err := codex.Args(req)
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	ctx := context.Background()
	var direct, through time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cmd := exec.Command(script, args...)
		cmd.Dir, cmd.Stdin, cmd.Stdout = dir, bytes.NewReader([]byte(req.Prompt)), io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := e.Run(ctx, req, func(executors.Progress) {})
		if err != nil || res.Text == "" {
			b.Fatalf("run: %v (%q)", err, res.Text)
		}
		direct += t1.Sub(t0)
		through += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Microseconds())/n/1000, "child-ms/call")
	b.ReportMetric(float64(through.Microseconds())/n/1000, "executor-ms/call")
	b.ReportMetric(float64((through-direct).Microseconds())/n/1000, "overhead-ms/call")
}
