//go:build unix

package devbuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// buildsLock says that builds hold the entry's lock while they run, so
// that what no build holds can be swept.
const buildsLock = true

// lockFile takes an exclusive lock on path, polling so that ctx can end
// the wait, and calls waiting once if another process holds it. Closing
// the file releases the lock, unless a child inherited it: the lock is
// the open file's, and lasts while any process has it open.
func lockFile(ctx context.Context, path string, waiting func()) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for told := false; ; told = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("devbuild: lock %s: %w", path, err)
		}
		if !told {
			waiting()
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// wrapper runs a build (its arguments after the private directory and the
// program's path) with the output file appended, renames the output into
// place when the build succeeds, and removes the private directory however
// it ends, bar SIGKILL. Being a process of its own, it does all this even
// when the builder that started it is gone.
const wrapper = `tmp=$1 final=$2
shift 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
"$@" "$tmp/out" && mv -f "$tmp/out" "$final"`

// runBuild runs b's build through the wrapper, in a process group of its
// own (a signal to the builder's group, Ctrl-C, does not reach it) that
// inherits lock, so the lock is held until the last process of the build
// exits. When ctx ends, the group is terminated and waited for.
func runBuild(ctx context.Context, b Builder, tmp string, lock, log *os.File) error {
	cmd := exec.Command("/bin/sh", append([]string{"-c", wrapper, "sh", tmp, b.Path()}, b.Argv...)...)
	cmd.Dir, cmd.Env = b.Src, b.Env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{lock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintf(log, "devbuild: building %s\n", b.Path())
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("devbuild: start the build: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			return fmt.Errorf("devbuild: build %s in %s: %w", b.Name, b.Src, err)
		}
		return nil
	case <-ctx.Done():
	}
	group := -cmd.Process.Pid
	_ = syscall.Kill(group, syscall.SIGTERM)
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(group, syscall.SIGKILL)
		<-waited
	}
	return fmt.Errorf("devbuild: the build of %s was stopped: %w", b.Name, ctx.Err())
}

// processAlive reports whether process pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
