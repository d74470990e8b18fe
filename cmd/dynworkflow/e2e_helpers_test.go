// End-to-end tests of the dynworkflow CLI. TestMain builds the real binary
// once; every test runs it with os/exec in its own project and state
// directories and asserts what a user would see: exit codes, --json output,
// list/show, and the files on disk. Nothing is mocked.
package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binPath is the dynworkflow binary TestMain built.
var binPath string

const (
	// cmdTimeout bounds one CLI invocation. It guards against hangs, not
	// slowness: no invocation should take more than a second or two on an
	// idle machine, but a race-enabled binary on a busy one (the rest of
	// the suite, other work) can take a minute for what takes seconds.
	cmdTimeout = 5 * time.Minute
	// waitTimeout bounds every wait on a condition, a hang guard too.
	waitTimeout = 2 * time.Minute
	// tick is how often a wait re-checks its condition.
	tick = 5 * time.Millisecond
)

func TestMain(m *testing.M) {
	unignoreSignals()
	// A race-enabled program sleeps a second as it exits, to let its last
	// races be reported. An env's commands are told not to; this reaches
	// the other processes a test starts (workers, the companion, ours
	// started by the Node runtime's CLI).
	if _, set := os.LookupEnv("GORACE"); !set {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(testMain(m))
}

// unignoreSignals lets the dynworkflow processes the tests start see
// SIGHUP and SIGINT when go test runs under nohup or in the background of
// a script: a signal ignored here stays ignored across exec, and
// dynworkflow started with it ignored keeps ignoring it, by design, so
// the tests that hang up on serve or press Ctrl-C would wait for nothing.
// A signal this process handles is reset to its default in a child
// instead; here it is dropped, as it was ignored.
func unignoreSignals() {
	sink := make(chan os.Signal, 1)
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if signal.Ignored(sig) {
			signal.Notify(sink, sig)
		}
	}
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dynworkflow-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "dynworkflow")
	// The tests that run the companion run only where a prebuild compiled
	// it: there, it is linked now, beside the binary, rather than inside
	// the first such test's timeout.
	var companionBuilt sync.WaitGroup
	if companionCompiled() == nil {
		companionBuilt.Go(func() { _, _ = companion() })
	}
	err = buildBinary(binPath, raceEnabled && os.Getenv("DYNWORKFLOW_E2E_RACE") == "1")
	companionBuilt.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	runMoreInParallel()
	return m.Run()
}

// runMoreInParallel raises go test's -parallel, unless it was given, from
// GOMAXPROCS to twice that. A test here spends most of its time
// waiting on the processes it started (a dead endpoint's 30 s, a quota's
// reset, agents at a gate), not on a CPU: at two at a time on two CPUs the
// package came near go test's 10-minute timeout on a loaded machine,
// mostly idle.
func runMoreInParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", fmt.Sprint(2*runtime.GOMAXPROCS(0)))
	}
}

// buildBinary builds the command into out, with -race if race, and the
// build tags given.
//
// The binary under test is built with -race only under
// DYNWORKFLOW_E2E_RACE=1, which .ci/run sets for its second pass. Every
// test here runs it many times, two processes a command (the ancestor and
// its runtime), and a race-enabled start costs three times the CPU of a
// plain one (0.4 s against 0.14 s for a one-call run): with it this
// package needed about 800 s of CPU, and beside the rest of the suite it
// passed go test's 10-minute timeout on 2 CPUs. The product's data races
// are the business of the race-enabled unit tests of each package.
func buildBinary(out string, race bool, tags ...string) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, ".")
	build := exec.Command(goTool(), args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// env is one test's project: a project directory (--cwd and the working
// directory of every process) and a state directory (--state-dir).
type env struct {
	t       *testing.T
	dir     string // the project directory
	state   string // the state root
	workdir string // the processes' working directory; dir when empty
	// config is the processes' XDG_CONFIG_HOME, so that no user file of
	// the machine's user (dynworkflow/executors.json) leaks into a test.
	config string
	// bin is the binary the processes run; binPath when empty.
	bin string
	// environ is added to the processes' environment, after the rest.
	environ []string
	// group starts the processes in a process group of their own, which
	// a test may kill whole.
	group bool
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{t: t, dir: t.TempDir(), state: t.TempDir(), config: t.TempDir()}
}

// write writes a file of the project and returns its path.
func (e *env) write(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// writeAllowed writes a project file that names programs or a server
// (.dynworkflow/executors.json, .dynworkflow/backend.json) and allows it
// with dynworkflow allow, as its user would.
func (e *env) writeAllowed(name, content string) string {
	e.t.Helper()
	p := e.write(name, content)
	e.dwOK("allow", p)
	return p
}

// command builds an invocation of the binary; the state and project flags
// go last, so that they do not change how a test's arguments parse.
func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append(append([]string{}, args...), "--state-dir", e.state, "--cwd", e.dir)
	bin := binPath
	if e.bin != "" {
		bin = e.bin
	}
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Dir = e.dir
	if e.workdir != "" {
		cmd.Dir = e.workdir
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DYNWORKFLOW_") && !strings.HasPrefix(kv, "DYNAMIC_WORKFLOWS_HOME=") && !strings.HasPrefix(kv, "GORACE=") &&
			!strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			environ = append(environ, kv)
		}
	}
	// A race-enabled binary sleeps a second at exit unless told not to.
	cmd.Env = append(environ, "DYNAMIC_WORKFLOWS_HOME="+e.state, "GORACE=atexit_sleep_ms=0", "XDG_CONFIG_HOME="+e.config)
	cmd.Env = append(cmd.Env, e.environ...)
	cmd.WaitDelay = 5 * time.Second
	if e.group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	return cmd
}

// result is how one invocation ended.
type result struct {
	args   []string
	code   int // -1 when killed by a signal
	signal syscall.Signal
	stdout string
	stderr string
}

func (r result) String() string {
	how := fmt.Sprintf("exit code %d", r.code)
	if r.signal != 0 {
		how = "killed by " + r.signal.String()
	}
	return fmt.Sprintf("dynworkflow %s: %s\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(r.args, " "), how, r.stdout, r.stderr)
}

func resultOf(args []string, cmd *exec.Cmd, err error, stdout, stderr string) (result, error) {
	r := result{args: args, stdout: stdout, stderr: stderr}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		return r, err
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.signal = ws.Signal()
	}
	return r, nil
}

// checkRace fails the test when the race-enabled binary reported a race.
func (e *env) checkRace(r result) {
	e.t.Helper()
	if strings.Contains(r.stderr, "WARNING: DATA RACE") {
		e.t.Errorf("the binary reported a data race:\n%s", r)
	}
}

// dw runs the binary to completion.
func (e *env) dw(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := e.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r, err := resultOf(args, cmd, err, stdout.String(), stderr.String())
	if err != nil {
		e.t.Fatalf("dynworkflow %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		e.t.Fatalf("dynworkflow %s did not finish within %v:\n%s", strings.Join(args, " "), cmdTimeout, r)
	}
	e.checkRace(r)
	return r
}

// dwOK runs the binary and fails the test unless it exits 0.
func (e *env) dwOK(args ...string) result {
	e.t.Helper()
	r := e.dw(args...)
	if r.code != 0 {
		e.t.Fatalf("want exit code 0:\n%s", r)
	}
	return r
}

// expectCode fails the test unless r exited with code.
func expectCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code || r.signal != 0 {
		t.Fatalf("want exit code %d:\n%s", code, r)
	}
}

// watchBuffer collects a process's output and wakes up whoever waits for
// some text to appear in it.
type watchBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newWatchBuffer() *watchBuffer { return &watchBuffer{changed: make(chan struct{})} }

func (w *watchBuffer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(b)
	close(w.changed)
	w.changed = make(chan struct{})
	return n, err
}

// Bytes returns a copy of what was written so far.
func (w *watchBuffer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

func (w *watchBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// proc is a dynworkflow process running in the background.
type proc struct {
	e              *env
	args           []string
	cmd            *exec.Cmd
	stdout, stderr *watchBuffer
	exited         chan struct{}
	res            result // set when exited is closed
}

// start starts the binary in the background. The test's cleanup kills it
// if it is still running.
func (e *env) start(args ...string) *proc {
	e.t.Helper()
	return e.startFor(cmdTimeout, args...)
}

// startFor is start with its own time limit.
func (e *env) startFor(limit time.Duration, args ...string) *proc {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	p := &proc{e: e, args: args, cmd: e.command(ctx, args...), stdout: newWatchBuffer(), stderr: newWatchBuffer(), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		e.t.Fatalf("start dynworkflow %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		defer cancel()
		err := p.cmd.Wait()
		r, rerr := resultOf(args, p.cmd, err, p.stdout.String(), p.stderr.String())
		if rerr != nil {
			r.code, r.stderr = -1, r.stderr+"\n(wait: "+rerr.Error()+")"
		}
		p.res = r
		close(p.exited)
	}()
	e.t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// alive reports whether the process has not exited yet.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// wait waits for the process to exit and returns how it ended.
func (p *proc) wait() result {
	p.e.t.Helper()
	return p.waitFor(cmdTimeout)
}

// waitFor is wait for a process started with a time limit of its own.
func (p *proc) waitFor(limit time.Duration) result {
	p.e.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(limit + 10*time.Second):
		p.e.t.Fatalf("dynworkflow %s did not exit", strings.Join(p.args, " "))
	}
	p.e.checkRace(p.res)
	return p.res
}

// signal sends sig to the process.
func (p *proc) signal(sig os.Signal) {
	p.e.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.e.t.Fatalf("send %v to dynworkflow %s: %v", sig, strings.Join(p.args, " "), err)
	}
}

// waitStderr waits until the process's stderr contains s, and reports
// whether it did before the process exited.
func (p *proc) waitStderr(s string) bool {
	p.e.t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		p.stderr.mu.Lock()
		found := strings.Contains(p.stderr.buf.String(), s)
		changed := p.stderr.changed
		p.stderr.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-changed:
		case <-p.exited:
			return strings.Contains(p.stderr.String(), s)
		case <-deadline.C:
			p.e.t.Fatalf("no %q on the stderr of dynworkflow %s within %v; stderr so far:\n%s", s, strings.Join(p.args, " "), waitTimeout, p.stderr.String())
		}
	}
}

// waitUntil polls cond every tick until it holds; what names the
// condition in the failure message.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		time.Sleep(tick)
	}
}

// runsDir is the project's runs directory under the state root.
func (e *env) runsDir() string {
	e.t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(e.state, "projects", "*", "runs"))
	if len(dirs) != 1 {
		e.t.Fatalf("want one project runs directory under %s, found %v", e.state, dirs)
	}
	return dirs[0]
}

// journalIDs lists the runs that have a journal.
func (e *env) journalIDs() map[string]bool {
	ids := map[string]bool{}
	matches, _ := filepath.Glob(filepath.Join(e.state, "projects", "*", "runs", "*.jsonl"))
	for _, m := range matches {
		ids[strings.TrimSuffix(filepath.Base(m), ".jsonl")] = true
	}
	return ids
}

// journalPath is the journal of run id.
func (e *env) journalPath(id string) string { return filepath.Join(e.runsDir(), id+".jsonl") }

// waitNewJournal waits for p to create a journal that is not in before and
// returns its run id.
func (p *proc) waitNewJournal(before map[string]bool) string {
	p.e.t.Helper()
	var id string
	waitUntil(p.e.t, "the run's journal to appear", func() bool {
		for k := range p.e.journalIDs() {
			if !before[k] {
				id = k
				return true
			}
		}
		if !p.alive() {
			p.e.t.Fatalf("the process exited before it created a journal:\n%s", p.res)
		}
		return false
	})
	return id
}

// waitFinished waits until the journal at path holds at least n
// call.finished records, while p runs.
func (p *proc) waitFinished(path string, n int) {
	p.e.t.Helper()
	waitUntil(p.e.t, fmt.Sprintf("%d call.finished records in %s", n, path), func() bool {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte(`"type":"call.finished"`)) >= n {
			return true
		}
		if !p.alive() {
			p.e.t.Fatalf("the run exited before %d calls finished:\n%s", n, p.res)
		}
		return false
	})
}

// jrec is the part of a journal record the tests look at.
type jrec struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	Epoch   int             `json:"epoch"`
	Path    string          `json:"path"`
	Kind    string          `json:"kind"`
	Result  json.RawMessage `json:"result"`
	Level   string          `json:"level"`
	Message string          `json:"message"`
	Call    *struct {
		Prompt string `json:"prompt"`
	} `json:"call"`
	Answer *struct {
		Attempts int `json:"attempts"`
	} `json:"answer"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Resume *struct {
		Rule    string `json:"rule"`
		OldHash string `json:"oldHash"`
		NewHash string `json:"newHash"`
	} `json:"resume"`
	End *struct {
		Status   string `json:"status"`
		Replayed int    `json:"replayed"`
		Live     int    `json:"live"`
	} `json:"end"`
}

// readJournal parses the journal at path. A last line that is incomplete
// or not JSON (a torn tail) is returned apart; any other bad line fails the
// test.
func readJournal(t *testing.T, path string) (recs []jrec, torn []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for len(b) > 0 {
		line, rest, complete := bytes.Cut(b, []byte("\n"))
		var r jrec
		if !complete || json.Unmarshal(line, &r) != nil {
			if len(rest) > 0 {
				t.Fatalf("%s: a bad line that is not the last one: %q", path, line)
			}
			return recs, b
		}
		recs = append(recs, r)
		b = rest
	}
	return recs, nil
}

// finishedAgents returns the paths of the agent calls with a
// call.finished record among recs.
func finishedAgents(recs []jrec) map[string]bool {
	paths := map[string]bool{}
	for _, r := range recs {
		if r.Type == "call.finished" && r.Kind == "agent" {
			paths[r.Path] = true
		}
	}
	return paths
}

// lastResume returns the index of the last resume record, or -1.
func lastResume(recs []jrec) int {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Type == "resume" {
			return i
		}
	}
	return -1
}

// startedAfter returns the paths of the agent calls started after index i.
func startedAfter(recs []jrec, i int) map[string]bool {
	paths := map[string]bool{}
	for _, r := range recs[i+1:] {
		if r.Type == "call.started" && r.Kind == "agent" {
			paths[r.Path] = true
		}
	}
	return paths
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// outcome is the object `run --json` and `resume --json` print.
type outcome struct {
	RunID       string          `json:"runId"`
	Name        string          `json:"name"`
	Status      string          `json:"status"`
	PauseReason string          `json:"pauseReason"`
	Result      json.RawMessage `json:"result"`
	Error       string          `json:"error"`
	Stats       stats           `json:"stats"`
	Epoch       int             `json:"epoch"`
}

type stats struct {
	Agents       int   `json:"agents"`
	Replayed     int   `json:"replayed"`
	Live         int   `json:"live"`
	Failed       int   `json:"failed"`
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

func parseOutcome(t *testing.T, r result) outcome {
	t.Helper()
	var o outcome
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil || o.RunID == "" {
		t.Fatalf("stdout is not a --json outcome (%v):\n%s", err, r)
	}
	return o
}

// summary is one entry of `list --json`.
type summary struct {
	RunID       string    `json:"runId"`
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	PauseReason string    `json:"pauseReason"`
	Error       string    `json:"error"`
	StartedAt   time.Time `json:"startedAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Stats       stats     `json:"stats"`
	JournalSeq  int64     `json:"journalSeq"`
}

// list runs `list --json`.
func (e *env) list() []summary {
	e.t.Helper()
	r := e.dwOK("list", "--json")
	var sums []summary
	if err := json.Unmarshal([]byte(r.stdout), &sums); err != nil {
		e.t.Fatalf("list --json is not an array of summaries (%v):\n%s", err, r)
	}
	return sums
}

// listed returns run id's entry of `list --json`.
func (e *env) listed(id string) summary {
	e.t.Helper()
	for _, s := range e.list() {
		if s.RunID == id {
			return s
		}
	}
	e.t.Fatalf("run %s is missing from list --json", id)
	return summary{}
}

// detail is the part of `show --json` the tests look at.
type detail struct {
	Summary summary `json:"summary"`
	Calls   []struct {
		Path   string          `json:"path"`
		Kind   string          `json:"kind"`
		Status string          `json:"status"`
		Prompt string          `json:"prompt"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	} `json:"calls"`
	Logs []struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	} `json:"logs"`
	Result json.RawMessage `json:"result"`
}

func (e *env) show(id string) detail {
	e.t.Helper()
	r := e.dwOK("show", id, "--json")
	var d detail
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		e.t.Fatalf("show --json is not a run's detail (%v):\n%s", err, r)
	}
	return d
}

// sameJSON fails the test unless a and b hold equal JSON values.
func sameJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: not JSON (%v): %s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want is not JSON (%v): %s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s differs:\n got: %s\nwant: %s", what, got, want)
	}
}

// runCompleted runs a script to completion with --json and returns its outcome,
// failing the test unless it completed.
func (e *env) runCompleted(script string, flags ...string) outcome {
	e.t.Helper()
	r := e.dw(append([]string{"run", script, "--json"}, flags...)...)
	expectCode(e.t, r, 0)
	o := parseOutcome(e.t, r)
	if o.Status != "completed" {
		e.t.Fatalf("want status completed:\n%s", r)
	}
	return o
}

// killed is a run SIGKILLed in the middle.
type killed struct {
	id       string
	journal  string
	recs     []jrec          // the journal as the kill left it
	finished map[string]bool // agent calls finished before the kill
}

// startAndKill runs script with flags in the background, waits until at
// least killAt calls finished, SIGKILLs the process and reads the journal
// it left. total is the number of agent calls of a complete run: a kill
// that came too late fails the test.
func (e *env) startAndKill(script string, killAt, total int, flags ...string) killed {
	e.t.Helper()
	before := e.journalIDs()
	p := e.start(append([]string{"run", script, "--json"}, flags...)...)
	id := p.waitNewJournal(before)
	path := e.journalPath(id)
	p.waitFinished(path, killAt)
	p.signal(syscall.SIGKILL)
	r := p.wait()
	if r.signal != syscall.SIGKILL {
		e.t.Fatalf("the run was not killed by SIGKILL (it ended first: make it slower):\n%s", r)
	}
	recs, _ := readJournal(e.t, path)
	k := killed{id: id, journal: path, recs: recs, finished: finishedAgents(recs)}
	for _, rec := range recs {
		if rec.Type == "end" {
			e.t.Fatalf("the run ended (%s) before the kill; make it slower", rec.End.Status)
		}
	}
	if len(k.finished) < killAt || len(k.finished) >= total {
		e.t.Fatalf("%d of %d calls finished before the kill; want at least %d and not all", len(k.finished), total, killAt)
	}
	return k
}

// noReRun fails the test if a call in finished was started again after the
// last resume record of the journal at path.
func noReRun(t *testing.T, path string, finished map[string]bool) []jrec {
	t.Helper()
	recs, _ := readJournal(t, path)
	i := lastResume(recs)
	if i < 0 {
		t.Fatalf("%s has no resume record", path)
	}
	var again []string
	for p := range startedAfter(recs, i) {
		if finished[p] {
			again = append(again, p)
		}
	}
	if len(again) > 0 {
		sort.Strings(again)
		t.Fatalf("%d finished calls ran again after the resume: %v", len(again), again)
	}
	return recs
}
