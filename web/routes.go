package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// route is one endpoint. The OpenAPI description lists the /api/ ones, and
// a test holds the two to each other.
type route struct {
	method, path string
	handle       echo.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{http.MethodGet, "/", s.dashboard},
		{http.MethodGet, "/assets/*", s.dashboardAsset},
		{http.MethodGet, "/api/health", s.health},
		{http.MethodGet, "/api/openapi.json", s.openAPI},
		{http.MethodGet, "/api/overview", s.overview},
		{http.MethodGet, "/api/state", s.state},
		{http.MethodGet, "/api/events", s.events},
		{http.MethodGet, "/api/runs", s.listRuns},
		{http.MethodPost, "/api/runs", s.startRun},
		{http.MethodGet, "/api/runs/:id", s.getRun},
		{http.MethodDelete, "/api/runs/:id", s.deleteRun},
		{http.MethodPost, "/api/runs/:id/pause", s.pauseRun},
		{http.MethodPost, "/api/runs/:id/resume", s.resumeRun},
		{http.MethodPost, "/api/runs/:id/stop", s.stopRun},
		{http.MethodPost, "/api/runs/:id/calls/stop", s.stopCall},
		{http.MethodPost, "/api/runs/:id/calls/restart", s.restartCall},
		{http.MethodPost, "/api/runs/:id/fork", s.forkRun},
		{http.MethodGet, "/api/checkpoints", s.listCheckpoints},
		{http.MethodPost, "/api/checkpoints/:id/respond", s.respondCheckpoint},
		{http.MethodGet, metricsPath, s.serveMetrics},
	}
}
