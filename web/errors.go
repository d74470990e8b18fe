package web

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/lang"
)

// ErrorBody is the JSON of every error response: {"error": {...}}.
type ErrorBody struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo says what went wrong. Code is stable; Message is for people.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Position is file:line:col of a script error, when there is one.
	Position string `json:"position,omitempty"`
}

// apiError is an error with its HTTP status and stable code.
type apiError struct {
	status   int
	code     string
	message  string
	position string
	err      error
}

func (e *apiError) Error() string { return e.message }
func (e *apiError) Unwrap() error { return e.err }

func newAPIError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// Stable error codes.
const (
	codeBadRequest     = "bad_request"
	codeBadScript      = "bad_script"
	codeBadID          = "bad_id"
	codeBadAnswer      = "bad_answer"
	codeUnauthorized   = "unauthorized"
	codeForbidden      = "forbidden"
	codeNotFound       = "not_found"
	codeMethod         = "method_not_allowed"
	codeConflict       = "conflict"
	codeTooLarge       = "body_too_large"
	codeUnavailable    = "shutting_down"
	codeInternal       = "internal"
	codeUnsupportedMed = "unsupported_media_type"
	codeTooManyStreams = "too_many_streams"
)

// CodeUnknownExecutor is the code of an executor name that names none.
const CodeUnknownExecutor = "unknown_executor"

// Classify returns the HTTP status and the error body the API answers err
// with. The CLI prints the same body under --json, so that one failure
// has one code wherever it is reported.
func Classify(err error) (int, ErrorInfo) {
	ae := classify(err)
	return ae.status, ErrorInfo{Code: ae.code, Message: ae.message, Position: ae.position}
}

// classify turns an engine, store or script error into an API error, so
// that a bad script is a 400 with its position and never a 500.
func classify(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var le *lang.Error
	if errors.As(err, &le) && le.Static {
		return &apiError{status: http.StatusBadRequest, code: codeBadScript, message: err.Error(), position: le.Position(), err: err}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return fromEcho(he)
	}
	status, code := http.StatusInternalServerError, codeInternal
	switch {
	case errors.Is(err, store.ErrBadRunID):
		status, code = http.StatusBadRequest, codeBadID
	case errors.Is(err, engine.ErrNotFound), errors.Is(err, store.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		// A run, or a script file or saved workflow, that is not there.
		status, code = http.StatusNotFound, codeNotFound
	case errors.Is(err, engine.ErrNotResumable), errors.Is(err, engine.ErrNotRunning), errors.Is(err, engine.ErrRunning),
		errors.Is(err, engine.ErrCallNotRunning),
		errors.Is(err, store.ErrLeased), errors.Is(err, store.ErrForeignRun):
		status, code = http.StatusConflict, codeConflict
	case errors.Is(err, executors.ErrUnknownExecutor):
		status, code = http.StatusBadRequest, CodeUnknownExecutor
	case errors.Is(err, lang.ErrTooDeep):
		// Args (or a script) nested past --max-nesting: the caller's to fix.
		status, code = http.StatusBadRequest, codeBadRequest
	case errors.As(err, &le):
		// A script error found while loading a child or a saved
		// workflow: still the caller's script.
		status, code = http.StatusBadRequest, codeBadScript
	}
	return &apiError{status: status, code: code, message: err.Error(), err: err}
}

// SeedErrorBody is an error in the Node runtime's shape, {"error":
// "message"}, with our code and position beside it.
type SeedErrorBody struct {
	Error    string `json:"error"`
	Code     string `json:"code"`
	Position string `json:"position,omitempty"`
}

func seedError(ae *apiError) SeedErrorBody {
	msg := ae.message
	if ae.position != "" && !strings.Contains(msg, ae.position) {
		msg = ae.position + ": " + msg
	}
	return SeedErrorBody{Error: msg, Code: ae.code, Position: ae.position}
}

func fromEcho(he *echo.HTTPError) *apiError {
	code := codeBadRequest
	switch he.Code {
	case http.StatusNotFound:
		code = codeNotFound
	case http.StatusMethodNotAllowed:
		code = codeMethod
	case http.StatusUnauthorized:
		code = codeUnauthorized
	case http.StatusForbidden:
		code = codeForbidden
	case http.StatusRequestEntityTooLarge:
		code = codeTooLarge
	case http.StatusUnsupportedMediaType:
		code = codeUnsupportedMed
	case http.StatusServiceUnavailable:
		code = codeUnavailable
	default:
		if he.Code >= 500 {
			code = codeInternal
		}
	}
	return &apiError{status: he.Code, code: code, message: fmt.Sprint(he.Message), err: he}
}

// errorHandler writes every error as {"error": {code, message}}.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := classify(err)
	if ae.status >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if ae.status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="dynworkflow"`)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(ae.status)
		return
	}
	if !wantsOurs(c) {
		_ = c.JSON(ae.status, seedError(ae))
		return
	}
	_ = c.JSON(ae.status, ErrorBody{Error: ErrorInfo{Code: ae.code, Message: ae.message, Position: ae.position}})
}
