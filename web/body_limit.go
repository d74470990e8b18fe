package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// BodyLimitConfig configures BodyLimit.
type BodyLimitConfig struct {
	// Limit is the largest body accepted, in bytes.
	Limit int64
}

// DefaultBodyLimit bounds request bodies: a script and its args fit well.
const DefaultBodyLimit = 4 << 20

// BodyLimit answers 413 to a body declared larger than the limit, and
// caps the reading of any other so that a lying or chunked one fails too.
func BodyLimit(cfg BodyLimitConfig) echo.MiddlewareFunc {
	limit := cfg.Limit
	if limit <= 0 {
		limit = DefaultBodyLimit
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > limit {
				return newAPIError(http.StatusRequestEntityTooLarge, codeTooLarge, "the body is larger than %d bytes", limit)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			return next(c)
		}
	}
}
