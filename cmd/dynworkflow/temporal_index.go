package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
)

// errNoCompanion is the failure of a command that needs Temporal in the
// build without it, when the build with it is not installed
// (companion.go).
var errNoCompanion = errors.New("this build of dynworkflow has no Temporal client")

// temporalIndex opens the project's index of its runs on Temporal.
func (a *app) temporalIndex() (index.Index, error) {
	cwd, err := a.projectDir()
	if err != nil {
		return index.Index{}, err
	}
	root, err := a.stateRoot()
	if err != nil {
		return index.Index{}, err
	}
	return index.Open(filepath.Join(root, "projects", store.ProjectID(cwd))), nil
}

// temporalEntry returns the index entry of run id, if the run is on
// Temporal.
func (a *app) temporalEntry(id string) (index.Entry, bool, error) {
	if store.ValidRunID(id) != nil {
		return index.Entry{}, false, nil // the local path reports the bad id
	}
	ix, err := a.temporalIndex()
	if err != nil {
		return index.Entry{}, false, err
	}
	return ix.Get(id)
}

// mergeSummaries lists local and Temporal runs together, newest first.
func mergeSummaries(local, remote []store.Summary) []store.Summary {
	out := append(local, remote...)
	slices.SortStableFunc(out, func(a, b store.Summary) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.RunID, a.RunID)
	})
	return out
}

// mayAdopt says whether an id no run of the project has should be looked
// for on Temporal: when the backend settings name Temporal and the project
// has no local run of that id.
func (a *app) mayAdopt(cmd *cobra.Command, bf *backendFlags, id string) (bool, error) {
	if store.ValidRunID(id) != nil {
		return false, nil
	}
	if err := a.resolveBackend(cmd, bf); err != nil || bf.backend != backendTemporal {
		return false, err
	}
	cwd, err := a.projectDir()
	if err != nil {
		return false, err
	}
	root, err := a.stateRoot()
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(filepath.Join(root, "projects", store.ProjectID(cwd), "runs", id+".jsonl")); err == nil {
		return false, nil
	}
	return true, nil
}

// resolveRun resolves a command's run argument as runIDArg does (an id,
// a prefix, or "last", over the local runs and the project's runs on
// Temporal), and says whether the run is on Temporal. An id no run of the
// project has is looked for on the Temporal the backend settings name,
// and adopted when found there.
func (a *app) resolveRun(cmd *cobra.Command, bf *backendFlags, typed string) (string, index.Entry, bool, error) {
	id, err := a.runIDArg(typed)
	if err == nil {
		e, ok, err := a.temporalEntry(id)
		return id, e, ok, err
	}
	if !errors.Is(err, engine.ErrNotFound) {
		return "", index.Entry{}, false, err
	}
	if ok, aerr := a.mayAdopt(cmd, bf, typed); aerr != nil || !ok {
		if aerr != nil {
			err = aerr
		}
		return "", index.Entry{}, false, err
	}
	e, ok, aerr := a.adoptTemporal(cmd, bf, typed)
	switch {
	case aerr != nil:
		return "", e, false, aerr
	case !ok:
		return "", e, false, err
	}
	return e.RunID, e, true, nil
}

// temporalSchedules lists the project's schedules on Temporal.
func (a *app) temporalSchedules() ([]index.Schedule, error) {
	ix, err := a.temporalIndex()
	if err != nil {
		return nil, err
	}
	return ix.Schedules()
}

// temporalEntries lists the project's index of its runs on Temporal.
func (a *app) temporalEntries() ([]index.Entry, error) {
	ix, err := a.temporalIndex()
	if err != nil {
		return nil, err
	}
	return ix.List()
}
