package web

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// BodyLimitConfig configures BodyLimit.
type BodyLimitConfig struct {
	// Limit is the largest body accepted, in bytes.
	Limit int64
	// Timeout bounds the reading of a body; zero means DefaultBodyTimeout.
	Timeout time.Duration
}

// DefaultBodyTimeout bounds the reading of a request body: a client that
// sends it slowly, or never, loses its connection rather than holding it.
const DefaultBodyTimeout = 30 * time.Second

// DefaultBodyLimit bounds request bodies: a script and its args fit well.
const DefaultBodyLimit = 4 << 20

// BodyLimit answers 413 to a body declared larger than the limit, and
// caps the reading of any other so that a lying or chunked one fails too.
// Reading a body has a deadline, lifted once it is read: the connection
// then goes on under the server's own timeouts.
func BodyLimit(cfg BodyLimitConfig) echo.MiddlewareFunc {
	limit := cfg.Limit
	if limit <= 0 {
		limit = DefaultBodyLimit
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > limit {
				return newAPIError(http.StatusRequestEntityTooLarge, codeTooLarge, "the body is larger than %d bytes", limit)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			if req.ContentLength != 0 {
				rc := http.NewResponseController(c.Response())
				_ = rc.SetReadDeadline(time.Now().Add(timeout))
				req.Body = &deadlineBody{ReadCloser: req.Body, done: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
			return next(c)
		}
	}
}

// deadlineBody calls done once the body has been read to its end or closed.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.done)
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}
