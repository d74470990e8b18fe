package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynworkflow/dynworkflow/engine/temporal/index"
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
	"github.com/dynworkflow/dynworkflow/internal/trust"
)

// backendFile is the project's choice of backend:
// {"backend": "temporal", "temporal": {"address": ..., "namespace": ..., "taskQueue": ...}}.
const backendFile = ".dynworkflow/backend.json"

// The backends a run can execute on.
const (
	backendLocal    = "local"
	backendTemporal = "temporal"
)

// backendFlags choose where a run executes: here, or on Temporal. A flag
// the user gives wins over the environment (DYNWORKFLOW_BACKEND,
// DYNWORKFLOW_TEMPORAL_ADDRESS, DYNWORKFLOW_TEMPORAL_NAMESPACE,
// DYNWORKFLOW_TASK_QUEUE), which wins over the project's backend file.
type backendFlags struct {
	backend          string
	temporal         index.Config
	awaitCheckpoints bool
	heartbeat        time.Duration
}

func (b *backendFlags) register(fs *pflag.FlagSet, forRuns bool) {
	if forRuns {
		fs.StringVar(&b.backend, "backend", backendLocal, "where the run executes: local, or temporal (its agents run on `dynworkflow worker` processes)")
		fs.BoolVar(&b.awaitCheckpoints, "await-checkpoints", false, "on Temporal, checkpoints wait for `dynworkflow respond` instead of taking their headless default")
		fs.DurationVar(&b.heartbeat, "heartbeat-timeout", index.DefaultHeartbeat, "on Temporal, how long a worker may go silent while an agent runs before another worker takes the call")
	}
	fs.StringVar(&b.temporal.Address, "temporal-address", "", "Temporal frontend HOST:PORT (default 127.0.0.1:7233)")
	fs.StringVar(&b.temporal.Namespace, "temporal-namespace", "", "Temporal namespace (default \"default\")")
	fs.StringVar(&b.temporal.TaskQueue, "task-queue", "", "Temporal task queue the runs and workers share (default \"dynworkflow\")")
	fs.StringVar(&b.temporal.Blobs, "blob-dir", "", "on Temporal, the directory of answers and transcripts too large for a history; every worker and client of a run must share it (default: blobs/ in the state directory)")
}

// backendFileDoes says what the backend file could make dynworkflow do.
const backendFileDoes = "it names a server to send runs, their scripts, args and prompts to"

// resolve fills in what the user left unset from the environment and the
// project's backend file. The file names a server that runs, with their
// scripts, args and answers, are sent to: it comes with a cloned
// repository, and an agent can write it, so it is used only once the user
// allowed its content; until then notAllowed (app.projectFile) decides.
func (b *backendFlags) resolve(cmd *cobra.Command, project string, gate execconfig.Checker, notAllowed func(*trust.NotAllowedError) error) error {
	var file struct {
		Backend  string       `json:"backend"`
		Temporal index.Config `json:"temporal"`
	}
	raw, err := os.ReadFile(filepath.Join(project, backendFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		err := gate.Check(project, backendFile, raw, backendFileDoes)
		var na *trust.NotAllowedError
		switch {
		case errors.As(err, &na):
			if err := notAllowed(na); err != nil {
				return err
			}
			raw = nil
		case err != nil:
			return err
		}
		if raw != nil {
			if err := json.Unmarshal(raw, &file); err != nil {
				return usageErrorf("%s: %v", filepath.Join(project, backendFile), err)
			}
		}
	}
	pick := func(flag string, v *string, env, fromFile, def string) {
		if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
			return
		}
		for _, s := range []string{os.Getenv(env), fromFile, def} {
			if s != "" {
				*v = s
				return
			}
		}
	}
	pick("backend", &b.backend, "DYNWORKFLOW_BACKEND", file.Backend, backendLocal)
	pick("temporal-address", &b.temporal.Address, "DYNWORKFLOW_TEMPORAL_ADDRESS", file.Temporal.Address, "127.0.0.1:7233")
	pick("temporal-namespace", &b.temporal.Namespace, "DYNWORKFLOW_TEMPORAL_NAMESPACE", file.Temporal.Namespace, index.DefaultNamespace)
	pick("task-queue", &b.temporal.TaskQueue, "DYNWORKFLOW_TASK_QUEUE", file.Temporal.TaskQueue, index.DefaultTaskQueue)
	pick("blob-dir", &b.temporal.Blobs, "DYNWORKFLOW_BLOB_DIR", file.Temporal.Blobs, "")
	if b.backend != backendLocal && b.backend != backendTemporal {
		return usageErrorf("--backend must be local or temporal, not %q", b.backend)
	}
	return nil
}

// resolveBackend reads the backend flags' defaults for the project, for a
// command that only looks at runs: a backend file that is not allowed is
// left out, after the line that says so.
func (a *app) resolveBackend(cmd *cobra.Command, bf *backendFlags) error {
	return a.resolveBackendFor(cmd, bf, false)
}

// resolveBackendFor is resolveBackend for a command that starts or resumes
// runs, or works for them (strict): a backend file that is not allowed
// stops it.
func (a *app) resolveBackendFor(cmd *cobra.Command, bf *backendFlags, strict bool) error {
	cwd, err := a.projectDir()
	if err != nil {
		return err
	}
	return bf.resolve(cmd, cwd, trust.Default(), func(na *trust.NotAllowedError) error { return a.projectFile(na, strict) })
}
