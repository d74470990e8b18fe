package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// WriteDeadlineConfig configures WriteDeadline.
type WriteDeadlineConfig struct {
	// Timeout bounds the writing of one response.
	Timeout time.Duration
	// Skipper, if set, exempts requests: event streams, which set a
	// deadline per write instead.
	Skipper func(echo.Context) bool
}

// WriteDeadline gives each response a deadline, so that a client that
// stops reading cannot pin the handler, and what it holds, for ever.
func WriteDeadline(cfg WriteDeadlineConfig) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.Skipper == nil || !cfg.Skipper(c) {
				_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(cfg.Timeout))
			}
			return next(c)
		}
	}
}
