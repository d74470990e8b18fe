package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// initLine is a line of GODEBUG=inittrace=1: the package whose init ran,
// and what it allocated.
var initLine = regexp.MustCompile(`(?m)^init (\S+) @.* (\d+) bytes, (\d+) allocs$`)

// maxInitBytes is the most a package's initialization may allocate.
const maxInitBytes = 256 << 10

// Every dynworkflow process runs the initialization of every package it
// links, whatever the command: work done there is paid by --help, list,
// show and every run alike. The JSON Schema library compiled five drafts'
// meta-schemas in its init (10 ms of CPU and 1.7 MB in every process, a
// third of the CLI's start-up), which is why dynworkflow builds a patched
// copy of it (internal/third_party/jsonschema). This names any package
// that brings such work back.
func TestStartupInitializesLittle(t *testing.T) {
	cmd := exec.Command(e2etest.Binary(), "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dynworkflow --help: %v\n%s", err, stderr.String())
	}
	lines := initLine.FindAllStringSubmatch(stderr.String(), -1)
	if len(lines) < 20 {
		t.Fatalf("read %d package initializations from GODEBUG=inittrace=1, expected over a hundred; its format changed?\n%s", len(lines), stderr.String())
	}
	total := 0
	for _, l := range lines {
		n, _ := strconv.Atoi(l[2])
		total += n
		if n > maxInitBytes {
			t.Errorf("package %s allocates %d KB when it initializes, in every dynworkflow process (at most %d KB): make that work lazy", l[1], n>>10, maxInitBytes>>10)
		}
	}
	t.Logf("%d packages initialized, %d KB allocated", len(lines), total>>10)
}
