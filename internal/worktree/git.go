package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
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
// another repository, and with every setting that makes git run a program
// switched off (see safeConfig and repoOverrides).
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

// safeConfig goes before every command. The repository, and any agent
// that can write in it, controls its .git/config (and the files that
// includes), and several settings there make git run a program: these
// override them, whoever set them, because nothing we run needs them.
//
//   - core.fsmonitor: a command git status runs to learn what changed;
//   - core.hooksPath: hooks (post-checkout, reference-transaction, ...);
//     our commits skip them anyway (--no-verify): they preserve work and
//     publish nothing;
//   - protocol.allow: every transport (ssh, file, ext::, ...), and so
//     every remote helper, proxy, ssh command and lazy fetch of a partial
//     clone: we never talk to a remote;
//   - core.editor, sequence.editor, core.pager: we never edit or page;
//   - commit.gpgSign: we never sign;
//   - gc.auto, maintenance.auto: no background repacking in our commands;
//   - submodule.recurse: we never enter submodules.
//
// Settings whose names the repository picks (filter, diff and merge
// drivers) and the credential helpers and ssh command that git-lfs reads
// are handled by repoOverrides.
var safeConfig = []string{
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"protocol.allow=never",
	"core.editor=:",
	"sequence.editor=:",
	"core.pager=cat",
	"commit.gpgSign=false",
	"gc.auto=0",
	"maintenance.auto=false",
	"submodule.recurse=false",
}

// gitEnv drops the variables that point git at a repository other than the
// one we name (set when we run from inside a git hook), makes git's
// messages English, since a few are recognised (a lock held, a branch that
// exists), never lets git wait for a password, and keeps refs/replace and
// grafts, which anyone who can write the repository can add, from changing
// what a commit's history is (and so whether a branch is merged). Only the
// messages' language changes: an LC_ALL becomes LANG, so the character set
// filters see is the user's.
func gitEnv(environ []string) []string {
	lcAll := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "LC_ALL="); ok {
			lcAll = v
		}
	}
	env := make([]string, 0, len(environ)+6)
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX",
			"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			"LC_MESSAGES", "GIT_TERMINAL_PROMPT", "GIT_NO_REPLACE_OBJECTS", "GIT_GRAFT_FILE",
			"GIT_OPTIONAL_LOCKS", "GIT_NO_LAZY_FETCH":
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
	return append(env, "LC_MESSAGES=C", "GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=/dev/null", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1")
}

// where is the repository a command runs in. gitDir and workTree are
// given to git explicitly (--git-dir, --work-tree), so that a .git file or
// core.worktree that someone rewrote cannot send it elsewhere; dir is its
// working directory. A where with no gitDir lets git find the repository
// from dir: only Open does that, once.
type where struct {
	dir      string
	gitDir   string
	workTree string
}

// run runs git at w and returns its standard output. Contention on a
// lock file is retried; any other failure is an *Error.
func (g *git) run(ctx context.Context, w where, args ...string) ([]byte, error) {
	return g.runEnv(ctx, w, nil, args...)
}

// runEnv is run with extra environment variables.
func (g *git) runEnv(ctx context.Context, w where, extra []string, args ...string) ([]byte, error) {
	wait := lockFirstWait
	for attempt := 0; ; attempt++ {
		out, stderr, err := g.once(ctx, w, extra, args)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil || attempt == lockRetries || !(lockBusy(stderr) || worktreeRace(stderr)) {
			return out, &Error{Dir: w.dir, Args: args, Stderr: stderr, Err: err}
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return out, &Error{Dir: w.dir, Args: args, Stderr: stderr, Err: ctx.Err()}
		}
		wait = min(2*wait, lockMaxWait)
	}
}

func (g *git) once(ctx context.Context, w where, extra, args []string) ([]byte, string, error) {
	full := g.prefix(w)
	if runsDrivers(args) {
		// Read just before the command, so that a driver added since the
		// last command is switched off too.
		over, err := g.repoOverrides(ctx, w)
		if err != nil {
			return nil, "", err
		}
		full = append(full, over...)
	}
	return g.exec(ctx, w, extra, append(full, args...))
}

// prefix is what goes before every command at w.
func (g *git) prefix(w where) []string {
	full := make([]string, 0, 2*len(safeConfig)+4)
	for _, kv := range safeConfig {
		full = append(full, "-c", kv)
	}
	if w.gitDir != "" {
		full = append(full, "--git-dir="+w.gitDir)
	}
	if w.workTree != "" {
		full = append(full, "--work-tree="+w.workTree)
	}
	return full
}

func (g *git) exec(ctx context.Context, w where, extra, args []string) ([]byte, string, error) {
	cmd := exec.CommandContext(ctx, g.path, args...)
	cmd.Dir = w.dir
	cmd.Env = g.env
	if len(extra) > 0 {
		cmd.Env = append(append([]string{}, g.env...), extra...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.String(), err
}

// runsDrivers reports whether a command may read file contents through
// a filter driver, or start git-lfs, which asks the credential helpers
// and runs the ssh command: a checkout, staging, a commit (which refreshes
// the index), a status, a worktree's removal (which runs status).
func runsDrivers(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "status", "add", "commit", "reset", "checkout", "stash":
		return true
	case "worktree":
		return len(args) > 1 && (args[1] == "add" && !slices.Contains(args, "--no-checkout") || args[1] == "remove")
	}
	return false
}

// repoOverrides switches off the programs the repository's own
// configuration names (its config and config.worktree, and the files they
// include) where we cannot name them in advance: filter drivers
// (clean, smudge, process), diff drivers (textconv, command), merge
// drivers, credential helpers and the ssh command. A setting the
// repository shares with the user's own configuration (the system and
// global files, -c options in GIT_CONFIG_PARAMETERS) takes the user's
// value, so that git-lfs, installed by the user, keeps working; otherwise
// it is emptied. The user's identity and everything else stay as they are.
func (g *git) repoOverrides(ctx context.Context, w where) ([]string, error) {
	args := append(g.prefix(w), "config", "--list", "--show-scope", "-z")
	out, stderr, err := g.exec(ctx, w, nil, args)
	if err != nil {
		return nil, &Error{Dir: w.dir, Args: []string{"config", "--list", "--show-scope"}, Stderr: stderr, Err: err}
	}
	trusted := map[string][]string{}
	var repoKeys []string
	for _, e := range parseConfigList(out) {
		switch e.scope {
		case "system", "global", "command":
			trusted[e.key] = append(trusted[e.key], e.value)
		default: // local, worktree, and whatever a later git adds
			if runsProgram(e.key) && !slices.Contains(repoKeys, e.key) {
				repoKeys = append(repoKeys, e.key)
			}
		}
	}
	var over []string
	for _, key := range repoKeys {
		users := trusted[key]
		switch {
		case isCredentialHelper(key):
			// A list: an empty value clears it, then the user's go back.
			over = append(over, "-c", key+"=")
			for _, v := range users {
				over = append(over, "-c", key+"="+v)
			}
		case len(users) > 0:
			over = append(over, "-c", key+"="+users[len(users)-1])
		default:
			over = append(over, "-c", key+"="+neutral(key))
		}
	}
	for _, key := range repoKeys {
		if driver, ok := filterDriver(key); ok && trusted["filter."+driver+".required"] == nil {
			over = append(over, "-c", "filter."+driver+".required=false")
		}
	}
	return over, nil
}

// runsProgram reports whether a configuration key (as git config --list
// prints it: section and name in lower case) names a program to run.
func runsProgram(key string) bool {
	section, rest, _ := strings.Cut(key, ".")
	sub, name := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	switch section {
	case "filter":
		return sub != "" && (name == "clean" || name == "smudge" || name == "process")
	case "diff":
		return sub != "" && (name == "textconv" || name == "command")
	case "merge":
		return sub != "" && name == "driver"
	case "credential":
		return name == "helper"
	case "core":
		return sub == "" && (name == "sshcommand" || name == "askpass")
	}
	return false
}

func isCredentialHelper(key string) bool {
	return strings.HasPrefix(key, "credential.") && strings.HasSuffix(key, ".helper")
}

// filterDriver is the driver name of a filter.NAME.* key.
func filterDriver(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "filter.")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", false
	}
	return rest[:i], true
}

// neutral is the value of a program setting the user has not set: none,
// except for the ssh command, where it is plain ssh.
func neutral(key string) string {
	if key == "core.sshcommand" {
		return "ssh"
	}
	return ""
}

type configEntry struct{ scope, key, value string }

// parseConfigList reads git config --list --show-scope -z: entries end in
// NUL and are "scope NUL key LF value", or "scope NUL key" for a key
// without a value.
func parseConfigList(b []byte) []configEntry {
	var out []configEntry
	fields := strings.Split(string(b), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		key, value, _ := strings.Cut(fields[i+1], "\n")
		out = append(out, configEntry{scope: fields[i], key: key, value: value})
	}
	return out
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
