package web

import (
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/web/metrics"
)

// metricsPath serves the runtime's metrics in the Prometheus text format,
// behind the bearer token like the API: a scrape configuration gives it
// with `authorization: {credentials_file: ...}`.
const metricsPath = "/metrics"

// setUpMetrics counts the runtime's events into m (a new set when nil)
// and exports the server's own figures beside them.
func (s *Server) setUpMetrics(m *metrics.Metrics) {
	if m == nil {
		m = metrics.New()
	}
	m.Follow(s.rt.Events())
	m.StreamClients(s.activeSSE.Load)
	m.Runs(s.runsByStatus)
	s.metrics = m
}

// runsByStatus counts the listed runs by status, from the cached listing
// the run list answers with.
func (s *Server) runsByStatus() map[string]int {
	body, _, err := s.summaries.get()
	if err != nil {
		return nil
	}
	var runs []struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(body, &runs) != nil {
		return nil
	}
	out := map[string]int{}
	for _, r := range runs {
		out[r.Status]++
	}
	return out
}

func (s *Server) serveMetrics(c echo.Context) error {
	s.metrics.Handler().ServeHTTP(c.Response(), c.Request())
	return nil
}
