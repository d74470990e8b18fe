//go:build linux

package main_test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// While a run waits on its agents, neither of its processes keeps mapped
// the pages of the binary that only start-up used: the runtime gives them
// back once its run has started, and the ancestor, which only waits, once
// it has started the runtime. What `ps` and `top` show of them is what
// they use.
func TestARunGivesBackTheBinarysStartupPages(t *testing.T) {
	e := e2etest.NewEnv(t)
	e.Environ = append(e.Environ, "DYNWORKFLOW_DEBUG=1")
	e.Write("slow.workflow.js", `export const meta = { name: 'slow', description: 'one slow agent' }
return await agent('take your time')`)
	p := e.Start("run", "slow.workflow.js", "--simulate-latency", "10m", "--json")
	defer func() {
		p.Signal(syscall.SIGKILL)
		<-p.Exited
	}()
	released := regexp.MustCompile(`start-up is over; (\d+) KB of the executable unmapped`)
	var startup int64
	e2etest.WaitUntil(t, "the runtime to say what it gave back", func() bool {
		m := released.FindStringSubmatch(p.Stderr.String())
		if m == nil {
			return false
		}
		startup, _ = strconv.ParseInt(m[1], 10, 64)
		return true
	})
	if startup < 1024 {
		t.Fatalf("the runtime gave back %d KB of the binary; start-up maps megabytes of it", startup)
	}
	ancestor := p.Cmd.Process.Pid
	kids := childrenOf(ancestor)
	if len(kids) != 1 {
		t.Fatalf("the ancestor %d has children %v, want its runtime alone", ancestor, kids)
	}
	runtime := kids[0]
	// The runtime maps again what its run uses (its progress view, the
	// garbage collector reading the stack maps of what is on its stacks):
	// a few MB, up to two thirds of it seen in a race-enabled build.
	for _, proc := range []struct {
		name     string
		pid      int
		atMostOf float64
	}{{"runtime", runtime, 0.9}, {"ancestor", ancestor, 0.5}} {
		mapped, err := binaryMapped(proc.pid)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d KB of the binary mapped, after start-up mapped %d KB", proc.name, mapped, startup)
		if float64(mapped) > proc.atMostOf*float64(startup) {
			t.Errorf("the %s, waiting, has %d KB of the binary mapped, over %.0f%% of the %d KB start-up mapped",
				proc.name, mapped, 100*proc.atMostOf, startup)
		}
	}
}

// binaryMapped is the KB of its executable that process pid has mapped.
func binaryMapped(pid int) (int64, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var kb int64
	ours := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if key, rest, ok := strings.Cut(line, ":"); ok && !strings.ContainsAny(key, " -") {
			if ours && key == "Rss" {
				n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				kb += n
			}
			continue
		}
		ours = strings.HasSuffix(line, " "+exe)
	}
	return kb, sc.Err()
}
