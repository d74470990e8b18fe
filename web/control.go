package web

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
)

// EventCallControl tells streams that a user stopped or restarted a call.
const EventCallControl = "call.control"

// CallRequest names a call of a run: the body of stopping and restarting
// one.
type CallRequest struct {
	Path string `json:"path"`
}

// ForkRequest is the body of POST /api/runs/{id}/fork: the call to fork
// the run at, and what to change there (a new prompt, a given answer, or
// nothing: it runs again), with the new run's options.
type ForkRequest struct {
	Path    string          `json:"path"`
	Prompt  *string         `json:"prompt,omitempty"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	Options *RunOptions     `json:"options,omitempty"`
}

// CallControlPayload comes with call.control.
type CallControlPayload struct {
	Path   string `json:"path"`
	Action string `json:"action"`
}

func (s *Server) stopCall(c echo.Context) error {
	return s.callAction(c, "stop", s.rt.StopCall)
}

func (s *Server) restartCall(c echo.Context) error {
	return s.callAction(c, "restart", s.rt.RestartCall)
}

// callAction stops or restarts a running call of a run this runtime
// executes: 202 once the call's attempt is told; 409 when the call (or
// the run) is not running.
func (s *Server) callAction(c echo.Context, name string, do func(id, path string) error) error {
	id, err := runID(c)
	if err != nil {
		return err
	}
	var req CallRequest
	if _, err := readBody(c, &req, false); err != nil {
		return err
	}
	if req.Path == "" || req.Path[0] != '/' {
		return newAPIError(http.StatusBadRequest, codeBadRequest, "the body names the call by its path: {\"path\": \"/par.0/3/agent.0\"}")
	}
	if err := do(id, req.Path); err != nil {
		return err
	}
	s.rt.Events().Publish(id, EventCallControl, CallControlPayload{Path: req.Path, Action: name})
	return c.JSON(http.StatusAccepted, map[string]any{"ok": true, "runId": id, "path": req.Path, "action": name})
}

// forkRun makes a new run from a run's answers up to one of its calls
// (engine.Runtime.Fork) and starts it here.
func (s *Server) forkRun(c echo.Context) error {
	id, err := runID(c)
	if err != nil {
		return err
	}
	if s.draining.Load() {
		return newAPIError(http.StatusServiceUnavailable, codeUnavailable, "the runtime is shutting down")
	}
	var req ForkRequest
	if _, err := readBody(c, &req, false); err != nil {
		return err
	}
	if req.Path == "" {
		return newAPIError(http.StatusBadRequest, codeBadRequest, "the body names the call to fork at: {\"path\": \"/agent.1\", \"prompt\"?, \"answer\"?}")
	}
	var optErr error
	fr := engine.ForkRequest{From: id, Path: req.Path, Prompt: req.Prompt, Answer: req.Answer}
	if req.Options != nil {
		fr.Options = func(o *engine.Options) {
			req.Options.Apply(o)
			optErr = s.checkOptions(*o)
		}
	}
	seq := s.rt.Events().Sequence()
	r, err := s.rt.Fork(c.Request().Context(), fr)
	if optErr != nil {
		return optErr
	}
	if err != nil {
		return err
	}
	s.summaries.invalidate()
	return c.JSON(http.StatusAccepted, StartResponse{RunID: r.ID(), Status: string(engine.StatusRunning), Sequence: seq, Epoch: r.Outcome().Epoch})
}
