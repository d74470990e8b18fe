package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/command"
)

// check is one line of doctor's report.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func (a *app) doctorCommand() *cobra.Command {
	var probe bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the state directory, script languages and executors",
		Long: `Check the state directory, the script languages, and each executor: whether
its binary is found and its version. With --probe, also run one tiny agent call
("Reply with the single word OK.") on every executor whose binary is found:
that call goes to the model the CLI is configured for, and costs a few tokens.`,
		Args: exactArgs(0, "doctor takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var checks []check
			add := func(name string, ok bool, format string, args ...any) {
				checks = append(checks, check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
			}
			add("runtime", true, "dynworkflow built with %s on %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			cwd, err := a.projectDir()
			if err != nil {
				return err
			}
			root, err := a.stateRoot()
			if err == nil {
				var st *store.Store
				if st, err = store.Open(root, cwd); err == nil {
					probe := filepath.Join(st.ProjectDir(), ".doctor-probe")
					if err = os.WriteFile(probe, []byte("ok"), 0o600); err == nil {
						err = os.Remove(probe)
					}
					if err == nil {
						add("state", true, "%s (project %s), writable", root, store.ProjectID(cwd))
					}
				}
			}
			if err != nil {
				add("state", false, "%v", err)
			}
			add("languages", true, "%s", strings.Join(a.hosts().Extensions(), ", "))
			add("executor simulate", true, "built in")
			log := slog.New(slog.DiscardHandler)
			clis := cliExecutors(nil, log)
			specs, err := a.commandSpecs(cwd)
			if err != nil {
				return err
			}
			for _, s := range specs {
				clis = append(clis, command.New(s, agentcli.Config{Logger: log}))
			}
			for _, e := range clis {
				ok, detail := a.checkExecutor(cmd.Context(), e, cwd, probe)
				add("executor "+e.Name(), ok, "%s", detail)
			}
			if a.json {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(checks)
			}
			failed := false
			for _, c := range checks {
				mark := "ok  "
				if !c.OK {
					mark = "--  "
				}
				fmt.Fprintf(a.stdout, "%s%-20s %s\n", mark, c.Name, c.Detail)
				failed = failed || (!c.OK && c.Name == "state")
			}
			if failed {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&probe, "probe", false, "run one tiny live agent call on each executor whose binary is found")
	return cmd
}

// probeTimeout bounds doctor's live call on one executor.
const probeTimeout = time.Minute

// checkExecutor reports whether e's binary is found, its version, and
// with probe the outcome of one tiny live call.
func (a *app) checkExecutor(ctx context.Context, e cliExecutor, dir string, probe bool) (bool, string) {
	path, err := e.LookPath()
	if err != nil {
		return false, fmt.Sprintf("%s not found on PATH", e.BinaryName())
	}
	version, err := e.Version(ctx)
	if err != nil || version == "" {
		version = "version unknown"
	}
	detail := fmt.Sprintf("%s at %s", version, path)
	if !probe {
		return true, detail
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	started := time.Now()
	res, err := e.Run(ctx, executors.Request{RunID: "doctor", Path: "probe", Prompt: "Reply with the single word OK.", Dir: dir, Attempt: 1}, nil)
	if err != nil {
		return false, fmt.Sprintf("%s; probe failed (%s): %v", detail, executors.ClassOf(err), err)
	}
	return true, fmt.Sprintf("%s; probe answered %q in %v (%d tokens in, %d out)", detail,
		agentcli.Truncate(strings.TrimSpace(res.Text), 40), time.Since(started).Round(time.Millisecond), res.Usage.InputTokens, res.Usage.OutputTokens)
}
