package lang

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadScript is matched (with errors.Is) by every error that rejects a
// script before it runs: syntax, meta, forbidden constructs.
var ErrBadScript = errors.New("bad workflow script")

// Error is a script error with a position. Hosts return it from Load for a
// script that cannot run, and from Run for an error the script threw.
type Error struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	// Message says what is wrong; Hint says what to do about it.
	Message string
	Hint    string
	// Backtrace is the script-level stack, innermost call last, when known.
	Backtrace string
	// Static marks an error found before the script ran (ErrBadScript).
	Static bool
	// Err is an underlying Go error, if any, such as a thrown engine error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Position())
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Position formats file:line:column, leaving out what is unknown.
func (e *Error) Position() string {
	switch {
	case e.File == "":
		return ""
	case e.Line == 0:
		return e.File
	case e.Column == 0:
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	}
}

func (e *Error) Unwrap() []error {
	var errs []error
	if e.Static {
		errs = append(errs, ErrBadScript)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Errorf returns a static (load-time) error at file:line:col.
func Errorf(file string, line, col int, hint, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Column: col, Message: fmt.Sprintf(format, args...), Hint: hint, Static: true}
}
