package proc

import (
	"os"
	"runtime"
	"sync"
	"syscall"
)

// sysProcAttr puts the child in a new process group and has the kernel
// kill it when its parent thread dies, which on Linux covers a SIGKILL of
// our process.
//
// Pdeathsig fires when the *thread* that forked the child exits, not the
// process. The Go runtime keeps idle threads, but it does end one when a
// goroutine exits while locked to it (runtime.LockOSThread without an
// Unlock, which any library may do): had that thread forked an agent, the
// agent would be killed mid-call. So children are forked only on the
// spawner's threads, which are locked and never exit.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawnThreads is how many threads fork children, so that a slow fork does
// not hold up the others.
const spawnThreads = 4

// spawnRequest asks a spawner thread to start a process.
type spawnRequest struct {
	path string
	argv []string
	attr *os.ProcAttr
	done chan spawned
}

type spawned struct {
	p   *os.Process
	err error
}

// spawner returns the channel the spawner threads serve. They are a
// resource of the process, like the threads themselves, so they are
// started once, on first use, and live as long as the process.
var spawner = sync.OnceValue(func() chan<- spawnRequest {
	// Only a process that starts agents gets here, never an ancestor,
	// which must leave the signals it was started with ignored to its
	// runtime.
	sinkIgnoredSignals()
	requests := make(chan spawnRequest)
	for range spawnThreads {
		go spawnLoop(requests)
	}
	return requests
})

// spawnLoop is the body of a spawner thread. It is a named function so
// that leak checks can name these goroutines, which live as long as the
// process by design (goleak.IgnoreTopFunction).
func spawnLoop(requests <-chan spawnRequest) {
	// Never unlocked: the thread lives as long as the process.
	runtime.LockOSThread()
	for req := range requests {
		p, err := startUnlessDown(req.path, req.argv, req.attr)
		req.done <- spawned{p, err}
	}
}

// startUnlessDown starts a process, unless this runtime is going down
// with its ancestor: a dead runtime starts nothing. The check and the
// start hold us.starts, so goDown freezes the tree only once every start
// is refused or done, its child exec'd and noted as an agent. The parent
// is checked before the fork, and again once the child has exec'd, since
// the ancestor may die in between, before the runtime has seen it; a
// child started in that moment is killed, with its group, before it is
// reported started.
func startUnlessDown(path string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	us.starts.RLock()
	defer us.starts.RUnlock()
	if err := downErr(); err != nil {
		return nil, err
	}
	if orphaned() {
		return nil, errAncestorDied{pid: int(us.ancestor.Load())}
	}
	p, err := os.StartProcess(path, argv, attr)
	if err != nil {
		return nil, err
	}
	if orphaned() {
		signalGroup(p.Pid, syscall.SIGKILL)
		_, _ = p.Wait()
		return nil, errAncestorDied{pid: int(us.ancestor.Load())}
	}
	noteAgent(p.Pid, true)
	return p, nil
}

// startProcess starts a process on a thread that outlives it.
func startProcess(path string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	done := make(chan spawned, 1)
	spawner() <- spawnRequest{path: path, argv: argv, attr: attr, done: done}
	s := <-done
	return s.p, s.err
}
