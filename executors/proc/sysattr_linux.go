package proc

import (
	"os/exec"
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

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// spawner returns the channel the spawner threads serve. They are a
// resource of the process, like the threads themselves, so they are
// started once, on first use, and live as long as the process.
var spawner = sync.OnceValue(func() chan<- spawnRequest {
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
		req.done <- req.cmd.Start()
	}
}

// startCmd starts cmd on a thread that outlives it.
func startCmd(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawner() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
