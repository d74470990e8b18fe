package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/lang"
)

// EventRunDeleted tells streams that a run is gone.
const EventRunDeleted = "run.deleted"

func (s *Server) listRuns(c echo.Context) error {
	runs, _, err := s.summaries.get()
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]json.RawMessage{"runs": runs})
}

// runID reads the :id parameter and checks it before anything touches the
// disk: ids become file names.
func runID(c echo.Context) (string, error) {
	id, err := url.PathUnescape(c.Param("id"))
	if err == nil {
		err = store.ValidRunID(id)
	}
	if err != nil {
		return "", &apiError{status: http.StatusBadRequest, code: codeBadID, message: err.Error(), err: err}
	}
	return id, nil
}

func (s *Server) getRun(c echo.Context) error {
	id, err := runID(c)
	if err != nil {
		return err
	}
	if src := s.cfg.Elsewhere; src != nil {
		d, ok, err := src.Detail(c.Request().Context(), id)
		if err != nil {
			return err
		}
		if ok {
			return s.writeRun(c, d)
		}
	}
	d, err := s.rt.Inspect(id)
	if err != nil {
		return err
	}
	return s.writeRun(c, d)
}

// writeRun answers GET /api/runs/{id} in the dialect the client asked for.
func (s *Server) writeRun(c echo.Context, d *engine.Detail) error {
	if !wantsOurs(c) {
		return c.JSON(http.StatusOK, seedRunOf(d))
	}
	return c.JSON(http.StatusOK, d)
}

func (s *Server) startRun(c echo.Context) error {
	if s.draining.Load() {
		return newAPIError(http.StatusServiceUnavailable, codeUnavailable, "the runtime is shutting down")
	}
	var req StartRequest
	body, err := readBody(c, &req, false)
	if err != nil {
		return err
	}
	if req.RequestID == "" {
		resp, err := s.start(c, req)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, resp)
	}
	s.requests.inflight.Lock()
	defer s.requests.inflight.Unlock()
	if prev, ok := s.requests.lookup(req.RequestID); ok {
		if prev.digest != sha256.Sum256(body) {
			return newAPIError(http.StatusConflict, codeConflict, "requestId %q was used for a different request", req.RequestID)
		}
		return c.JSON(http.StatusAccepted, prev.response)
	}
	resp, err := s.start(c, req)
	if err != nil {
		return err
	}
	s.requests.remember(req.RequestID, body, resp)
	return c.JSON(http.StatusAccepted, resp)
}

func (s *Server) start(c echo.Context, req StartRequest) (StartResponse, error) {
	script, err := s.loadScript(req.Script, req.Filename, req.Name, req.Path, true)
	if err != nil {
		return StartResponse{}, err
	}
	args, err := checkArgs(req.Args)
	if err != nil {
		return StartResponse{}, err
	}
	opts := s.cfg.Defaults
	if opts.Executor == "" && opts.Concurrency == 0 {
		opts = engine.DefaultOptions()
	}
	req.Options.Apply(&opts)
	if err := s.checkOptions(opts); err != nil {
		return StartResponse{}, err
	}
	seq := s.rt.Events().Sequence()
	if rc, ok := s.cfg.Elsewhere.(RunControl); ok && s.cfg.StartElsewhere {
		id, err := rc.Start(c.Request().Context(), RemoteStart{Script: script, Args: args, Options: opts})
		if err != nil {
			return StartResponse{}, err
		}
		s.summaries.invalidate()
		return StartResponse{RunID: id, Status: string(engine.StatusRunning), Sequence: seq}, nil
	}
	r, err := s.rt.Start(c.Request().Context(), engine.StartRequest{Script: script, Args: args, Options: opts})
	if err != nil {
		return StartResponse{}, err
	}
	s.summaries.invalidate()
	return StartResponse{RunID: r.ID(), Status: string(engine.StatusRunning), Sequence: seq}, nil
}

func (s *Server) resumeRun(c echo.Context) error {
	id, err := runID(c)
	if err != nil {
		return err
	}
	if s.draining.Load() {
		return newAPIError(http.StatusServiceUnavailable, codeUnavailable, "the runtime is shutting down")
	}
	var req ResumeRequest
	if _, err := readBody(c, &req, true); err != nil {
		return err
	}
	if rc, ok := s.cfg.Elsewhere.(RunControl); ok {
		seq := s.rt.Events().Sequence()
		epoch, mine, err := rc.Resume(c.Request().Context(), id)
		if mine && (req.Script != "" || req.Path != "" || req.Args != nil || req.Options != nil) {
			return newAPIError(http.StatusBadRequest, codeBadRequest, "run %s executes elsewhere (on Temporal): resume it from the API as it is, or with an edited script or options from the CLI: dynworkflow resume %s", id, id)
		}
		if mine {
			if err != nil {
				return seedRefusal(c, "resume", id, err)
			}
			s.summaries.invalidate()
			return c.JSON(http.StatusAccepted, ResumeResponse{
				StartResponse: StartResponse{RunID: id, Status: string(engine.StatusRunning), Sequence: seq, Epoch: epoch},
				OK:            true, Action: "resume",
			})
		}
	}
	rr := engine.ResumeRequest{}
	if req.Script != "" || req.Path != "" {
		if rr.Script, err = s.loadScript(req.Script, req.Filename, "", req.Path, false); err != nil {
			return err
		}
	}
	if req.Args != nil {
		if rr.Args, err = checkArgs(req.Args); err != nil {
			return err
		}
	}
	var optErr error
	if req.Options != nil {
		rr.Options = func(o *engine.Options) {
			req.Options.Apply(o)
			optErr = s.checkOptions(*o)
		}
	}
	// A user who resumes a run parked for its quota means now.
	rr.TryNow = true
	seq := s.rt.Events().Sequence()
	r, err := s.rt.Resume(c.Request().Context(), id, rr)
	if optErr != nil {
		return optErr
	}
	if err != nil {
		return seedRefusal(c, "resume", id, err)
	}
	s.summaries.invalidate()
	return c.JSON(http.StatusAccepted, ResumeResponse{
		StartResponse: StartResponse{RunID: r.ID(), Status: string(engine.StatusRunning), Sequence: seq, Epoch: r.Outcome().Epoch},
		OK:            true, Action: "resume",
	})
}

func (s *Server) pauseRun(c echo.Context) error {
	return s.action(c, "pause", s.elsewhereOr(c, "pause", s.rt.Pause))
}

// elsewhereOr does action to a run of the RunControl, if it has it, and
// otherwise to the runtime's with local.
func (s *Server) elsewhereOr(c echo.Context, action string, local func(id string) error) func(id string) error {
	rc, ok := s.cfg.Elsewhere.(RunControl)
	if !ok {
		return local
	}
	return func(id string) error {
		if mine, err := rc.Act(c.Request().Context(), id, action); mine {
			return err
		}
		return local(id)
	}
}

// seedRefusal answers a refused pause, resume, stop or delete as the Node
// runtime does, whose client reads {ok: false} from it: 409 for pause,
// resume and stop of a run that cannot (an unknown one included), 404 for
// deleting an unknown run; ok false with our error beside it. Other
// failures (a bad id, a bad script, shutting down) stay errors.
func seedRefusal(c echo.Context, action, id string, err error) error {
	if wantsOurs(c) {
		return err
	}
	ae := classify(err)
	status := ae.status
	switch {
	case action == "delete" && status == http.StatusNotFound:
	case action != "delete" && (status == http.StatusNotFound || status == http.StatusConflict):
		status = http.StatusConflict
	default:
		return err
	}
	body := seedError(ae)
	return c.JSON(status, map[string]any{"ok": false, "runId": id, "action": action, "error": body.Error, "code": body.Code})
}

func (s *Server) stopRun(c echo.Context) error {
	return s.action(c, "stop", s.elsewhereOr(c, "stop", s.rt.Stop))
}

func (s *Server) deleteRun(c echo.Context) error {
	return s.action(c, "delete", s.elsewhereOr(c, "delete", func(id string) error {
		if err := s.rt.Delete(id); err != nil {
			return err
		}
		s.rt.Events().Publish(id, EventRunDeleted, nil)
		return nil
	}))
}

func (s *Server) action(c echo.Context, name string, do func(id string) error) error {
	id, err := runID(c)
	if err != nil {
		return err
	}
	// These take no body, but one sent is read (and bounded) all the same.
	if _, err := readBody(c, &struct{}{}, true); err != nil {
		return err
	}
	if err := do(id); err != nil {
		return seedRefusal(c, name, id, err)
	}
	s.summaries.invalidate()
	status := http.StatusAccepted
	if name == "delete" {
		status = http.StatusOK
	}
	return c.JSON(status, ActionResponse{OK: true, RunID: id, Action: name})
}

func (s *Server) respondCheckpoint(c echo.Context) error {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil || !validCheckpointID(id) {
		if !wantsOurs(c) {
			// The Node runtime's ids are any string: one that is none of
			// ours is a checkpoint nobody waits on.
			return c.JSON(http.StatusNotFound, map[string]any{"ok": false, "checkpointId": c.Param("id"),
				"error": fmt.Sprintf("no pending checkpoint %s", c.Param("id")), "code": codeNotFound})
		}
		return newAPIError(http.StatusBadRequest, codeBadID, "%q is not a checkpoint id", c.Param("id"))
	}
	var req RespondRequest
	if _, err := readBody(c, &req, false); err != nil {
		return err
	}
	cp, err := s.checkpoints.Respond(id, req.Value)
	if err != nil {
		if ae := classify(err); ae.status == http.StatusNotFound && !wantsOurs(c) {
			return c.JSON(http.StatusNotFound, map[string]any{"ok": false, "checkpointId": id, "error": ae.message, "code": ae.code})
		}
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "checkpointId": id, "checkpoint": cp})
}

// loadScript loads script text, a saved workflow by name, or a file. Every
// failure is the caller's: a 400 (with the position for a script error)
// or a 404, never a 500.
func (s *Server) loadScript(text, filename, name, path string, required bool) (lang.Script, error) {
	given := 0
	for _, v := range []string{text, name, path} {
		if v != "" {
			given++
		}
	}
	if given > 1 || given == 0 && required {
		return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "give exactly one of script (the text), name (a saved workflow) or path (a file)")
	}
	switch {
	case text != "":
		if filename == "" {
			filename = "inline.workflow.js"
		}
		if filename != filepath.Base(filename) {
			return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "filename %q must be a bare file name", filename)
		}
		return s.rt.Hosts().Load(lang.Source{Path: filepath.Join(s.cfg.Cwd, filename), Text: []byte(text)})
	case name != "":
		if strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
			return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "name %q is not a saved workflow's name; send a file as path", name)
		}
		script, err := s.rt.ResolveWorkflow(name, s.cfg.Cwd)
		var le *lang.Error
		if err != nil && !errors.As(err, &le) {
			return nil, &apiError{status: http.StatusNotFound, code: codeNotFound, message: err.Error(), err: err}
		}
		return script, err
	default:
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.cfg.Cwd, path)
		}
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "no workflow file %s", path)
		}
		return s.rt.Hosts().LoadFile(path)
	}
}

func checkArgs(args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		return nil, nil
	}
	if !json.Valid(args) {
		return nil, newAPIError(http.StatusBadRequest, codeBadRequest, "args are not valid JSON")
	}
	return args, nil
}

func (s *Server) checkOptions(o engine.Options) error {
	if err := o.Validate(); err != nil {
		return &apiError{status: http.StatusBadRequest, code: codeBadRequest, message: fmt.Sprintf("options: %v", err), err: err}
	}
	if _, err := s.rt.Executors().Get(o.Executor); err != nil {
		return &apiError{status: http.StatusBadRequest, code: codeBadRequest, message: fmt.Sprintf("options: %v", err), err: err}
	}
	return nil
}
