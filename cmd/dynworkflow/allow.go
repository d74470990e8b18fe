package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/internal/execconfig"
	"github.com/dynworkflow/dynworkflow/internal/trust"
)

// projectFile is one file of the project that needs the user's approval
// before dynworkflow uses it.
type projectFile struct {
	// Rel is its path in the project, with slashes.
	Rel  string `json:"file"`
	Path string `json:"path"`
	// Does says what it can make dynworkflow do.
	Does string `json:"does"`
	// Allowed is true when the user approved its content as it is.
	Allowed bool `json:"allowed"`
	// Changed is true when the user approved other content of it.
	Changed bool `json:"changed,omitempty"`
	// Names lists what it names: programs, arguments, variables, servers.
	Names   []string `json:"names,omitempty"`
	content []byte
}

// projectFiles lists the files of the project at cwd that need approval
// and exist: the executor configuration, the backend file, and the
// project's saved workflows that have the name of one of the user's.
func (a *app) projectFiles(cwd string) ([]projectFile, error) {
	root, err := a.stateRoot()
	if err != nil {
		return nil, err
	}
	type candidate struct{ rel, does string }
	cands := []candidate{{execconfig.ProjectFile, execconfig.ProjectFileDoes}, {backendFile, backendFileDoes}}
	hosts := a.hosts()
	saved := store.SavedDirs(root, store.ProjectID(cwd))
	for _, dir := range []string{".claude/workflows", ".dynworkflow/workflows"} {
		entries, _ := os.ReadDir(filepath.Join(cwd, dir))
		for _, e := range entries {
			for _, ext := range hosts.Extensions() {
				name, ok := strings.CutSuffix(e.Name(), ext)
				if !ok || !e.Type().IsRegular() {
					continue
				}
				if users := userSaved(saved, name, hosts.Extensions()); users != "" {
					cands = append(cands, candidate{dir + "/" + e.Name(), engine.ProjectWorkflowDoes(users)})
				}
				break
			}
		}
	}
	store := trust.Default()
	var out []projectFile
	for _, c := range cands {
		path := filepath.Join(cwd, filepath.FromSlash(c.rel))
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		f := projectFile{Rel: c.rel, Path: path, Does: c.does, content: b, Names: namedIn(c.rel, b)}
		err = store.Check(cwd, c.rel, b, c.does)
		var na *trust.NotAllowedError
		switch {
		case err == nil:
			f.Allowed = true
		case errors.As(err, &na):
			f.Changed = na.Changed
		default:
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func userSaved(dirs []string, name string, exts []string) string {
	for _, d := range dirs {
		for _, ext := range exts {
			p := filepath.Join(d, name+ext)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	return ""
}

// namedIn lists what a configuration file names that dynworkflow would
// run or talk to, for the user to review before allowing it.
func namedIn(rel string, b []byte) []string {
	var names []string
	switch rel {
	case execconfig.ProjectFile:
		var f execconfig.File
		if err := json.Unmarshal(b, &f); err != nil {
			return []string{"(not valid JSON: " + err.Error() + ")"}
		}
		if f.DefaultExecutor != "" {
			names = append(names, "default executor: "+f.DefaultExecutor)
		}
		for _, name := range slices.Sorted(maps.Keys(f.Commands)) {
			names = append(names, fmt.Sprintf("command %s: %s", name, f.Commands[name]))
		}
		for _, name := range slices.Sorted(maps.Keys(f.Executors)) {
			s := f.Executors[name]
			if s.Binary != nil {
				names = append(names, fmt.Sprintf("%s binary: %s", name, *s.Binary))
			}
			if len(s.Args) > 0 {
				names = append(names, fmt.Sprintf("%s args: %s", name, strings.Join(s.Args, " ")))
			}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				names = append(names, fmt.Sprintf("%s env: %s=%s", name, k, s.Env[k]))
			}
			if s.Permissions != nil {
				names = append(names, fmt.Sprintf("%s permissions: %s", name, *s.Permissions))
			}
		}
	case backendFile:
		var f struct {
			Backend  string `json:"backend"`
			Temporal struct {
				Address string `json:"address"`
			} `json:"temporal"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return []string{"(not valid JSON: " + err.Error() + ")"}
		}
		if f.Backend != "" {
			names = append(names, "backend: "+f.Backend)
		}
		if f.Temporal.Address != "" {
			names = append(names, "Temporal server: "+f.Temporal.Address)
		}
	}
	return names
}

func (a *app) allowCommand() *cobra.Command {
	var list bool
	cmd := &cobra.Command{
		Use:   "allow [FILE...]",
		Short: "Allow the project's files that name programs to run or servers to talk to",
		Long: `A project's .dynworkflow/executors.json names programs for dynworkflow to run
(binaries, arguments, environment, command templates), its .dynworkflow/backend.json
a server to send runs to, and a saved workflow in .claude/workflows/ or
.dynworkflow/workflows/ with the name of one of yours would run in its place.
Such a file comes with a cloned repository, and an agent can write it, so
dynworkflow ignores it until you allow its exact content, as direnv does with
.envrc. Commands that run agents refuse to start while one is not allowed;
the others go on without it. Each says so in one line.

allow shows what each file names and allows it as it is now: the files not
allowed yet, or the FILEs named. The approval is kept in your configuration
directory ($XDG_CONFIG_HOME/dynworkflow/allowed, else ~/.config/...), for this
project directory and this content only: any change to the file, by a git pull
or an agent, withdraws it. deny withdraws approvals; allow --list lists them.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return usageErrorf("allow --list takes no files")
				}
				return a.listApprovals()
			}
			return a.allow(args)
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list every approval, of every project, and whether its file still matches")
	return cmd
}

func (a *app) denyCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "deny [FILE...]",
		Aliases: []string{"revoke"},
		Short:   "Withdraw the approval of the project's files (all, or the FILEs named)",
		Long: `Withdraw what dynworkflow allow approved for this project: every file, or the
FILEs named. The files are then ignored again until allowed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := a.projectDir()
			if err != nil {
				return err
			}
			project, err := trust.Project(cwd)
			if err != nil {
				return err
			}
			names, err := a.namedFiles(cwd, args)
			if err != nil {
				return err
			}
			approvals, err := trust.Default().List()
			if err != nil {
				return err
			}
			var revoked []string
			for _, ap := range approvals {
				if ap.Project != project || len(names) > 0 && !names[ap.File] {
					continue
				}
				if _, err := trust.Default().Revoke(project, ap.File); err != nil {
					return err
				}
				revoked = append(revoked, ap.File)
				if !a.json {
					fmt.Fprintf(a.stdout, "denied %s\n", ap.Path())
				}
			}
			if a.json {
				if revoked == nil {
					revoked = []string{}
				}
				return encodeJSON(a.stdout, revoked)
			}
			if len(revoked) == 0 {
				fmt.Fprintf(a.stderr, "nothing of %s was allowed\n", project)
			}
			return nil
		},
	}
}

// namedFiles turns FILE arguments into paths relative to the project.
func (a *app) namedFiles(cwd string, args []string) (map[string]bool, error) {
	names := map[string]bool{}
	wd, _ := os.Getwd()
	for _, arg := range args {
		p := arg
		if !filepath.IsAbs(p) {
			// Relative to where the user is, else to the project.
			if _, err := os.Stat(filepath.Join(wd, p)); err == nil && wd != "" {
				p = filepath.Join(wd, p)
			} else {
				p = filepath.Join(cwd, p)
			}
		}
		rel, err := filepath.Rel(cwd, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if real, rerr := trust.Project(cwd); rerr == nil {
				rel, err = filepath.Rel(real, p)
			}
			if err != nil || strings.HasPrefix(rel, "..") {
				return nil, usageErrorf("%s is not in the project %s", arg, cwd)
			}
		}
		names[filepath.ToSlash(rel)] = true
	}
	return names, nil
}

func (a *app) allow(args []string) error {
	cwd, err := a.projectDir()
	if err != nil {
		return err
	}
	files, err := a.projectFiles(cwd)
	if err != nil {
		return err
	}
	names, err := a.namedFiles(cwd, args)
	if err != nil {
		return err
	}
	for name := range names {
		found := false
		for _, f := range files {
			found = found || f.Rel == name
		}
		if !found {
			return usageErrorf("%s is not a file that needs allowing: that is %s, %s, or a saved workflow in .claude/workflows or .dynworkflow/workflows with the name of one of yours",
				name, execconfig.ProjectFile, backendFile)
		}
	}
	var done []projectFile
	for _, f := range files {
		if len(names) > 0 && !names[f.Rel] || len(names) == 0 && f.Allowed {
			continue
		}
		if _, err := trust.Default().Allow(cwd, f.Rel, f.content); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		f.Allowed, f.Changed = true, false
		done = append(done, f)
	}
	if a.json {
		if done == nil {
			done = []projectFile{}
		}
		return encodeJSON(a.stdout, done)
	}
	for _, f := range done {
		fmt.Fprintf(a.stdout, "allowed %s (sha256 %s): %s\n", f.Path, trust.Hash(f.content)[:16], f.Does)
		for _, n := range f.Names {
			fmt.Fprintf(a.stdout, "    %s\n", escapeControls(n, true))
		}
	}
	if len(done) == 0 {
		if len(files) == 0 {
			fmt.Fprintf(a.stderr, "%s has no file that needs allowing\n", cwd)
		} else {
			fmt.Fprintf(a.stderr, "every file of %s that needs allowing is allowed as it is\n", cwd)
		}
	}
	return nil
}

func (a *app) listApprovals() error {
	approvals, err := trust.Default().List()
	if err != nil {
		return err
	}
	type row struct {
		trust.Approval
		Path    string `json:"path"`
		Matches bool   `json:"matches"`
	}
	rows := []row{}
	for _, ap := range approvals {
		rows = append(rows, row{Approval: ap, Path: ap.Path(), Matches: ap.Matches()})
	}
	if a.json {
		return encodeJSON(a.stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(a.stderr, "nothing is allowed (approvals are kept in %s)\n", trust.Dir())
		return nil
	}
	var b bytes.Buffer
	for _, r := range rows {
		state := "allowed"
		if !r.Matches {
			state = "changed or gone since allowed: ignored"
		}
		fmt.Fprintf(&b, "%s  %s  %s (sha256 %s)\n", r.At.Local().Format("2006-01-02 15:04"), escapeControls(r.Path, true), state, r.SHA256[:16])
	}
	_, err = a.stdout.Write(b.Bytes())
	return err
}
