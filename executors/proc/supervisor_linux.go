package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Why a supervisor. Pdeathsig kills an agent CLI when we die, but not what
// the CLI started: the real codex is a Node launcher whose native child,
// and that child's tools, keep running, reparented to init, once the
// launcher is killed. Nothing of ours runs after a SIGKILL to clean up, and
// cgroups, which could kill a whole tree, are not delegated to users on
// most machines (nor on this one: cgroup v1, no systemd user slice).
//
// So the agents are started by a small helper, the supervisor: our own
// binary run again in a hidden mode. It is the agents' parent and a child
// subreaper (PR_SET_CHILD_SUBREAPER), so every process an agent starts, in
// any session or group, is reparented to it, not to init, when its own
// parent dies. It holds one end of a socket pair whose other end only we
// hold: when we die, however we die, the kernel closes our end and the
// supervisor reads EOF at once. It then kills every agent's process group
// and every process that is, or becomes, its child, until none is left,
// and exits. In our normal life it only forks and reaps: we still signal
// the agents' groups ourselves to stop them.
//
// The socket is SOCK_SEQPACKET: one message per packet. A spawn request
// carries, as SCM_RIGHTS, the child's standard input (when it has one),
// output and error, and a pipe through which we write the command line and
// environment, whatever their size. The supervisor answers with the
// child's pid, then with its wait status.

// SupervisorEnv names the variable that makes the program a supervisor; it
// holds the number of the descriptor of its socket.
const SupervisorEnv = "DYNWORKFLOW_SUPERVISOR_FD"

// supervisorStartTimeout bounds the wait for the supervisor to answer a
// spawn; it answers in microseconds unless it is stuck, in which case we
// fall back to starting children ourselves.
const supervisorStartTimeout = 10 * time.Second

// message is one packet of the protocol, either way.
type message struct {
	Op     string `json:"op"` // spawn, started, exited
	ID     uint64 `json:"id"`
	Stdin  bool   `json:"stdin,omitempty"`  // spawn: a stdin descriptor is attached
	Pid    int    `json:"pid,omitempty"`    // started
	Error  string `json:"error,omitempty"`  // started: the child could not start
	Status int    `json:"status,omitempty"` // exited: the wait status
}

// command is what the spawn pipe carries.
type command struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
}

// A Supervisor starts agent processes through a helper process that kills
// them, and everything they started, as soon as we die. It starts the
// helper on first use; a Supervisor that cannot start one is disabled and
// children start as before (Pdeathsig and the registry's reap still
// apply). It is safe for concurrent use.
type Supervisor struct {
	exe string
	log *slog.Logger

	mu       sync.Mutex
	conn     *net.UnixConn // nil until started, and after the helper died
	helper   *exec.Cmd
	next     uint64
	children map[uint64]*supervised
	disabled error // why no helper could be started
	closed   bool
	wmu      sync.Mutex // serializes writes to conn
}

// supervised is a child the supervisor started for us.
type supervised struct {
	started chan message
	exited  chan syscall.WaitStatus // closed without a value if the helper died
}

// NewSupervisor returns a supervisor that runs this program again (via
// /proc/self/exe, which works even if the binary was replaced) as its
// helper. The program must call RunSupervisorIfAsked first thing in main.
func NewSupervisor(log *slog.Logger) *Supervisor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{exe: "/proc/self/exe", log: log, children: map[uint64]*supervised{}}
}

// Pid is the helper's pid, 0 when none runs.
func (s *Supervisor) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.helper == nil {
		return 0
	}
	return s.helper.Process.Pid
}

// Close tells the helper to end, killing what is left, and waits for it.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	s.closed = true
	conn, helper := s.conn, s.helper
	s.conn = nil
	s.mu.Unlock()
	if conn == nil {
		return nil
	}
	err := conn.Close()
	if helper != nil {
		_ = helper.Wait()
	}
	return err
}

// ensure starts the helper if none runs. s.mu is held.
func (s *Supervisor) ensure() (*net.UnixConn, error) {
	if s.conn != nil {
		return s.conn, nil
	}
	if s.disabled != nil {
		return nil, s.disabled
	}
	if s.closed {
		return nil, errors.New("the supervisor is closed")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, s.disable(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "supervisor")
	defer theirs.Close()
	fc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, s.disable(err)
	}
	cmd := &exec.Cmd{Path: s.exe, Args: []string{"dynworkflow-supervisor"}, ExtraFiles: []*os.File{theirs},
		Env: append(os.Environ(), SupervisorEnv+"=3"),
		// Its own session: a Ctrl-C or a hangup of our terminal, and a kill
		// of our process group, must not reach it before it has cleaned up.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		fc.Close()
		return nil, s.disable(err)
	}
	conn := fc.(*net.UnixConn)
	s.conn, s.helper = conn, cmd
	go s.read(conn, cmd)
	s.log.Debug("started the agent supervisor", "pid", cmd.Process.Pid)
	return conn, nil
}

func (s *Supervisor) disable(err error) error {
	s.disabled = fmt.Errorf("cannot start the agent supervisor: %w", err)
	s.log.Warn("agents will not be supervised: grandchildren of a killed dynworkflow may outlive it until the next start", "err", err)
	return s.disabled
}

// read dispatches the helper's answers until it dies or we close it.
func (s *Supervisor) read(conn *net.UnixConn, helper *exec.Cmd) {
	buf := make([]byte, 4096)
	for {
		n, _, _, _, err := conn.ReadMsgUnix(buf, nil)
		if err != nil || n == 0 {
			break
		}
		var m message
		if json.Unmarshal(buf[:n], &m) != nil {
			continue
		}
		s.mu.Lock()
		c := s.children[m.ID]
		if m.Op == "exited" || m.Op == "started" && m.Error != "" {
			delete(s.children, m.ID)
		}
		s.mu.Unlock()
		if c == nil {
			continue
		}
		switch m.Op {
		case "started":
			c.started <- m
		case "exited":
			c.exited <- syscall.WaitStatus(m.Status)
		}
	}
	// The helper is gone (or closed by us): its children were killed with
	// it (Pdeathsig). Wake every waiter, and start a new helper next time.
	s.mu.Lock()
	if s.conn == conn {
		s.conn = nil
		if !s.closed {
			s.log.Warn("the agent supervisor exited; its agents were killed", "pid", helper.Process.Pid)
			go helper.Wait()
		}
	}
	orphans := s.children
	s.children = map[uint64]*supervised{}
	s.mu.Unlock()
	for _, c := range orphans {
		close(c.started)
		close(c.exited)
	}
}

// start has the helper start cmd with the given standard streams (stdin
// may be nil for /dev/null) and returns the child's pid.
func (s *Supervisor) start(cmd command, stdin, stdout, stderr *os.File) (int, *supervised, error) {
	s.mu.Lock()
	conn, err := s.ensure()
	if err != nil {
		s.mu.Unlock()
		return 0, nil, err
	}
	s.next++
	id := s.next
	c := &supervised{started: make(chan message, 1), exited: make(chan syscall.WaitStatus, 1)}
	s.children[id] = c
	s.mu.Unlock()

	specR, specW, err := os.Pipe()
	if err != nil {
		s.forget(id)
		return 0, nil, err
	}
	files := []*os.File{specR}
	if stdin != nil {
		files = append(files, stdin)
	}
	files = append(files, stdout, stderr)
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	head, _ := json.Marshal(message{Op: "spawn", ID: id, Stdin: stdin != nil})
	s.wmu.Lock()
	_, _, err = conn.WriteMsgUnix(head, unix.UnixRights(fds...), nil)
	s.wmu.Unlock()
	specR.Close()
	if err != nil {
		specW.Close()
		s.forget(id)
		return 0, nil, fmt.Errorf("ask the supervisor: %w", err)
	}
	go func() {
		_ = json.NewEncoder(specW).Encode(cmd)
		specW.Close()
	}()
	select {
	case m, ok := <-c.started:
		switch {
		case !ok:
			return 0, nil, errors.New("the agent supervisor exited")
		case m.Error != "":
			return 0, nil, errors.New(m.Error)
		}
		return m.Pid, c, nil
	case <-time.After(supervisorStartTimeout):
		// A stuck helper may still start the child later: kill it, and
		// with it (Pdeathsig) whatever it started, before the caller
		// starts the child some other way.
		s.forget(id)
		s.mu.Lock()
		if s.helper != nil && s.conn == conn {
			_ = s.helper.Process.Kill()
		}
		s.mu.Unlock()
		return 0, nil, errors.New("the agent supervisor does not answer")
	}
}

func (s *Supervisor) forget(id uint64) {
	s.mu.Lock()
	delete(s.children, id)
	s.mu.Unlock()
}

// RunSupervisorIfAsked turns the process into a supervisor helper when it
// was started as one (SupervisorEnv is set), and then exits; otherwise it
// returns at once. Call it first thing in main, and in the TestMain of a
// test binary that uses a Supervisor.
func RunSupervisorIfAsked() {
	v := os.Getenv(SupervisorEnv)
	if v == "" {
		return
	}
	fd, err := strconv.Atoi(v)
	if err != nil {
		os.Exit(2)
	}
	os.Exit(runSupervisor(fd))
}

// helperState is the supervisor helper's own state.
type helperState struct {
	conn *net.UnixConn
	wmu  sync.Mutex

	// forking is held for reading by every fork in progress, until its
	// start is reported, and for writing while reaping: a child that exits
	// at once is never reaped before its pid is recorded and its start
	// sent, and forks do not wait for one another.
	forking sync.RWMutex
	mu      sync.Mutex     // guards agents
	agents  map[int]uint64 // pid -> request id
}

func runSupervisor(fd int) int {
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "supervisor")
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 2
	}
	h := &helperState{conn: fc.(*net.UnixConn), agents: map[int]uint64{}}
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGTERM)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go func() {
		for range chld {
			h.reap()
		}
	}()
	eof := make(chan struct{})
	go func() {
		h.serve()
		close(eof)
	}()
	select {
	case <-eof:
	case <-quit:
	}
	h.killAll()
	return 0
}

// serve answers spawn requests until our parent's end of the socket
// closes.
func (h *helperState) serve() {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := h.conn.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return
		}
		var files []*os.File
		if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, cm := range cmsgs {
				fds, _ := unix.ParseUnixRights(&cm)
				for _, fd := range fds {
					unix.CloseOnExec(fd)
					files = append(files, os.NewFile(uintptr(fd), "passed"))
				}
			}
		}
		var m message
		if json.Unmarshal(buf[:n], &m) != nil || m.Op != "spawn" || len(files) != 3+boolInt(m.Stdin) {
			closeAll(files)
			continue
		}
		go h.spawn(m, files)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// spawn starts one child with the streams passed to it.
func (h *helperState) spawn(m message, files []*os.File) {
	defer closeAll(files)
	var cmd command
	err := json.NewDecoder(io.LimitReader(files[0], 64<<20)).Decode(&cmd)
	stdio := files[1:]
	var stdin *os.File
	if m.Stdin {
		stdin, stdio = stdio[0], stdio[1:]
	}
	var pid int
	if err == nil {
		c := &exec.Cmd{Path: cmd.Path, Args: append([]string{cmd.Path}, cmd.Args...), Dir: cmd.Dir, Env: cmd.Env,
			Stdout: stdio[0], Stderr: stdio[1], SysProcAttr: sysProcAttr()}
		if stdin != nil {
			c.Stdin = stdin
		}
		h.forking.RLock()
		defer h.forking.RUnlock()
		if err = startCmd(c); err == nil {
			pid = c.Process.Pid
			h.mu.Lock()
			h.agents[pid] = m.ID
			h.mu.Unlock()
			// Reaped by reap, with wait4: release Go's handle on it.
			_ = c.Process.Release()
		}
	}
	// Sent with h.forking held when the child started, so that its exit,
	// which reap reports after taking h.forking, always comes after it.
	reply := message{Op: "started", ID: m.ID, Pid: pid}
	if err != nil {
		reply.Error = err.Error()
	}
	h.send(reply)
}

func (h *helperState) send(m message) {
	b, _ := json.Marshal(m)
	h.wmu.Lock()
	_, _, _ = h.conn.WriteMsgUnix(b, nil, nil)
	h.wmu.Unlock()
}

// reap collects every child that exited, agents and the orphans that were
// reparented to us, and reports the agents'.
func (h *helperState) reap() {
	var done []message
	h.forking.Lock()
	h.mu.Lock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			break
		}
		if id, ok := h.agents[pid]; ok {
			delete(h.agents, pid)
			done = append(done, message{Op: "exited", ID: id, Status: int(ws)})
		}
	}
	h.mu.Unlock()
	h.forking.Unlock()
	for _, m := range done {
		h.send(m)
	}
}

// killAll kills every agent's group and every process that is or becomes
// our child, until none is left or a few seconds have passed. Killing a
// process reparents its children to us, so each round reaches one level
// further down; a process that started a new session is reached that way
// too.
func (h *helperState) killAll() {
	self := os.Getpid()
	deadline := time.Now().Add(3 * time.Second)
	for {
		h.mu.Lock()
		for pid := range h.agents {
			signalGroup(pid, syscall.SIGKILL)
		}
		h.mu.Unlock()
		kids := childrenOf(self)
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if pgrp, _, err := stat(pid); err == nil && pgrp == pid {
				signalGroup(pid, syscall.SIGKILL)
			}
		}
		h.reap()
		if len(kids) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
