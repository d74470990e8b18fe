package web

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// Health is GET /api/health: enough for a CLI to tell that the process
// named by runtime.json is alive and is the one the descriptor describes.
type Health struct {
	OK              bool      `json:"ok"`
	ProtocolVersion int       `json:"protocolVersion"`
	PID             int       `json:"pid"`
	Cwd             string    `json:"cwd"`
	ProjectID       string    `json:"projectId"`
	Version         string    `json:"version,omitempty"`
	StartedAt       time.Time `json:"startedAt"`
	// Streams is the number of event streams open.
	Streams int64 `json:"streams"`
}

// RuntimeInfo describes the serving process in the overview and state.
type RuntimeInfo struct {
	PID             int       `json:"pid"`
	ProtocolVersion int       `json:"protocolVersion"`
	Version         string    `json:"version,omitempty"`
	StartedAt       time.Time `json:"startedAt"`
	// Sequence is the event sequence the view reflects at least: stream
	// events with ?since=<sequence> to follow it without a gap.
	Sequence int64 `json:"sequence"`
	// Epoch names this server process; event ids are EPOCH-SEQUENCE.
	Epoch string `json:"epoch"`
}

// Project names the project a runtime serves.
type Project struct {
	ID  string `json:"id"`
	Cwd string `json:"cwd"`
}

// Overview is GET /api/overview: light run summaries and open checkpoints.
type Overview struct {
	Project     Project         `json:"project"`
	Runtime     RuntimeInfo     `json:"runtime"`
	Runs        []store.Summary `json:"runs"`
	Checkpoints []Checkpoint    `json:"checkpoints"`
}

// State is GET /api/state: every run in full detail. It can be large.
type State struct {
	Project     Project          `json:"project"`
	Runtime     RuntimeInfo      `json:"runtime"`
	Runs        []*engine.Detail `json:"runs"`
	Checkpoints []Checkpoint     `json:"checkpoints"`
}

func (s *Server) health(c echo.Context) error {
	return c.JSON(http.StatusOK, Health{
		OK: true, ProtocolVersion: ProtocolVersion, PID: s.pid(), Cwd: s.cfg.Cwd,
		ProjectID: s.rt.Store().ProjectID(), Version: s.cfg.Version, StartedAt: s.cfg.StartedAt.UTC(),
		Streams: s.activeSSE.Load(),
	})
}

func (s *Server) runtimeInfo(seq int64) RuntimeInfo {
	return RuntimeInfo{PID: s.pid(), ProtocolVersion: ProtocolVersion, Version: s.cfg.Version,
		StartedAt: s.cfg.StartedAt.UTC(), Sequence: seq, Epoch: s.epoch}
}

// pid is the pid users know the runtime by.
func (s *Server) pid() int {
	if s.cfg.PID != 0 {
		return s.cfg.PID
	}
	return os.Getpid()
}

func (s *Server) project() Project {
	return Project{ID: s.rt.Store().ProjectID(), Cwd: s.cfg.Cwd}
}

func (s *Server) overview(c echo.Context) error {
	if !wantsOurs(c) {
		runs, seq, err := s.summaries.current()
		if err != nil {
			return err
		}
		return s.seedOverview(c, runs, seq)
	}
	runs, seq, err := s.summaries.get()
	if err != nil {
		return err
	}
	// The listing is already encoded: it is written as it is, not copied,
	// and only the small parts are encoded per request.
	project, _ := json.Marshal(s.project())
	info, _ := json.Marshal(s.runtimeInfo(seq))
	checkpoints, _ := json.Marshal(s.checkpoints.Pending())
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	res.Header().Set(echo.HeaderContentLength, strconv.Itoa(len(runs)+len(project)+len(info)+len(checkpoints)+len(overviewGlue)))
	res.WriteHeader(http.StatusOK)
	for _, part := range [][]byte{
		[]byte(`{"project":`), project, []byte(`,"runtime":`), info,
		[]byte(`,"runs":`), runs, []byte(`,"checkpoints":`), checkpoints, []byte("}\n"),
	} {
		if _, err := res.Write(part); err != nil {
			return nil // the client left
		}
	}
	return nil
}

// overviewGlue is the overview's JSON around its four encoded parts.
const overviewGlue = `{"project":` + `,"runtime":` + `,"runs":` + `,"checkpoints":` + "}\n"

func (s *Server) state(c echo.Context) error {
	seq := s.rt.Events().Sequence()
	sums, err := s.rt.List()
	if err != nil {
		return err
	}
	runs := make([]*engine.Detail, 0, len(sums))
	for _, sum := range sums {
		d, err := s.rt.Inspect(sum.RunID)
		if err != nil {
			s.log.Warn("inspect a run for /api/state", "run", sum.RunID, "err", err)
			continue
		}
		runs = append(runs, d)
	}
	if !wantsOurs(c) {
		return s.seedState(c, seq, runs)
	}
	return c.JSON(http.StatusOK, State{
		Project: s.project(), Runtime: s.runtimeInfo(seq), Runs: runs, Checkpoints: s.checkpoints.Pending(),
	})
}

func (s *Server) listCheckpoints(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"checkpoints": s.checkpoints.Pending()})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
