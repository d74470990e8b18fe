package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynworkflow/dynworkflow/web"
)

// Error codes of failures only the CLI has. Failures the API also reports
// (a bad script, an unknown run, a conflict, an unknown executor) carry
// the API's codes, from web.Classify.
const (
	codeUsage          = "usage"
	codeUnknownCommand = "unknown_command"
	codeUnknownFlag    = "unknown_flag"
	codeBadFlag        = "bad_flag"
	codeBadArgs        = "bad_args"
	codeAmbiguousID    = "ambiguous_id"
	codeNoRuntime      = "no_live_runtime"
	// codeNoTemporal: the command needs the Temporal client, which this
	// build leaves to a companion that is not installed (companion.go).
	codeNoTemporal = "temporal_not_installed"
	// codeNotAllowed: a project file the command would use names programs
	// or a server, and the user has not allowed its content.
	codeNotAllowed = "not_allowed"
	// The API's codes for the same failures.
	codeNotFound  = "not_found"
	codeBadAnswer = "bad_answer"
)

// notFound is an error of something the user named that is not there:
// it is fs.ErrNotExist to errors.Is, and so code not_found.
type notFound string

func (e notFound) Error() string      { return string(e) }
func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// exitError carries an exit code, and what to tell the user, through
// cobra.
type exitError struct {
	code int
	err  error // nil when the outcome was already printed
	// kind is the stable error code printed under --json; empty means
	// the API's code for err.
	kind string
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a mistake in the command line: exit 64.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, kind: codeUsage, err: fmt.Errorf(format, args...)}
}

// usageError is a usage error with its own code.
func usageError(kind string, err error) error {
	return &exitError{code: exitUsage, kind: kind, err: err}
}

// failure is how a command that did not succeed ends: its exit code and,
// unless the outcome said it already, the error to report.
type failure struct {
	exit int
	info *web.ErrorInfo
}

// failureOf classifies what a command returned.
func failureOf(err error) failure {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err == nil {
			return failure{exit: ee.code}
		}
		info := errorInfo(ee.err)
		if ee.kind != "" {
			info.Code = ee.kind
		}
		return failure{exit: ee.code, info: &info}
	}
	info := errorInfo(err)
	if kind := cobraUsage(err); kind != "" {
		info.Code = kind
		return failure{exit: exitUsage, info: &info}
	}
	return failure{exit: exitFailed, info: &info}
}

// errorInfo describes err as the API would: an error the server sent is
// passed on as it came.
func errorInfo(err error) web.ErrorInfo {
	var ae *web.APIError
	if errors.As(err, &ae) {
		info := ae.ErrorInfo
		info.Message = err.Error()
		return info
	}
	_, info := web.Classify(err)
	info.Message = err.Error()
	return info
}

// cobraUsage recognises cobra's own usage errors (argument counts), which
// arrive as plain errors.
func cobraUsage(err error) string {
	msg := err.Error()
	for _, p := range []string{"accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "bad flag syntax"} {
		if strings.Contains(msg, p) {
			return codeUsage
		}
	}
	return ""
}

// report prints a failure on stderr, with a pointer to the command's
// help after a usage error; under --json, stdout gets it as
// {"error": {...}} as well, for the program reading it.
func (a *app) report(f failure, cmd *cobra.Command) {
	if f.info == nil {
		return
	}
	if a.json {
		_ = encodeJSON(a.stdout, web.ErrorBody{Error: *f.info})
	}
	fmt.Fprintln(a.stderr, "dynworkflow:", f.info.Message)
	if f.exit == exitUsage && f.info.Code != codeNoTemporal {
		path := "dynworkflow"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(a.stderr, "Run '%s --help' for usage.\n", path)
	}
}

// flagError turns pflag's parse errors into usage errors, with the flag
// the user probably meant.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, unknown := strings.CutPrefix(msg, "unknown flag: --")
	if !unknown {
		if strings.HasPrefix(msg, "unknown shorthand flag") {
			return usageError(codeUnknownFlag, err)
		}
		return usageError(codeBadFlag, err)
	}
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	hint := didYouMean("--"+name, names)
	if hint == "" {
		if other := commandWithFlag(cmd.Root(), name); other != "" {
			hint = fmt.Sprintf("; --%s is a flag of %s", name, other)
		}
	}
	return usageError(codeUnknownFlag, fmt.Errorf("%s%s", msg, hint))
}

// commandWithFlag names a command that has the flag, for a flag given to
// the wrong command.
func commandWithFlag(root *cobra.Command, name string) string {
	for _, c := range root.Commands() {
		if c.Flags().Lookup(name) != nil {
			return "`" + c.CommandPath() + "`"
		}
	}
	return ""
}

// unknownCommand is the error of a word that names no command. A
// command's name is suggested before an alias at the same distance.
func unknownCommand(root *cobra.Command, word string) error {
	var names, aliases []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
			aliases = append(aliases, c.Aliases...)
		}
	}
	hint := didYouMean(word, names)
	if hint == "" {
		hint = didYouMean(word, aliases)
	}
	return usageError(codeUnknownCommand, fmt.Errorf("unknown command %q%s", word, hint))
}

// wantsJSON reports whether the command line asks for --json, for errors
// found before the flags were parsed (an unknown flag stops the parse
// where it stands).
func wantsJSON(args []string) bool {
	for _, arg := range args {
		switch {
		case arg == "--":
			return false
		case arg == "--json":
			return true
		case strings.HasPrefix(arg, "--json="):
			v := strings.TrimPrefix(arg, "--json=")
			return v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True"
		}
	}
	return false
}
