package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/internal/trust"
	"github.com/dynworkflow/dynworkflow/lang"
)

// startWorkflow runs a child workflow, one level deep, sharing the run's
// concurrency, agent cap, budget and journal. Its calls live under the
// workflow() call's path, and it has its own replay mode: an edited child
// under an unchanged parent replays by the edit rule, and vice versa.
func (r *Run) startWorkflow(ctx context.Context, f *frame, sc *scope, ref string, args json.RawMessage, done lang.Done) {
	elem := sc.Next("wf")
	if ctx.Err() != nil {
		done(nil, context.Cause(ctx))
		return
	}
	if err := callpolicy.Nest(f.depth, ref); err != nil {
		done(nil, err)
		return
	}
	if err := lang.CheckJSONNesting(fmt.Sprintf("workflow(%q): the args", ref), args, r.rt.maxNesting()); err != nil {
		done(nil, err)
		return
	}
	script, err := r.rt.ResolveWorkflow(ref, filepath.Dir(f.script.Path()))
	if err != nil {
		// A child with a syntax error is still a file the run depends on:
		// watch mode must see its next save.
		var le *lang.Error
		if errors.As(err, &le) && le.File != "" {
			r.noteFiles(le.File)
		}
		done(nil, fmt.Errorf("workflow(%q): %w", ref, err))
		return
	}
	r.noteFiles(script.Files()...)
	framePath := callpolicy.ChildFramePath(sc, elem, script.Meta().Name)
	child := newFrame(r, framePath, f.depth+1, script, args, sc)
	child.rule = r.policy.Ledger().Rule(framePath, child.policy.Identity, f.rule)
	r.append(&record{Type: recScript, Script: &scriptRecord{
		Frame: framePath, Name: script.Meta().Name, Path: script.Path(), Hash: script.Hash(), Text: string(script.Text()), Args: args,
	}})
	r.logLine(sc, "info", fmt.Sprintf("workflow %s started (%s)", script.Meta().Name, child.rule))
	ctx, release := r.callContext(ctx)
	r.calls.Add(1)
	done = onceDone(done)
	go func() {
		defer r.calls.Done()
		defer release()
		defer func() {
			if x := recover(); x != nil {
				done(nil, r.recovered(fmt.Sprintf("workflow(%q)", ref), x))
			}
		}()
		done(script.Run(ctx, child))
	}()
}

// ResolveWorkflow finds a workflow by path (relative to dir, then to the
// project) or by saved name: .claude/workflows/ and .dynworkflow/workflows/
// of the project, then the saved/ folders of the state. A project's saved
// workflow that has the name of one of the user's is used only once the
// user allowed its content (see ProjectWorkflowDoes).
func (rt *Runtime) ResolveWorkflow(ref, dir string) (lang.Script, error) {
	return ResolveWorkflow(rt.cfg.Hosts, rt.cfg.Cwd, rt.savedDirs(), ref, dir)
}

// ResolveWorkflow finds a workflow as Runtime.ResolveWorkflow does, for the
// project at cwd whose saved workflows are in savedDirs.
func ResolveWorkflow(hosts *lang.Registry, cwd string, savedDirs []string, ref, dir string) (lang.Script, error) {
	if ref == "" {
		return nil, errors.New("no workflow named: give a saved workflow's name or a script path")
	}
	if strings.ContainsAny(ref, `/\`) || hasExt(ref, hosts.Extensions()) {
		candidates := []string{ref}
		if !filepath.IsAbs(ref) {
			candidates = []string{filepath.Join(dir, ref), filepath.Join(cwd, ref)}
		}
		for _, p := range candidates {
			if _, err := os.Stat(p); err == nil {
				return hosts.LoadFile(p)
			}
		}
		return nil, notExist(fmt.Sprintf("no workflow file %s (looked in %s)", ref, strings.Join(uniq(candidates), ", ")))
	}
	dirs := append([]string{
		filepath.Join(cwd, ".claude", "workflows"),
		filepath.Join(cwd, ".dynworkflow", "workflows"),
	}, savedDirs...)
	for i, d := range dirs {
		for _, ext := range hosts.Extensions() {
			p := filepath.Join(d, ref+ext)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if i < 2 {
				return projectWorkflow(hosts, cwd, p, savedWorkflow(hosts, savedDirs, ref))
			}
			return hosts.LoadFile(p)
		}
	}
	return nil, notExist(fmt.Sprintf("no saved workflow named %q (looked in %s for %s)", ref, strings.Join(dirs, ", "), strings.Join(hosts.Extensions(), ", ")))
}

// notExist is a workflow that is not there: errors.Is(err, fs.ErrNotExist)
// holds, so that it is reported as not found wherever it is.
func notExist(msg string) error { return &missingError{msg} }

type missingError struct{ msg string }

func (e *missingError) Error() string { return e.msg }
func (e *missingError) Unwrap() error { return fs.ErrNotExist }

// savedWorkflow is the path of the user's saved workflow called name, or "".
func savedWorkflow(hosts *lang.Registry, savedDirs []string, name string) string {
	for _, d := range savedDirs {
		for _, ext := range hosts.Extensions() {
			p := filepath.Join(d, name+ext)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// ProjectWorkflowDoes says what a project's saved workflow that has the
// name of the user's saved workflow at path would do.
func ProjectWorkflowDoes(path string) string {
	return "it would run in place of your saved workflow " + path
}

// projectWorkflow loads the project's saved workflow at path. When it has
// the name of the user's saved workflow at users, it comes with a cloned
// repository or was written by an agent, and would run in the user's
// one's place: it is used only once the user allowed its content, and
// the call is refused until then, with the line that says how (or how to
// run the user's own by its path). The bytes checked are the bytes run.
func projectWorkflow(hosts *lang.Registry, cwd, path, users string) (lang.Script, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow: %w", err)
	}
	if users != "" {
		rel, err := filepath.Rel(cwd, path)
		if err != nil {
			return nil, err
		}
		if err := trust.Default().Check(cwd, rel, text, ProjectWorkflowDoes(users)); err != nil {
			return nil, err
		}
	}
	return hosts.Load(lang.Source{Path: path, Text: text})
}

func hasExt(name string, exts []string) bool {
	for _, e := range exts {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}

func uniq(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
