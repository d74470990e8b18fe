//go:build linux

package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/lang"
)

// hookScript is a script, written against the host contract directly,
// that makes one agent call and then runs a hook as its "last computation"
// before it returns: the moment a real script spends computing its result.
type hookScript struct {
	path string
	hook func()
}

func (s *hookScript) Path() string { return s.path }
func (s *hookScript) Meta() lang.Meta {
	return lang.Meta{Name: "hook", Description: "one call, then a hook"}
}
func (s *hookScript) Text() []byte    { return []byte("// hook script") }
func (s *hookScript) Hash() string    { return "hook" }
func (s *hookScript) Files() []string { return []string{s.path} }
func (s *hookScript) Run(ctx context.Context, env lang.Env) (json.RawMessage, error) {
	answered := make(chan error, 1)
	env.Agent(ctx, env.Root(), "the one call", lang.AgentOptions{}, func(_ json.RawMessage, err error) { answered <- err })
	if err := <-answered; err != nil {
		return nil, err
	}
	s.hook()
	return json.RawMessage(`"done"`), nil
}

// A run is completed only once its end record is durable. If the end
// cannot be journaled, it is failed, or paused when the lease was lost
// (another owner may hold the run), never completed.
func TestEndRecordDecidesTheOutcome(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hook   func(t *testing.T, r *Run)
		want   Status
		reason string
	}{
		{"lease lost", func(t *testing.T, r *Run) {
			// Another owner replaces the lock file.
			if err := os.Remove(r.paths.Lock); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(r.paths.Lock, []byte("{}"), 0o600); err != nil {
				t.Error(err)
			}
		}, StatusPaused, "lease was lost"},
		{"journal broken", func(t *testing.T, r *Run) {
			if err := r.journal.Close(); err != nil {
				t.Error(err)
			}
		}, StatusFailed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			st, err := store.Open(filepath.Join(t.TempDir(), "state"), cwd)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := New(Config{Store: st, Hosts: lang.NewRegistry(), Executors: executors.NewSet(simulate.New(simulate.Config{})), Cwd: cwd})
			if err != nil {
				t.Fatal(err)
			}
			// The hook needs the run, which Start returns once the
			// script may already be running.
			var r *Run
			ready := make(chan struct{})
			s := &hookScript{path: filepath.Join(cwd, "hook.workflow.js"), hook: func() { <-ready; tc.hook(t, r) }}
			r, err = rt.Start(context.Background(), StartRequest{Script: s, Options: DefaultOptions()})
			if err != nil {
				t.Fatal(err)
			}
			close(ready)
			o, err := r.Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tc.want || o.Error == "" || string(o.Result) != "null" {
				t.Fatalf("status %s, result %s, error %q; want %s with an error and no result", o.Status, o.Result, o.Error, tc.want)
			}
			if !strings.Contains(o.PauseReason, tc.reason) || tc.reason == "" && o.PauseReason != "" {
				t.Errorf("pause reason %q, want one saying %q", o.PauseReason, tc.reason)
			}
		})
	}
}
