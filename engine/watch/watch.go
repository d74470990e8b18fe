// Package watch re-runs a workflow each time one of its files is saved.
//
// It follows the directories of every file a run pulled in (the script, its
// Starlark load()s, the child workflows it ran), so a save is seen whether
// the editor writes in place, renames a temporary file over the original,
// or deletes and recreates it. A burst of saves becomes one reload. The new
// script is loaded and checked first: a script that does not load leaves
// the current run going. Otherwise the run is paused and resumed with the
// new script under the edit-and-resume rule, so a save costs only the calls
// it changed; a run that had already finished is re-run the same way.
package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dynworkflow/dynworkflow/engine"
)

// DefaultDebounce is how long the files must stay quiet before a reload:
// long enough to fold an editor's write-rename-chmod into one save, short
// enough that the save feels immediate.
const DefaultDebounce = 150 * time.Millisecond

// Kind says what an Event reports.
type Kind int

const (
	// Changed: watched files changed; a reload begins.
	Changed Kind = iota
	// LoadFailed: the saved script does not load; the current run goes on.
	LoadFailed
	// Reloaded: the run was resumed with the saved script.
	Reloaded
	// Ended: an execution of the run ended.
	Ended
	// Failed: a reload could not start the run again.
	Failed
)

// Event is one step of the watch loop.
type Event struct {
	Kind Kind
	// Reload counts the reloads that started so far.
	Reload int
	// Files are the changed files (Changed).
	Files []string
	// Err is why a load or reload failed.
	Err error
	// Run is the execution now current (Reloaded, Ended).
	Run *engine.Run
	// Outcome is how the execution ended (Ended).
	Outcome engine.Outcome
}

// Options tune Follow.
type Options struct {
	// Debounce is the quiet period before a reload; 0 means DefaultDebounce.
	Debounce time.Duration
}

// Watcher re-runs one run on every save of its files.
type Watcher struct {
	rt     *engine.Runtime
	run    *engine.Run
	main   string
	opts   Options
	fsw    *fsnotify.Watcher
	events chan<- Event
	dirs   map[string]bool
	files  map[string]bool
	reload int
}

// New watches run's files. The watches are in place when it returns, so
// no save made after it can be missed.
func New(rt *engine.Runtime, run *engine.Run, opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{rt: rt, run: run, main: mainFile(run), opts: opts, fsw: fsw, dirs: map[string]bool{}, files: map[string]bool{}}
	if err := w.follow(); err != nil {
		fsw.Close()
		return nil, err
	}
	return w, nil
}

// Run resumes the run with the saved script on every change, reporting
// each step on events, until ctx is done; then it stops watching. The
// caller owns the current run (the latest Reloaded, or the one given to
// New) and pauses it when it stops.
func (w *Watcher) Run(ctx context.Context, events chan<- Event) error {
	defer w.fsw.Close()
	w.events = events
	return w.loop(ctx)
}

func (w *Watcher) loop(ctx context.Context) error {
	// Child workflows are loaded while the run goes on: pick up their files
	// as they appear. Reading the run's list is cheap.
	refresh := time.NewTicker(100 * time.Millisecond)
	defer refresh.Stop()
	var quiet <-chan time.Time
	var timer *time.Timer
	var changed []string
	runDone := w.run.Done()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-runDone:
			runDone = nil
			if err := w.follow(); err != nil {
				return err
			}
			if !w.send(ctx, Event{Kind: Ended, Reload: w.reload, Run: w.run, Outcome: w.run.Outcome()}) {
				return ctx.Err()
			}
		case <-refresh.C:
			if err := w.follow(); err != nil {
				return err
			}
		case err := <-w.fsw.Errors:
			return fmt.Errorf("watch: %w", err)
		case ev := <-w.fsw.Events:
			name := filepath.Clean(ev.Name)
			if !w.files[name] {
				// The run may have pulled the file in since the last refresh.
				if err := w.follow(); err != nil {
					return err
				}
			}
			if !w.files[name] || ev.Op == fsnotify.Chmod {
				continue
			}
			if !contains(changed, name) {
				changed = append(changed, name)
			}
			if timer == nil {
				timer = time.NewTimer(w.opts.Debounce)
			} else {
				timer.Reset(w.opts.Debounce)
			}
			quiet = timer.C
		case <-quiet:
			quiet = nil
			files := changed
			changed = nil
			if !w.reloadNow(ctx, files) {
				return ctx.Err()
			}
			runDone = w.run.Done()
		}
	}
}

// reloadNow loads the saved script and, if it loads, resumes the run with
// it. It reports false when ctx ended while it waited.
func (w *Watcher) reloadNow(ctx context.Context, files []string) bool {
	script, err := w.rt.Hosts().LoadFile(w.main)
	if err != nil {
		return w.send(ctx, Event{Kind: LoadFailed, Reload: w.reload, Files: files, Err: err})
	}
	w.reload++
	if !w.send(ctx, Event{Kind: Changed, Reload: w.reload, Files: files}) {
		return false
	}
	select {
	case <-w.run.Done():
	default:
		_ = w.run.Pause()
		select {
		case <-w.run.Done():
		case <-ctx.Done():
			return false
		}
	}
	next, err := w.rt.Resume(ctx, w.run.ID(), engine.ResumeRequest{Script: script})
	if err != nil {
		return w.send(ctx, Event{Kind: Failed, Reload: w.reload, Files: files, Err: err})
	}
	w.run = next
	return w.send(ctx, Event{Kind: Reloaded, Reload: w.reload, Files: files, Run: next})
}

// follow adds the run's files, and watches the directories they live in:
// watching a file itself would lose it when an editor renames over it.
func (w *Watcher) follow() error {
	for _, f := range w.run.Files() {
		f = filepath.Clean(f)
		w.files[f] = true
		dir := filepath.Dir(f)
		if w.dirs[dir] {
			continue
		}
		if err := w.fsw.Add(dir); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return fmt.Errorf("watch %s: %w", dir, err)
		}
		w.dirs[dir] = true
	}
	return nil
}

func (w *Watcher) send(ctx context.Context, ev Event) bool {
	select {
	case w.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// mainFile is the run's script: the first of its files.
func mainFile(r *engine.Run) string {
	if files := r.Files(); len(files) > 0 {
		return files[0]
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
