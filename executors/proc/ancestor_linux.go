package proc

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/exepages"
)

// Why an ancestor. Pdeathsig kills an agent CLI when we die, but not what
// the CLI started: the real codex is a Node launcher whose native child,
// and that child's tools, keep running, reparented to init, once the
// launcher is killed. Nothing of ours runs after a SIGKILL to clean up, and
// cgroups, which could kill a whole tree, are not delegated to users on
// most machines.
//
// So a command that runs agents runs as two processes. The process the
// user started (the pid they see, signal, and find in runtime.json) is the
// ancestor: it runs this program again as its only child, the runtime,
// which does all the work and starts the agents itself, with a plain fork
// and exec (CLONE_VFORK), each agent in a process group of its own with
// Pdeathsig. Both are child subreapers (PR_SET_CHILD_SUBREAPER): a process
// whose parent dies is reparented to the nearest living subreaper above
// it, whatever session or group it moved to. So:
//
//   - While the runtime lives, what an agent leaves behind becomes the
//     runtime's child, and the runtime reaps it (runtime_linux.go).
//   - When the runtime dies, however it dies (a SIGKILL, the OOM killer, a
//     crash), its agents get their Pdeathsig and everything below it is
//     reparented to the ancestor, which kills it all, level by level, and
//     then ends as the runtime ended: the same exit code, or the same
//     signal.
//   - When the ancestor dies first (a SIGKILL of the pid the user knows,
//     or of its process group), the runtime reads EOF on the lifeline, a
//     pipe whose write end only the ancestor held. It starts nothing more,
//     kills everything below it, and kills itself.
//
// An agent costs nothing more than a direct start: no helper process,
// message or descriptor passing per agent. The runtime is in a process
// group of its own, so a signal to the ancestor's group (a SIGKILL of the
// whole job) reaches the ancestor alone and the runtime can clean up; the
// ancestor forwards the signals it gets and does the job control a shell
// expects of its job: it hands the terminal's foreground to the runtime's
// group, so Ctrl-C and Ctrl-Z reach the runtime, and when the runtime
// stops it stops itself the same way, so the shell sees its job stopped.

// singleProcessEnv, when set, has a command run as one process, with no
// ancestor: for a debugger, or a kernel without child subreapers. Agents
// still die with it; what they started in a session of their own may then
// outlive a SIGKILL until the next start reaps it.
const singleProcessEnv = "DYNWORKFLOW_SINGLE_PROCESS"

// WantsAncestor reports whether this process should hand its command to a
// runtime child and be its ancestor (RunAncestor): on Linux, unless it is
// a runtime itself or singleProcessEnv is set.
func WantsAncestor() bool {
	return us.ancestor.Load() == 0 && os.Getenv(singleProcessEnv) == ""
}

// runtimeStartPatience bounds the retries of a runtime start that failed
// for want of memory, processes or descriptors.
const runtimeStartPatience = 10 * time.Second

// RunAncestor runs this program again, with the same arguments, as its
// runtime child and supervises it until it ends, as described above. It
// returns the runtime's exit code; when the runtime died of a signal it
// dies of the same signal and does not return. The program's main must
// run through Main. The error, an executors.Infrastructure failure, says
// why no runtime could be started; nothing was run then.
func RunAncestor() (int, error) {
	a, err := startRuntime()
	if err != nil {
		return 0, err
	}
	ws := a.supervise()
	a.cleanUp()
	if ws.Signaled() {
		dieOf(ws.Signal())
	}
	return ws.ExitStatus(), nil
}

// ancestor is the state of a running ancestor.
type ancestor struct {
	rt       int // the runtime's pid, which is also its process group
	tty      int // our controlling terminal, or -1
	lifeline *os.File
	signals  chan os.Signal
}

// forwarded are the signals the ancestor passes on to the runtime, unless
// it was started with them ignored (then the runtime, which inherits that,
// ignores them too).
var forwarded = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTSTP}

func startRuntime() (*ancestor, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, infrastructure("cannot supervise agents: this kernel has no child subreapers", err,
			"set "+singleProcessEnv+"=1 to run as one process")
	}
	a := &ancestor{tty: -1, signals: make(chan os.Signal, 32)}
	// Before the fork, so that no signal or exit goes unseen. A signal Go
	// handles is reset to its default in the child; one we were started
	// with ignored stays ignored, as it would have in one process.
	signal.Notify(a.signals, syscall.SIGCHLD, syscall.SIGCONT)
	for _, sig := range forwarded {
		if !ignoredAtStart(sig) {
			signal.Notify(a.signals, sig)
		}
	}
	files := []*os.File{stdFile(os.Stdin), stdFile(os.Stdout), stdFile(os.Stderr)}
	sys := &syscall.SysProcAttr{Setpgid: true}
	for fd := range 3 {
		if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil {
			a.tty = fd
			// Only a foreground job hands over the terminal.
			sys.Foreground, sys.Ctty = pg == unix.Getpgrp(), fd
			break
		}
	}

	var p *os.Process
	started := time.Now()
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		var err error
		p, err = a.start(files, sys)
		if err == nil {
			break
		}
		if !transient(err) || time.Since(started) > runtimeStartPatience {
			signal.Stop(a.signals)
			return nil, infrastructure("cannot start the dynworkflow runtime process", err, "")
		}
		if delay == 10*time.Millisecond {
			fmt.Fprintf(os.Stderr, "dynworkflow: cannot start the runtime process yet (%v); trying again for %s\n", err, runtimeStartPatience)
		}
		// Not time.Sleep: its timer needs Go's poller, which may not be
		// set up yet, and cannot be without a descriptor.
		ts := unix.NsecToTimespec(delay.Nanoseconds())
		_ = unix.Nanosleep(&ts, nil)
	}
	a.rt = p.Pid
	_ = p.Release() // we wait for it ourselves, with wait4, to see it stop
	// What the program allocated on its way here (its packages' set-up,
	// the command line) is the runtime's business now: give it back.
	debug.FreeOSMemory()
	// And so are the pages of the executable only start-up touched: the
	// ancestor waits, often for hours, in a few pages of it. Should that
	// fail, they only stay mapped.
	_, _ = exepages.Release()
	// Now that no child can inherit it: taking the terminal back from the
	// runtime's group while ours is in the background must not stop us.
	signal.Ignore(syscall.SIGTTOU)
	return a, nil
}

// start starts the runtime once.
func (a *ancestor) start(files []*os.File, sys *syscall.SysProcAttr) (*os.Process, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	env := append(os.Environ(), runtimeEnv+"="+strconv.Itoa(os.Getpid())+":3")
	p, err := os.StartProcess("/proc/self/exe", os.Args, &os.ProcAttr{Env: env, Files: append(files, r), Sys: sys})
	if err != nil {
		w.Close()
		return nil, err
	}
	// Held, never written, until we die: the runtime's lifeline.
	a.lifeline = w
	return p, nil
}

// stdFile is f, or nil when its descriptor is closed (the child then gets
// it closed too, rather than failing to start).
func stdFile(f *os.File) *os.File {
	if _, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0); err != nil {
		return nil
	}
	return f
}

// supervise forwards signals to the runtime and mirrors its stops until it
// ends, and returns how it ended.
func (a *ancestor) supervise() syscall.WaitStatus {
	for sig := range a.signals {
		switch sig {
		case syscall.SIGCHLD:
			if ws, ended := a.reap(); ended {
				return ws
			}
		case syscall.SIGCONT:
			a.resume()
		case syscall.SIGTSTP:
			// Sent to us, not by the terminal: stop the job as a whole.
			_ = syscall.Kill(-a.rt, syscall.SIGTSTP)
		default:
			_ = syscall.Kill(a.rt, sig.(syscall.Signal))
		}
	}
	panic("unreachable: the signal channel is never closed")
}

// reap reaps our exited children (the runtime, or orphans of its), acts on
// a stop of the runtime, and reports whether the runtime ended.
func (a *ancestor) reap() (syscall.WaitStatus, bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WUNTRACED, nil)
		if pid <= 0 || err != nil {
			return 0, false
		}
		if pid != a.rt {
			continue
		}
		if ws.Stopped() {
			a.stopLike(ws.StopSignal())
			continue
		}
		return ws, true
	}
}

// stopLike stops our process group as the runtime was stopped, as the
// terminal would have stopped it had the runtime been in it: so the shell
// sees its job stop, the other commands of a pipeline (dynworkflow run x |
// tee log) included. A job-control stop of an orphaned process group is
// dropped by the kernel: nobody would continue it. Ours is orphaned when
// no shell of our session is our parent (we lead the session, say): then
// the runtime is continued at once, as it would have gone on in one
// process.
func (a *ancestor) stopLike(sig syscall.Signal) {
	ppid := unix.Getppid()
	pg, err1 := unix.Getpgid(ppid)
	sid, err2 := unix.Getsid(ppid)
	ours, err3 := unix.Getsid(0)
	if err1 != nil || err2 != nil || err3 != nil || sid != ours || pg == unix.Getpgrp() {
		_ = syscall.Kill(-a.rt, syscall.SIGCONT)
		return
	}
	raiseDefault(sig, true)
	// We are continued: resume, run on SIGCONT, hands the terminal back.
}

// resume continues the runtime's group after we were continued, giving it
// the terminal first if we hold it (fg, as opposed to bg).
func (a *ancestor) resume() {
	if a.tty >= 0 {
		if pg, err := unix.IoctlGetInt(a.tty, unix.TIOCGPGRP); err == nil && pg == unix.Getpgrp() {
			_ = unix.IoctlSetPointerInt(a.tty, unix.TIOCSPGRP, a.rt)
		}
	}
	_ = syscall.Kill(-a.rt, syscall.SIGCONT)
}

// cleanUp kills and reaps everything left below us once the runtime has
// ended, and takes back the terminal if the runtime's group still has it.
func (a *ancestor) cleanUp() {
	killTree(os.Getpid(), killPatience, func() { a.reap() })
	a.reap()
	if a.tty >= 0 {
		if pg, err := unix.IoctlGetInt(a.tty, unix.TIOCGPGRP); err == nil && pg == a.rt {
			_ = unix.IoctlSetPointerInt(a.tty, unix.TIOCSPGRP, unix.Getpgrp())
		}
	}
	runtime.KeepAlive(a.lifeline)
}

// dieOf ends us with sig, as the runtime ended, so that our parent sees
// what it would have seen of one process (a shell treats a death by
// SIGINT differently from an exit). No core is dumped: the runtime's
// would be the one of interest.
func dieOf(sig syscall.Signal) {
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	raiseDefault(sig, false)
	// Still here: the signal cannot end us (we are init in a pid
	// namespace, say).
	os.Exit(128 + int(sig))
}

// raiseDefault delivers sig with its default action, whatever Go installed
// for it, to the calling thread, and to the rest of our process group if
// asked, and then restores Go's handler. The calling thread acts on it
// before the system call returns: a stop stops us there (the whole
// process), and we go on once continued.
func raiseDefault(sig syscall.Signal, group bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// A struct sigaction of zeros is SIG_DFL with no flags and an empty
	// mask on every architecture; old is larger than any of them.
	var dfl, old [64]uint64
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	if group {
		// The others one by one, not the group: a signal to the group
		// would reach us too, and could be taken by another of our
		// threads and stop us while we are still in kill(2), and the
		// tgkill below stop us again once we are continued.
		for _, pid := range groupMembers(unix.Getpgrp()) {
			if pid != os.Getpid() {
				_ = syscall.Kill(pid, sig)
			}
		}
	}
	_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
	if e == 0 {
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	}
}
