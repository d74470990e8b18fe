package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Errors that say isolation cannot work in this project at all, as opposed
// to one git command failing. Test them with errors.Is.
var (
	ErrGitMissing    = errors.New("git is not installed")
	ErrNotRepository = errors.New("not in a git working tree")
	ErrNoCommit      = errors.New("the repository has no commit yet")
)

// Error is a git command that failed.
type Error struct {
	Dir    string
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s (in %s): %s", strings.Join(e.Args, " "), e.Dir, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// lockRetries bounds how long contention on one of git's lock files (or a
// race on its worktree administration) is waited out: 10 ms doubling to
// 400 ms, about 3 s in all.
const (
	lockRetries   = 10
	lockFirstWait = 10 * time.Millisecond
	lockMaxWait   = 400 * time.Millisecond
)

// git runs one git binary with an environment that cannot redirect it to
// another repository.
type git struct {
	path string
	env  []string
}

func newGit() (*git, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("%w: no git binary on PATH (%v)", ErrGitMissing, err)
	}
	return &git{path: path, env: gitEnv(os.Environ())}, nil
}

// gitEnv drops the variables that point git at a repository other than the
// one of its working directory (set when we run from inside a git hook),
// makes git's messages English, since a few are recognised (a lock held, a
// branch that exists), and never lets git wait for a password. Only the
// messages' language changes: an LC_ALL becomes LANG, so the character set
// hooks and filters see is the user's.
func gitEnv(environ []string) []string {
	lcAll := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "LC_ALL="); ok {
			lcAll = v
		}
	}
	env := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX",
			"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			"LC_MESSAGES", "GIT_TERMINAL_PROMPT":
			continue
		case "LC_ALL":
			if val != "" {
				env = append(env, "LANG="+val)
			}
			continue
		case "LANG":
			if lcAll != "" {
				continue
			}
		}
		env = append(env, kv)
	}
	return append(env, "LC_MESSAGES=C", "GIT_TERMINAL_PROMPT=0")
}

// run runs git in dir and returns its standard output. Contention on a
// lock file is retried; any other failure is an *Error.
func (g *git) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return g.runEnv(ctx, dir, nil, args...)
}

// runEnv is run with extra environment variables.
func (g *git) runEnv(ctx context.Context, dir string, extra []string, args ...string) ([]byte, error) {
	wait := lockFirstWait
	for attempt := 0; ; attempt++ {
		out, stderr, err := g.once(ctx, dir, extra, args)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil || attempt == lockRetries || !(lockBusy(stderr) || worktreeRace(stderr)) {
			return out, &Error{Dir: dir, Args: args, Stderr: stderr, Err: err}
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return out, &Error{Dir: dir, Args: args, Stderr: stderr, Err: ctx.Err()}
		}
		wait = min(2*wait, lockMaxWait)
	}
}

func (g *git) once(ctx context.Context, dir string, extra, args []string) ([]byte, string, error) {
	cmd := exec.CommandContext(ctx, g.path, args...)
	cmd.Dir = dir
	cmd.Env = g.env
	if len(extra) > 0 {
		cmd.Env = append(append([]string{}, g.env...), extra...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.String(), err
}

// lockBusy recognises git's message for a lock file another git process
// holds: "Unable to create '/repo/.git/index.lock': File exists."
func lockBusy(stderr string) bool {
	return strings.Contains(stderr, ".lock': File exists")
}

// worktreeRace recognises a git command that read the worktree
// administration while another process changed it: "failed to read
// .git/worktrees/x/commondir: Success" (see Repo.checkOut).
func worktreeRace(stderr string) bool {
	return strings.Contains(stderr, "failed to read") && strings.Contains(stderr, "/worktrees/")
}

// exitCode is the exit status of a git command that ran and failed, or -1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
