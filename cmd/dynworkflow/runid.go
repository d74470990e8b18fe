package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/web"
)

// lastRun is the word that names the project's newest run.
const lastRun = "last"

// resolveRunID turns what the user typed into a run id: a full id, "last"
// (the newest run), or a prefix that only one run's id starts with. An id
// that names no run is an error that suggests the ids it is close to.
func resolveRunID(st *store.Store, typed string) (string, error) {
	if typed != lastRun {
		if err := store.ValidRunID(typed); err != nil {
			return "", err
		}
		if _, err := os.Stat(st.RunPaths(typed).Journal); err == nil {
			return typed, nil
		}
	}
	ix := index.Open(st.ProjectDir())
	if typed != lastRun {
		if _, ok, _ := ix.Get(typed); ok {
			return typed, nil
		}
	}
	sums, err := st.ListSummaries()
	if err != nil {
		return "", err
	}
	// The project's runs on Temporal count too, as last seen: no call to
	// Temporal to resolve a name.
	if entries, err := ix.List(); err == nil && len(entries) > 0 {
		remote := make([]store.Summary, len(entries))
		for i, e := range entries {
			remote[i] = e.Summary
		}
		sums = mergeSummaries(sums, remote)
	}
	if typed == lastRun {
		if len(sums) == 0 {
			return "", fmt.Errorf("%w: the project has no runs yet, so there is no %q", engine.ErrNotFound, lastRun)
		}
		return sums[0].RunID, nil
	}
	var matches, ids []string
	for _, s := range sums {
		ids = append(ids, s.RunID)
		if strings.HasPrefix(s.RunID, typed) {
			matches = append(matches, s.RunID)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("%w: %s%s (see: dynworkflow list)", engine.ErrNotFound, typed, closeIDs(typed, ids))
	}
	shown := matches
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(matches)-5))
	}
	return "", &exitError{code: exitFailed, kind: codeAmbiguousID,
		err: fmt.Errorf("%q is the start of %d run ids: %s; type more of the id", typed, len(matches), strings.Join(shown, ", "))}
}

// runIDArg resolves the run id argument of a command. Commands that go
// to the live runtime resolve it here too: the runs on disk are the same.
func (a *app) runIDArg(typed string) (string, error) {
	st, err := a.openStore()
	if err != nil {
		return "", err
	}
	return resolveRunID(st, typed)
}

// checkExecutor fails with a suggestion when name is not an executor of
// the runtime: `--executor claude` is a usage error, found before anything
// is journaled.
func checkExecutor(rt *engine.Runtime, flag, name string) error {
	_, err := rt.Executors().Get(name)
	if err == nil {
		return nil
	}
	names := rt.Executors().Names()
	return usageError(web.CodeUnknownExecutor, fmt.Errorf("%s %s: %w%s (the executors are %s; more plug in with --command-executor)",
		flag, name, executors.ErrUnknownExecutor, didYouMean(name, names), strings.Join(names, ", ")))
}

// closeIDs suggests the ids whose start is a typo away from typed: an id
// is long, and what people type is usually its beginning.
func closeIDs(typed string, ids []string) string {
	limit := min(max(len(typed)/4, 1), 3)
	var near []string
	for _, id := range ids {
		head := id[:min(len(id), len(typed))]
		if editDistance(typed, head) <= limit {
			near = append(near, id)
		}
	}
	if len(near) == 0 || len(near) > 3 {
		return ""
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}
