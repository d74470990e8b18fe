package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/executors/claudecode"
	"github.com/dynworkflow/dynworkflow/executors/codex"
	"github.com/dynworkflow/dynworkflow/executors/pi"
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
	"github.com/dynworkflow/dynworkflow/internal/fakemodel"
	"github.com/dynworkflow/dynworkflow/internal/trust"
)

// fakeModelCommand serves the fake model server the tests use, so that a
// user can try the real codex, claude and pi without an API key. It is
// hidden from the command list (it is a tool for trying things, not for
// running workflows) and documented in the README.
func (a *app) fakeModelCommand() *cobra.Command {
	var port int
	var dir, logFile string
	var writeConfig, usageFromRequest bool
	cmd := &cobra.Command{
		Use:    "fake-model",
		Hidden: true,
		Short:  "Serve a fake model on 127.0.0.1, to try the agent CLIs without an API key",
		Long: `Serve a fake model on 127.0.0.1 that speaks the OpenAI Responses API (codex), the
Anthropic Messages API (claude) and chat completions (pi), and configure the three
CLIs to use it, each with its own HOME and configuration directory under --dir
(nothing of yours is read or changed). It prints the .dynworkflow/executors.json
that points dynworkflow's codex, claude-code and pi executors at it; --write-config
writes that file into the project, unless it exists.

The fake answers "hi from fake model". A marker in the prompt picks another answer:
FAKE_TOOL (a shell tool call), FAKE_WRITE (a tool call writing fake_written.txt),
FAKE_WRITE_OUTSIDE (the same, in the parent directory), FAKE_SCHEMA ({"greeting":"hi"}),
FAKE_ERR500, FAKE_ERR401, FAKE_ERR429, FAKE_ERRMODEL (404, no such model), FAKE_CUT
(a stream cut short), FAKE_SLOW (a minute of slow text). Ctrl-C stops it.`,
		Args: exactArgs(0, "fake-model takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return usageErrorf("--port must be between 0 and 65535, not %d", port)
			}
			opts := fakemodel.Options{Port: port, UsageFromRequest: usageFromRequest}
			if logFile != "" {
				f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				opts.Log = f
			}
			if dir == "" {
				d, err := os.MkdirTemp("", "dynworkflow-fake-model-")
				if err != nil {
					return err
				}
				dir = d
			}
			// Signals are caught before the server answers anything.
			signals := make(chan os.Signal, 1)
			signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(signals)
			srv, err := fakemodel.Start(opts)
			if err != nil {
				return err
			}
			defer srv.Close()
			file, err := fakeModelConfig(srv.URL(), dir)
			if err != nil {
				return err
			}
			text, _ := json.MarshalIndent(file, "", "  ")
			if writeConfig {
				if err := a.writeProjectConfig(text); err != nil {
					return err
				}
			}
			if a.json {
				_ = json.NewEncoder(a.stdout).Encode(map[string]any{"url": srv.URL(), "dir": dir, "config": file})
			} else {
				fmt.Fprintf(a.stdout, "fake model server at %s (Ctrl-C stops it)\n", srv.URL())
				fmt.Fprintf(a.stdout, "codex, claude and pi are configured for it in %s\n", dir)
				if writeConfig {
					fmt.Fprintf(a.stdout, "wrote %s: try  dynworkflow run FILE --executor codex  (or claude-code, or pi)\n", execconfig.ProjectFile)
				} else {
					fmt.Fprintf(a.stdout, "point dynworkflow's executors at it with this %s:\n%s\n", execconfig.ProjectFile, text)
				}
			}
			<-signals
			sent := srv.Sent()
			fmt.Fprintf(a.stderr, "fake model server stopped after %d requests (%d input and %d output tokens sent)\n",
				len(srv.Requests()), sent.InputTokens, sent.OutputTokens)
			return nil
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "port to listen on (0: a free one)")
	cmd.Flags().StringVar(&dir, "dir", "", "where to write the CLIs' configuration (default: a new temporary directory)")
	cmd.Flags().StringVar(&logFile, "log", "", "append every request (path, scenario, body) to this file, one JSON line each")
	cmd.Flags().BoolVar(&usageFromRequest, "usage-from-request", false, "report usage that follows each request's size (a token per 4 bytes, mostly cached), as a real model's bill does, instead of 11 in / 7 out")
	cmd.Flags().BoolVar(&writeConfig, "write-config", false, "write the configuration to the project's "+execconfig.ProjectFile+" (refused if it exists)")
	return cmd
}

// fakeModelConfig configures the three CLIs for the server at url in dir
// and returns the executor configuration that uses them.
func fakeModelConfig(url, dir string) (execconfig.File, error) {
	file := execconfig.File{Executors: map[string]execconfig.Settings{}}
	for _, c := range []struct{ cli, executor, model string }{
		{fakemodel.Codex, codex.Name, ""}, {fakemodel.Claude, claudecode.Name, ""}, {fakemodel.Pi, pi.Name, fakemodel.PiModel},
	} {
		env, err := fakemodel.ClientEnv(c.cli, url, filepath.Join(dir, c.cli))
		if err != nil {
			return file, err
		}
		s := execconfig.Settings{Env: map[string]string{}}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			s.Env[k] = v
		}
		if c.model != "" {
			model := c.model
			s.Model = &model
		}
		file.Executors[c.executor] = s
	}
	return file, nil
}

// writeProjectConfig writes the project's executor configuration, which
// must not exist yet, and allows it: the user asked for exactly this file.
func (a *app) writeProjectConfig(text []byte) error {
	cwd, err := a.projectDir()
	if err != nil {
		return err
	}
	path := filepath.Join(cwd, execconfig.ProjectFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s exists: merge the configuration printed without --write-config into it by hand", path)}
	}
	if err != nil {
		return err
	}
	content := append(text, '\n')
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = trust.Default().Allow(cwd, execconfig.ProjectFile, content)
	return err
}
