// Package trust keeps the user's consent to a project's files that can
// make dynworkflow run a program or send data elsewhere: the executor
// configuration (binaries, arguments, environment, command templates),
// the backend file (a server's address), and saved workflows that would
// run in place of the user's own. Such a file comes with a cloned
// repository or is written by an agent; like direnv's .envrc, it is
// ignored until the user approves that exact content.
//
// An approval pins the file's SHA-256 for one project directory (its
// path, symbolic links resolved) and lives outside every project, in the
// user's configuration directory:
// $XDG_CONFIG_HOME/dynworkflow/allowed/ (else ~/.config/...), one small
// JSON file per approved project file. Any change to the file, by a git
// pull or by an agent, no longer matches, and withdraws the approval.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Store is the user's approvals.
type Store struct {
	dir string
}

// ConfigDir is the user's dynworkflow directory, which holds both the
// approvals and the user's own configuration files: under
// $XDG_CONFIG_HOME, else ~/.config; "" when neither can be found.
func ConfigDir() string {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "dynworkflow")
}

// Dir is the directory of the user's approvals, in ConfigDir; "" when
// that cannot be found.
func Dir() string {
	dir := ConfigDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "allowed")
}

// Default is the user's store (see Dir).
func Default() *Store { return At(Dir()) }

// At is the store kept in dir.
func At(dir string) *Store { return &Store{dir: dir} }

// Approval is one approved project file.
type Approval struct {
	// Project is the project directory, symbolic links resolved.
	Project string `json:"project"`
	// File is the file's path relative to Project, with slashes.
	File string `json:"file"`
	// SHA256 is the approved content's hash, in hex.
	SHA256 string `json:"sha256"`
	// At is when the user approved it.
	At time.Time `json:"allowedAt"`
}

// Path is the approved file's path.
func (a Approval) Path() string { return filepath.Join(a.Project, filepath.FromSlash(a.File)) }

// Matches reports whether the file on disk still has the approved
// content (false when it is gone or unreadable).
func (a Approval) Matches() bool {
	b, err := os.ReadFile(a.Path())
	return err == nil && Hash(b) == a.SHA256
}

// Hash is the hex SHA-256 of content.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// NotAllowedError says that a project file is ignored for want of the
// user's approval of its content.
type NotAllowedError struct {
	// Project is the project directory, File the file's path in it.
	Project, File string
	// Changed is true when the user approved other content of the file:
	// it changed since.
	Changed bool
	// Does says what the file could make dynworkflow do.
	Does string
}

func (e *NotAllowedError) Error() string {
	state := "new to you"
	if e.Changed {
		state = "changed since you allowed it"
	}
	return fmt.Sprintf("%s is not allowed (%s; %s): review it, then run %s",
		filepath.Join(e.Project, filepath.FromSlash(e.File)), state, e.Does, AllowCommand(e.Project))
}

// AllowCommand is the command that approves the files of project, to be
// run from anywhere.
func AllowCommand(project string) string {
	return "dynworkflow allow --cwd " + shellQuote(project)
}

// Project is the form of a project directory approvals are keyed by: its
// absolute path with symbolic links resolved.
func Project(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	return real, nil
}

// Check returns nil when the user approved exactly content for file (a
// path relative to project) and a *NotAllowedError otherwise; does says
// what the file could make dynworkflow do, for the message. Other errors
// are failures to read the store: the file is not allowed then either.
func (s *Store) Check(project, file string, content []byte, does string) error {
	p, err := Project(project)
	if err != nil {
		return fmt.Errorf("check whether %s is allowed: %w", filepath.Join(project, file), err)
	}
	file = filepath.ToSlash(filepath.Clean(file))
	a, err := s.read(p, file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &NotAllowedError{Project: p, File: file, Does: does}
	case err != nil:
		return err
	case a.SHA256 != Hash(content):
		return &NotAllowedError{Project: p, File: file, Changed: true, Does: does}
	}
	return nil
}

// Allow approves content for file of project.
func (s *Store) Allow(project, file string, content []byte) (Approval, error) {
	p, err := Project(project)
	if err != nil {
		return Approval{}, err
	}
	a := Approval{Project: p, File: filepath.ToSlash(filepath.Clean(file)), SHA256: Hash(content), At: time.Now().UTC().Truncate(time.Second)}
	if s.dir == "" {
		return a, errors.New("no configuration directory to keep approvals in: set XDG_CONFIG_HOME or HOME")
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return a, fmt.Errorf("keep the approval: %w", err)
	}
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return a, err
	}
	// A new file renamed into place: a reader never sees half of one.
	tmp, err := os.CreateTemp(s.dir, ".allow-*")
	if err != nil {
		return a, fmt.Errorf("keep the approval: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return a, fmt.Errorf("keep the approval: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path(p, a.File)); err != nil {
		_ = os.Remove(tmp.Name())
		return a, fmt.Errorf("keep the approval: %w", err)
	}
	return a, nil
}

// Revoke withdraws the approval of file of project and reports whether
// there was one.
func (s *Store) Revoke(project, file string) (bool, error) {
	p, err := Project(project)
	if err != nil {
		// A project that is gone can still have approvals to forget.
		p = filepath.Clean(project)
	}
	err = os.Remove(s.path(p, filepath.ToSlash(filepath.Clean(file))))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// List returns every approval, sorted by project and file.
func (s *Store) List() ([]Approval, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) || s.dir == "" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Approval
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		a, err := readApproval(filepath.Join(s.dir, e.Name()))
		if err != nil {
			continue // not ours, or damaged: it approves nothing
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Project != out[j].Project {
			return out[i].Project < out[j].Project
		}
		return out[i].File < out[j].File
	})
	return out, nil
}

// path is where the approval of file of project is kept: one file per
// project file, named by a hash of both, so that approving one never
// rewrites another's.
func (s *Store) path(project, file string) string {
	sum := sha256.Sum256([]byte(project + "\x00" + file))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".json")
}

func (s *Store) read(project, file string) (Approval, error) {
	if s.dir == "" {
		return Approval{}, fs.ErrNotExist
	}
	a, err := readApproval(s.path(project, file))
	if err != nil {
		return a, err
	}
	if a.Project != project || a.File != file {
		return a, fs.ErrNotExist // a collision, or a file that is not ours
	}
	return a, nil
}

func readApproval(path string) (Approval, error) {
	var a Approval
	b, err := os.ReadFile(path)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
