package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine/store"
)

// check is one line of doctor's report.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the state directory, script languages and executors",
		Args:  exactArgs(0, "doctor takes no arguments"),
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
			add("languages", true, "%s", strings.Join(hosts().Extensions(), ", "))
			add("executor simulate", true, "built in")
			for _, bin := range []struct{ executor, binary string }{{"codex", "codex"}, {"claude-code", "claude"}, {"pi", "pi"}} {
				if p, err := exec.LookPath(bin.binary); err == nil {
					add("executor "+bin.executor, true, "%s found at %s (adapter arrives with the executors issue)", bin.binary, p)
				} else {
					add("executor "+bin.executor, false, "%s not found on PATH", bin.binary)
				}
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
}
