package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/agentcli"
	"github.com/dynworkflow/dynworkflow/executors/command"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
)

// check is one line of doctor's report.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Fix says what to do about a check that failed, when we know.
	Fix string `json:"fix,omitempty"`
	// Required is true when a failure makes doctor exit 1: the state,
	// the configuration, and the executors the configuration uses.
	Required bool `json:"required,omitempty"`
}

// doctorReport is doctor's --json output.
type doctorReport struct {
	OK            bool               `json:"ok"`
	Checks        []check            `json:"checks"`
	Configuration *execconfig.Config `json:"configuration,omitempty"`
}

func (a *app) doctorCommand() *cobra.Command {
	var probe bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the state directory, languages, executor configuration and executors",
		Long: `Check the state directory, the script languages, the executor configuration
(.dynworkflow/executors.json and the user's file) and each executor: whether its
binary is found, its version, and every configured value with where it came from.
With --probe, also run one tiny agent call ("Reply with the single word OK.") on
every executor whose binary is found: that call goes to the model the executor is
configured for, and costs a few tokens.

Exit codes: 0 when the state, the configuration and every executor it uses (the
default executor and any it configures) are usable; 1 otherwise, with the fix.`,
		Args: exactArgs(0, "doctor takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep := a.doctor(cmd.Context(), probe)
			if a.json {
				if err := encodeJSON(a.stdout, rep); err != nil {
					return err
				}
			} else {
				printDoctor(a.stdout, rep)
			}
			if !rep.OK {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&probe, "probe", false, "run one tiny live agent call on each executor whose binary is found")
	return cmd
}

// doctor runs every check.
func (a *app) doctor(ctx context.Context, probe bool) doctorReport {
	var rep doctorReport
	add := func(c check) { rep.Checks = append(rep.Checks, c) }
	add(check{Name: "runtime", OK: true, Detail: fmt.Sprintf("dynworkflow built with %s on %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)})
	cwd, err := a.projectDir()
	if err != nil {
		add(check{Name: "project", Detail: err.Error(), Required: true})
		return finishDoctor(rep)
	}
	add(a.checkState(cwd))
	add(check{Name: "languages", OK: true, Detail: strings.Join(a.hosts().Extensions(), ", ")})

	cfg, err := a.executorConfig(cwd)
	if err != nil {
		add(check{Name: "configuration", Detail: err.Error(), Fix: "correct the file at the line named", Required: true})
		return finishDoctor(rep)
	}
	rep.Configuration = cfg
	files := "project " + describeFile(cfg.ProjectFile, cfg.Read)
	if cfg.NotAllowed != nil {
		files = "project file not allowed (below)"
	}
	if cfg.UserFile != "" {
		files += "; user " + describeFile(cfg.UserFile, cfg.Read)
	}
	add(check{Name: "configuration", OK: true, Detail: files})
	if na := cfg.NotAllowed; na != nil {
		// Nothing the file names is run, not even --version: the executors
		// below are configured without it.
		add(check{Name: "project file", Detail: na.Error(), Required: true})
	}
	add(check{Name: "default executor", OK: cfg.Get(cfg.DefaultExecutor.Value) != nil, Required: true,
		Detail: fmt.Sprintf("%s (%s)", cfg.DefaultExecutor.Value, cfg.DefaultExecutor.Source)})
	add(check{Name: "concurrency", OK: true, Detail: fmt.Sprintf("%d agents at once unless --concurrency says (built-in)", engine.DefaultConcurrency)})

	log := slog.New(slog.DiscardHandler)
	scratch := ""
	if root, err := a.stateRoot(); err == nil {
		scratch = filepath.Join(root, scratchDir)
	}
	for _, e := range cfg.Executors {
		c := check{Name: "executor " + e.Name, Required: e.Configured || e.Name == cfg.DefaultExecutor.Value}
		exec := buildExecutor(e, simulate.Config{}, nil, log, scratch)
		if cli, ok := exec.(cliExecutor); ok {
			c.OK, c.Detail, c.Fix = a.checkExecutor(ctx, cli, cwd, probe)
		} else {
			c.OK, c.Detail = true, "built in"
			if e.Name == simulate.Name {
				c.Detail = "built in: simulated answers, no model"
			}
		}
		c.Detail += describeExecutor(e)
		add(c)
	}
	return finishDoctor(rep)
}

func finishDoctor(rep doctorReport) doctorReport {
	rep.OK = true
	for _, c := range rep.Checks {
		if c.Required && !c.OK {
			rep.OK = false
		}
	}
	return rep
}

// checkState checks that the state directory is writable.
func (a *app) checkState(cwd string) check {
	root, err := a.stateRoot()
	if err == nil {
		var st *store.Store
		if st, err = store.Open(root, cwd); err == nil {
			probe := filepath.Join(st.ProjectDir(), ".doctor-probe")
			if err = os.WriteFile(probe, []byte("ok"), 0o600); err == nil {
				err = os.Remove(probe)
			}
			if err == nil {
				return check{Name: "state", OK: true, Required: true, Detail: fmt.Sprintf("%s (project %s), writable", root, store.ProjectID(cwd))}
			}
		}
	}
	return check{Name: "state", Required: true, Detail: err.Error(), Fix: "pass a writable --state-dir, or set DYNAMIC_WORKFLOWS_HOME"}
}

func describeFile(path string, read []string) string {
	if slices.Contains(read, path) {
		return path
	}
	return path + " (none)"
}

// describeExecutor lists an executor's effective values with their
// sources, one per line.
func describeExecutor(e *execconfig.Executor) string {
	var b strings.Builder
	line := func(name, value, source string) {
		if value == "" {
			value = "-"
		}
		fmt.Fprintf(&b, "\n      %-12s %s (%s)", name, value, source)
	}
	if e.Command != nil {
		line("command", strings.Join(e.Command.Value, " "), e.Command.Source)
		if (command.Spec{Name: e.Name, Words: e.Command.Value}).PromptInArgs() {
			line("warning", "it "+promptInArgsWarning, e.Command.Source)
		}
	} else if e.Binary.Value != "" {
		line("binary", e.Binary.Value, e.Binary.Source)
	}
	line("model", e.Model.Value, e.Model.Source)
	line("effort", e.Effort.Value, e.Effort.Source)
	line("permissions", string(e.Permissions.Value), e.Permissions.Source)
	timeout := "none"
	if e.Timeout.Value > 0 {
		timeout = e.Timeout.Value.String()
	}
	line("timeout", timeout, e.Timeout.Source)
	idle := callpolicy.DefaultIdleTimeout.String()
	switch v := e.IdleTimeout.Value; {
	case v < 0:
		idle = "off"
	case v > 0:
		idle = v.String()
	}
	line("idle timeout", idle, e.IdleTimeout.Source)
	if len(e.Args.Value) > 0 {
		line("args", strings.Join(e.Args.Value, " "), e.Args.Source)
	}
	for _, kv := range e.EnvList() {
		k, _, _ := strings.Cut(kv, "=")
		// Values may be keys: doctor's output is pasted into bug reports.
		line("env", k+"=…", e.Env[k].Source)
	}
	return b.String()
}

func printDoctor(w io.Writer, rep doctorReport) {
	for _, c := range rep.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "--  "
		}
		fmt.Fprintf(w, "%s%-20s %s\n", mark, c.Name, c.Detail)
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(w, "      %-12s %s\n", "fix", c.Fix)
		}
	}
	if !rep.OK {
		fmt.Fprintln(w, "\nsomething the configuration uses is not usable: see the lines marked --")
	}
}

// probeTimeout bounds doctor's live call on one executor.
const probeTimeout = time.Minute

// checkExecutor reports whether e's binary is found, its version, and
// with probe the outcome of one tiny live call; on failure, the fix.
func (a *app) checkExecutor(ctx context.Context, e cliExecutor, dir string, probe bool) (ok bool, detail, fix string) {
	path, err := e.LookPath()
	if err != nil {
		return false, fmt.Sprintf("%s not found on PATH", e.BinaryName()), executors.FixOf(err)
	}
	version, err := e.Version(ctx)
	if err != nil || version == "" {
		version = "version unknown"
	}
	detail = fmt.Sprintf("%s at %s", version, path)
	if !probe {
		return true, detail, ""
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	started := time.Now()
	// The probe runs with the executor's configured model, read-only.
	req := executors.Request{RunID: "doctor", Path: "probe", Prompt: "Reply with the single word OK.", Dir: dir,
		Permissions: executors.ReadOnly, Attempt: 1}
	res, err := e.Run(ctx, req, nil)
	if err != nil {
		return false, fmt.Sprintf("%s; probe failed (%s): %v", detail, executors.ClassOf(err), err), executors.FixOf(err)
	}
	return true, fmt.Sprintf("%s; probe answered %q in %v (%d tokens in, %d out)", detail,
		agentcli.Truncate(strings.TrimSpace(res.Text), 40), time.Since(started).Round(time.Millisecond), res.Usage.InputTokens, res.Usage.OutputTokens), ""
}
