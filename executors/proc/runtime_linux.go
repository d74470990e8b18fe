package proc

import (
	"fmt"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The runtime's side of the process tree (see ancestor_linux.go for the
// whole design).
//
// A runtime is this program run again by its ancestor, with runtimeEnv
// set. Main takes up its duties before the program's own main runs: it
// becomes a child subreaper, so that whatever its agents leave behind is
// reparented to it rather than to the ancestor; it reaps those orphans as
// they exit; and it watches the lifeline, the read end of a pipe whose
// write end only the ancestor holds, which the kernel closes when the
// ancestor dies, however it dies.

// runtimeEnv names the variable through which an ancestor tells its child
// that it is the runtime: "PID:FD", the ancestor's pid and the descriptor
// of the lifeline.
const runtimeEnv = "DYNWORKFLOW_RUNTIME_OF"

// lineage is what a process knows of its place in the process tree. There
// is one per process, like its pid, so ours, us, is a package variable:
// set once by Main before anything else runs, and read by every start.
type lineage struct {
	// ancestor is the pid of our ancestor, 0 when we have none.
	ancestor atomic.Int64
	// lifeline is the descriptor of our end of the lifeline.
	lifeline atomic.Int64
	// down is set once we go down because our ancestor died: no agent
	// may start after that, and the agents that were running were killed
	// by us, not by their own failure.
	down atomic.Pointer[error]
	// starts is held for reading by each start, from its check of down
	// to the noting of its agent, and for writing, never to be released,
	// by goDown: a start is either refused or done, its child exec'd and
	// noted, before the tree is frozen, and none forks after.
	starts sync.RWMutex

	mu sync.Mutex
	// agents are the pids of the agents running, in a runtime.
	agents map[int]bool
}

var us lineage

// downErr is why agents may no longer start, nil while they may.
func downErr() error {
	if p := us.down.Load(); p != nil {
		return *p
	}
	return nil
}

// orphaned reports whether we are a runtime whose ancestor is gone: the
// kernel reparents us the moment it dies, before its parent can even reap
// it, so one system call tells.
func orphaned() bool {
	a := us.ancestor.Load()
	return a != 0 && int64(unix.Getppid()) != a
}

// Main runs body, the program's main function, and returns its exit code.
// Call it from main on the main thread: lock the main goroutine to it
// with runtime.LockOSThread in an init function of package main. In a
// process that is not a runtime it unlocks the thread and calls body.
//
// In a runtime, body runs on another goroutine while the main goroutine
// reaps the orphans reparented to us. Orphans are reparented to the
// subreaper's main thread, and waiting with __WNOTHREAD on that thread
// sees only them: never an agent, nor any other child that os/exec will
// wait for, since those were forked on other threads, the main thread
// being locked to this loop. It reaps every orphanReaping rather than on
// each SIGCHLD: every agent's exit sends one, and waking a goroutine
// locked to its thread costs two thread switches; an orphan that has
// exited only holds its pid until then.
func Main(body func() int) int {
	lifeline, ok := takeUpRuntime()
	if !ok {
		runtime.UnlockOSThread()
		return body()
	}
	go watchLifeline(lifeline)
	done := make(chan int, 1)
	go func() { done <- body() }()
	onMainThread := unix.Gettid() == os.Getpid()
	tick := time.NewTicker(orphanReaping)
	defer tick.Stop()
	for {
		select {
		case code := <-done:
			return code
		case <-tick.C:
			if onMainThread {
				reapOrphans()
			}
		}
	}
}

// killPatience bounds the rounds of killing what is left below a runtime
// or an ancestor: a process stuck in the kernel (state D) may take long to
// die, and a machine under load long to let us look.
const killPatience = 10 * time.Second

// orphanReaping is how often a runtime reaps the orphans that have exited.
const orphanReaping = time.Second

// takeUpRuntime reads runtimeEnv and, when we are a runtime, becomes one:
// a child subreaper whose ancestor is recorded. It removes the variable
// from our environment either way: agents and tools must not inherit it.
func takeUpRuntime() (*os.File, bool) {
	v, ok := os.LookupEnv(runtimeEnv)
	if !ok {
		return nil, false
	}
	_ = os.Unsetenv(runtimeEnv)
	p, f, _ := strings.Cut(v, ":")
	pid, err1 := strconv.Atoi(p)
	fd, err2 := strconv.Atoi(f)
	var st unix.Stat_t
	if err1 != nil || err2 != nil || pid <= 1 || fd < 3 || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return nil, false // not a variable an ancestor of ours set
	}
	unix.CloseOnExec(fd)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		// Too old a kernel (before 3.4) to supervise anything: run as
		// the ancestor's plain child, still killed with it (below).
		fmt.Fprintln(os.Stderr, "dynworkflow: warning: cannot become a child subreaper:", err)
	}
	us.ancestor.Store(int64(pid))
	us.lifeline.Store(int64(fd))
	if orphaned() {
		// The ancestor died before we could record it: go with it.
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	// Read from the poller, not a thread blocked in read(2) for our whole
	// life: the descriptor came to us in blocking mode.
	_ = unix.SetNonblock(fd, true)
	return os.NewFile(uintptr(fd), "lifeline"), true
}

// sinkIgnoredSignals keeps ignoring the signals this process was started
// with ignored, without leaving them ignored for its children. It is
// called once, before the first child starts. A signal
// ignored when a child is forked stays ignored across execve: started
// under nohup, or in the background of a shell script, every agent would
// ignore SIGHUP or SIGINT, and a shell agent could not even trap them. A
// signal that Go handles is reset to its default in the child instead, so
// the ignored ones get a handler that drops them. Go already handles
// every other signal but the job-control ones; an ignored SIGTSTP is
// sunk too, but never SIGTTIN or SIGTTOU: handled rather than ignored,
// they would stop a read or write of the terminal from the background.
func sinkIgnoredSignals() {
	sink, sinking := make(chan os.Signal, 1), false
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTSTP} {
		if ignoredAtStart(sig) {
			signal.Notify(sink, sig)
			sinking = true
		}
	}
	if !sinking {
		return
	}
	go func() {
		for range sink { //nolint:revive // dropped, as ignored
		}
	}()
}

// watchLifeline waits for the ancestor's end of the lifeline to close, and
// then goes down, taking everything below us along.
func watchLifeline(lifeline *os.File) {
	var b [64]byte
	for {
		if _, err := lifeline.Read(b[:]); err != nil {
			break // EOF: the ancestor is gone
		}
	}
	err := error(errAncestorDied{pid: int(us.ancestor.Load())})
	us.down.Store(&err)
	goDown()
}

// goDown kills everything below us, and us, as if the SIGKILL that ended
// our ancestor had ended us too: no agent starts, and none of our code
// sees an agent die, lest it take that for the agent's failure and record
// it (a worktree settled, a call failed) when it was ours.
//
// So the tree is frozen first: every process below us is stopped, again
// until a reading of /proc finds none running, so that none can start
// another or exit. Then everything that is not one of our agents is
// killed: its death is seen by no code of ours (a stopped agent cannot
// wait for its children), or by none that matters (an orphan we adopted,
// which only our reaper waits for). Last we kill ourselves, and our agents
// die with us, of their Pdeathsig, stopped as they are.
//
// Starts under way are let finish first, and no other may begin: without
// that, a start whose check passed just before down was set could fork
// after the walks of the tree, its agent running unseen while we die.
//
// The quick walk down the children files misses a child now and then:
// the kernel reads a children file a pid at a time, by position in the
// list, and a child reaped meanwhile (an agent that just exited, by its
// Run) shifts the rest by one. A missed agent ran on, unfrozen, until its
// spawner thread was gone; a missed child not yet exec'd (before the lock
// above) was left stopped for ever, its Pdeathsig not yet set. So the
// freeze ends only when one reading of the whole of /proc, in pid order
// and blind to exits, finds nothing below us running, and that reading
// is the one whose non-agents are killed.
func goDown() {
	us.starts.Lock()
	self := os.Getpid()
	if len(scanDescendantsOf(self)) == 0 {
		_ = syscall.Kill(self, syscall.SIGKILL) // nothing to take along
	}
	deadline := time.Now().Add(freezePatience)
	var tree []liveChild
	for full, settled := false, false; !settled; {
		if full {
			tree = scanDescendantsOf(self)
		} else {
			tree = liveDescendantsOf(self)
		}
		running := 0
		for _, p := range tree {
			if !p.stopped() {
				_ = syscall.Kill(p.pid, syscall.SIGSTOP)
				running++
			}
		}
		switch {
		case running == 0 && full:
			settled = true
		case running == 0:
			full = true
		case time.Now().After(deadline):
			// A process in the kernel (state D) stops once it leaves
			// it; we do not wait for ever, and kill what did not stop
			// all the same.
			if !full {
				tree = scanDescendantsOf(self)
			}
			settled = true
		default:
			time.Sleep(time.Millisecond)
		}
	}
	agents := runningAgents()
	for _, p := range tree {
		if !agents[p.pid] {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
	_ = syscall.Kill(self, syscall.SIGKILL)
}

// freezePatience bounds the wait for the tree below a runtime that goes
// down to stop.
const freezePatience = time.Second

// noteAgent records, in a runtime, an agent that started (true) or was
// reaped (false): goDown leaves agents to die with us.
func noteAgent(pid int, running bool) {
	if us.ancestor.Load() == 0 {
		return
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	if us.agents == nil {
		us.agents = map[int]bool{}
	}
	if running {
		us.agents[pid] = true
	} else {
		delete(us.agents, pid)
	}
}

// runningAgents is a copy of the set of our running agents.
func runningAgents() map[int]bool {
	us.mu.Lock()
	defer us.mu.Unlock()
	return maps.Clone(us.agents)
}

// reapOrphans reaps the exited children of the calling thread.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|unix.WNOTHREAD, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// Pid is the pid users know this process by: its ancestor's, the process
// they started, when this process is a runtime.
func Pid() int {
	if a := us.ancestor.Load(); a != 0 {
		return int(a)
	}
	return os.Getpid()
}

// ExecEnv is what a program that this runtime execs in its own place (the
// companion build, say) needs in its environment to go on as the runtime,
// under the same ancestor; nil when this process is no runtime. It lets
// the lifeline outlive the exec.
func ExecEnv() []string {
	a, fd := us.ancestor.Load(), us.lifeline.Load()
	if a == 0 {
		return nil
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
		return nil
	}
	return []string{runtimeEnv + "=" + strconv.FormatInt(a, 10) + ":" + strconv.FormatInt(fd, 10)}
}
