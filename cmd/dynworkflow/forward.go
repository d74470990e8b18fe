package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/web"
)

// liveOwner returns a client of the project's live runtime (a running
// `dynworkflow serve`), or nil when there is none: no runtime.json, or
// one whose process does not answer /api/health as itself.
func (a *app) liveOwner(ctx context.Context) (*web.Client, web.Descriptor, error) {
	cwd, err := a.projectDir()
	if err != nil {
		return nil, web.Descriptor{}, err
	}
	root, err := a.stateRoot()
	if err != nil {
		return nil, web.Descriptor{}, err
	}
	path := store.RuntimePath(root, store.ProjectID(cwd))
	cl, d, err := web.Connect(ctx, path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && os.Getenv("DYNWORKFLOW_DEBUG") != "" {
			fmt.Fprintln(a.stderr, "dynworkflow: no live runtime:", err)
		}
		return nil, d, nil
	}
	return cl, d, nil
}

// nodeOwner returns a client of the project's live Node runtime (a serve
// of npm @fish59fish/dynamic-workflows that wrote runtime.json), or nil
// when it has none; see web.ConnectNode for what is checked first.
func (a *app) nodeOwner(ctx context.Context) *web.NodeClient {
	cwd, err := a.projectDir()
	if err != nil {
		return nil
	}
	root, err := a.stateRoot()
	if err != nil {
		return nil
	}
	nc, err := web.ConnectNode(ctx, store.RuntimePath(root, store.ProjectID(cwd)), cwd)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, web.ErrNotNode) && os.Getenv("DYNWORKFLOW_DEBUG") != "" {
			fmt.Fprintln(a.stderr, "dynworkflow: no live Node runtime:", err)
		}
		return nil
	}
	return nc
}

// nodeCommand is how to do cmd with the Node runtime's own CLI.
func nodeCommand(cmd string) string {
	return "npx -p @fish59fish/dynamic-workflows dynworkflow " + cmd
}

// errNodeOwns refuses to serve a project the Node runtime serves: one
// live owner per project, and replacing its runtime.json would cut its
// CLI off from it.
func errNodeOwns(nc *web.NodeClient, what string) error {
	d := nc.Descriptor
	return &exitError{code: exitFailed, err: fmt.Errorf("the Node runtime's serve (pid %d) owns this project at %s; "+
		"%s would take it over. Stop that serve first (Ctrl-C in its terminal), or use it: "+
		"`%s` starts a workflow there, and dynworkflow pause, resume, stop, delete and respond reach its runs",
		d.PID, d.URL, what, nodeCommand("run FILE"))}
}

// noteNodeOwner tells that a run executes here although the project's
// live runtime is the Node runtime's: it runs dynworkflow's engine and
// executors, which that runtime does not have; it lists there all the
// same, since both read the project's runs from disk.
func (a *app) noteNodeOwner(nc *web.NodeClient, ref string) {
	fmt.Fprintf(a.stderr, "dynworkflow: the project's live runtime is the Node runtime's serve (pid %d, %s); this run executes "+
		"in this process and is listed there too. To run it in that runtime instead: %s\n", nc.Descriptor.PID, nc.Descriptor.URL, nodeCommand("run "+ref))
}

// forwardForeign hands action (pause, resume, stop or delete) on a run
// of the Node runtime to its live serve, which alone holds the run's
// agents, when err says the run is that runtime's; resumeScript is the
// text of an edited script for resume. It returns err unchanged when the
// run is not foreign or no Node runtime is live.
func (a *app) forwardForeign(ctx context.Context, action, done, id, resumeScript string, err error) error {
	if !errors.Is(err, store.ErrForeignRun) {
		return err
	}
	nc := a.nodeOwner(ctx)
	if nc == nil {
		return err
	}
	if action == "resume" {
		err = nc.Resume(ctx, id, resumeScript)
	} else {
		err = nc.Control(ctx, action, id)
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	a.done(done, id)
	if !a.json {
		fmt.Fprintf(a.stderr, "  in the Node runtime (pid %d); follow it on %s\n", nc.Descriptor.PID, nc.Descriptor.URL)
	}
	return nil
}

// apiFailure turns an API error into the CLI's exit code: the server
// refused, so the command failed (1), unless the request itself was
// malformed.
func apiFailure(err error) error {
	var ae *web.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest && ae.Code != "bad_script" && ae.Code != "bad_answer" && ae.Code != "bad_id" {
		return usageErrorf("%v", err)
	}
	return &exitError{code: exitFailed, err: err}
}

// forwardStart prints a started run's id, and follows it with --attach.
func (a *app) forwardStarted(ctx context.Context, cl *web.Client, d web.Descriptor, resp web.StartResponse, action string, attach bool) error {
	if attach {
		return a.attach(ctx, cl, resp)
	}
	if a.json {
		_ = json.NewEncoder(a.stdout).Encode(map[string]any{
			"runId": resp.RunID, "status": resp.Status, "epoch": resp.Epoch, "dashboardUrl": d.RunURL(resp.RunID), "pid": d.PID,
		})
		return nil
	}
	fmt.Fprintln(a.stdout, resp.RunID)
	fmt.Fprintf(a.stderr, "%s in the runtime of pid %d; follow it with --attach, or on %s\n", action, d.PID, d.RunURL(resp.RunID))
	return nil
}

// forwardFlags warns about flags that only shape a local runtime.
func forwardFlags(cmd *cobra.Command, a *app) {
	for _, name := range []string{"simulate-latency", "simulate-failure-rate", "simulate-seed"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			fmt.Fprintf(a.stderr, "dynworkflow: --%s is ignored: the live runtime's executors were set when it started\n", name)
		}
	}
}

// apiOptions are the option flags the user gave, for a forwarded request.
func (o *optionFlags) apiOptions(cmd *cobra.Command) *web.RunOptions {
	fs := cmd.Flags()
	ro := &web.RunOptions{}
	set := false
	if fs.Changed("executor") {
		ro.Executor, set = &o.executor, true
	}
	if fs.Changed("model") {
		ro.Model, set = &o.model, true
	}
	if fs.Changed("permissions") {
		ro.Permissions, set = &o.permissions, true
	}
	if fs.Changed("concurrency") {
		ro.Concurrency, set = &o.concurrency, true
	}
	if fs.Changed("max-agents") {
		ro.MaxAgents, set = &o.maxAgents, true
	}
	if fs.Changed("max-items") {
		ro.MaxItems, set = &o.maxItems, true
	}
	if fs.Changed("agent-retries") {
		ro.AgentRetries, set = &o.agentRetries, true
	}
	if fs.Changed("agent-timeout-ms") {
		ro.AgentTimeoutMs, set = &o.agentTimeoutMs, true
	}
	if fs.Changed("idle-timeout") {
		ms := o.idleTimeout.Milliseconds()
		if o.idleTimeout > 0 && ms == 0 {
			ms = 1
		}
		ro.IdleTimeoutMs, set = &ms, true
	}
	if fs.Changed("token-budget") {
		ro.TokenBudget, set = &o.tokenBudget, true
	}
	if fs.Changed("strict") {
		ro.Strict, set = &o.strict, true
	}
	if fs.Changed("max-cost") {
		ro.MaxCost, set = &o.maxCost, true
	}
	if o.yes {
		// Whoever runs it said yes already.
		ro.ConfirmAbove, set = new(float64), true
	} else if fs.Changed("confirm-above") {
		ro.ConfirmAbove, set = &o.confirmAbove, true
	}
	if fs.Changed("route") {
		for _, spec := range o.routes {
			raw, _ := json.Marshal(spec)
			ro.Routes = append(ro.Routes, raw)
		}
		set = true
	}
	if !set {
		return nil
	}
	return ro
}

// scriptRef is how a forwarded request names a script: a file by its
// absolute path (the runtime runs on this machine), else a saved name.
func scriptRef(ref string) (path, name string, err error) {
	if fi, err := os.Stat(ref); err == nil && !fi.IsDir() {
		abs, err := filepath.Abs(ref)
		return abs, "", err
	}
	return "", ref, nil
}

// forwardFlagSet are the flags of commands that may go to a live runtime.
type forwardFlagSet struct {
	attach bool
	local  bool
}

func (f *forwardFlagSet) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.attach, "attach", false, "with a live runtime, follow the run until it completes, pauses, fails or stops")
	cmd.Flags().BoolVar(&f.local, "local", false, "run in this process even when the project has a live runtime")
}

// forwardRun starts ref in the live runtime.
func (a *app) forwardRun(cmd *cobra.Command, of *optionFlags, cl *web.Client, d web.Descriptor, ref string, attach bool) error {
	forwardFlags(cmd, a)
	args, err := of.argsJSON(cmd, a.maxNesting)
	if err != nil {
		return err
	}
	req := web.StartRequest{Args: args, Options: of.apiOptions(cmd)}
	if ref == "-" {
		req.Script, req.Filename = string(a.stdinScript), stdinName(a.stdinScript)
	} else if req.Path, req.Name, err = scriptRef(ref); err != nil {
		return err
	}
	resp, err := cl.Start(cmd.Context(), req)
	if err != nil {
		return apiFailure(err)
	}
	return a.forwardStarted(cmd.Context(), cl, d, resp, "started", attach)
}

// forwardResume resumes run id in the live runtime.
func (a *app) forwardResume(cmd *cobra.Command, of *optionFlags, cl *web.Client, d web.Descriptor, id, scriptPath string, attach bool) error {
	forwardFlags(cmd, a)
	args, err := of.argsJSON(cmd, a.maxNesting)
	if err != nil {
		return err
	}
	req := web.ResumeRequest{Args: args, Options: of.apiOptions(cmd)}
	if scriptPath != "" {
		if req.Path, err = filepath.Abs(scriptPath); err != nil {
			return err
		}
	}
	resp, err := cl.Resume(cmd.Context(), id, req)
	if err != nil {
		return apiFailure(err)
	}
	return a.forwardStarted(cmd.Context(), cl, d, resp, "resumed", attach)
}
