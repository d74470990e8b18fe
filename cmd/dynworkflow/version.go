package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildVersion is what the binary knows of its own build.
type buildVersion struct {
	// Version is the module version: a tag for `go install …@v1.2.3`,
	// "(devel)" for a build in a checkout.
	Version string `json:"version"`
	// Revision, Time and Modified come from the VCS stamp; a build with
	// -buildvcs=false (as .ci/run makes) has none.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readBuildVersion() buildVersion {
	v := buildVersion{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is one line, like `go version`'s.
func (v buildVersion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dynworkflow %s", v.Version)
	switch {
	case v.Revision != "":
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		fmt.Fprintf(&b, " (revision %s", rev)
		if v.Time != "" {
			fmt.Fprintf(&b, ", %s", v.Time)
		}
		if v.Modified {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString(")")
	case v.Version == "(devel)":
		b.WriteString(" (revision unknown: built without VCS information)")
	}
	fmt.Fprintf(&b, " %s %s", v.Go, v.Platform)
	return b.String()
}

func (a *app) printVersion() error {
	v := readBuildVersion()
	if a.json {
		return encodeJSON(a.stdout, v)
	}
	_, err := fmt.Fprintln(a.stdout, v)
	return err
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the revision it was built from (same as --version)",
		Args:  exactArgs(0, "version takes no arguments"),
		RunE:  func(*cobra.Command, []string) error { return a.printVersion() },
	}
}

// programVersion is the version the server reports in /api/health.
func programVersion() string {
	v := readBuildVersion()
	if v.Revision != "" && v.Version == "(devel)" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return v.Version + " " + rev
	}
	return v.Version
}
