package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/web/metrics"
)

// ProtocolVersion is the version of the HTTP API and of runtime.json.
// Changes within a version only add fields and routes.
const ProtocolVersion = 1

// Config is what a Server needs.
type Config struct {
	// Runtime owns the project's runs.
	Runtime *engine.Runtime
	// Checkpoints is the broker given to the runtime as its Responder;
	// nil means checkpoints follow their headless policy and none is
	// ever pending.
	Checkpoints *Checkpoints
	// Token is the bearer token every API request must present.
	Token string
	// Cwd is the project directory: script paths and inline scripts are
	// relative to it.
	Cwd string
	// Logger receives request failures; nil discards them.
	Logger *slog.Logger
	// Version is the program's version, reported by /api/health.
	Version string
	// StartedAt is when the runtime started; zero means now.
	StartedAt time.Time
	// PID is the pid users know the runtime by, which /api/health and the
	// overview report: the process they started, which may be the
	// runtime's parent (proc.RunAncestor); zero means ours.
	PID int
	// Keepalive is how often an idle event stream gets a comment; zero
	// means 15 s.
	Keepalive time.Duration
	// StreamBuffer is how many events one stream may fall behind the bus
	// before it catches up from the ring; zero means 256.
	StreamBuffer int
	// BodyLimit bounds request bodies; zero means DefaultBodyLimit.
	BodyLimit int64
	// BodyTimeout bounds the reading of a request body; zero means
	// DefaultBodyTimeout.
	BodyTimeout time.Duration
	// StreamWriteTimeout cuts off an event stream whose client has not
	// read for that long; zero means 30 s.
	StreamWriteTimeout time.Duration
	// MaxStreams caps the event streams open at once; zero means
	// DefaultMaxStreams. One more is refused with 503.
	MaxStreams int
	// IdleTimeout closes a keep-alive connection idle that long; zero
	// means 15 s.
	IdleTimeout time.Duration
	// Defaults are the options of a run a request starts, before the
	// request's own: what `serve` was given. Zero means
	// engine.DefaultOptions().
	Defaults engine.Options
	// Elsewhere lists and shows the project's runs that execute outside
	// this runtime; nil means there are none.
	Elsewhere RunSource
	// StartElsewhere starts the runs of POST /api/runs on Elsewhere, which
	// must then be a RunControl (`serve --backend temporal`).
	StartElsewhere bool
	// Metrics counts the runtime's work for /metrics; nil means a new set
	// without the journal's fsync latency (which needs the runtime's
	// Config.ObserveFsync set to Metrics.ObserveFsync).
	Metrics *metrics.Metrics
}

// responseTimeout bounds the writing of a response other than an event
// stream; /api/state of a large project takes well under a second.
const responseTimeout = 60 * time.Second

// DefaultMaxStreams is how many event streams a server keeps open at once:
// plenty for dashboards and attached CLIs, few enough that stalled clients
// cannot exhaust the process.
const DefaultMaxStreams = 64

// Server is the HTTP API of one runtime.
type Server struct {
	cfg      Config
	rt       *engine.Runtime
	log      *slog.Logger
	echo     *echo.Echo
	requests *idempotency
	// summaries is the cached run listing of the overview and run list.
	summaries *summariesCache
	// streams ends every event stream when cancelled: an HTTP server's
	// Shutdown does not wait for them otherwise.
	streams     context.Context
	endStreams  context.CancelFunc
	draining    atomic.Bool
	activeSSE   atomic.Int64
	checkpoints *Checkpoints
	// epoch names this server process in event ids: a client reconnecting
	// with an id from another process gets a reset, even when that
	// process's sequence was lower than ours.
	epoch string
	// encoded holds recent events as JSON, shared by every stream: a large
	// event is encoded and held once, not once per stream.
	encoded *eventCache
	metrics *metrics.Metrics
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("web: Config needs a Runtime")
	}
	if _, ok := cfg.Elsewhere.(RunControl); cfg.StartElsewhere && !ok {
		return nil, errors.New("web: Config.StartElsewhere needs an Elsewhere that is a RunControl")
	}
	if len(cfg.Token) < 16 {
		return nil, errors.New("web: Config needs a token of at least 16 characters")
	}
	if cfg.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Cwd = wd
	}
	if cfg.StartedAt.IsZero() {
		cfg.StartedAt = time.Now()
	}
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = 15 * time.Second
	}
	if cfg.StreamBuffer <= 0 {
		cfg.StreamBuffer = 256
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 15 * time.Second
	}
	if cfg.StreamWriteTimeout <= 0 {
		cfg.StreamWriteTimeout = 30 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cp := cfg.Checkpoints
	if cp == nil {
		cp = NewCheckpoints()
	}
	cp.attach(cfg.Runtime.Events())
	s := &Server{cfg: cfg, rt: cfg.Runtime, log: log, requests: newIdempotency(1024), checkpoints: cp,
		summaries: newSummariesCache(cfg.Runtime, cfg.Elsewhere, log), epoch: newEpoch(), encoded: newEventCache()}
	s.streams, s.endStreams = context.WithCancel(context.Background())
	if w, ok := cfg.Elsewhere.(RunWatcher); ok {
		// It follows its runs as long as the server streams events.
		go w.Watch(s.streams, cfg.Runtime.Events(), cp)
	}
	s.setUpMetrics(cfg.Metrics)
	s.echo = s.newEcho()
	return s, nil
}

// newEpoch is a random name for this server process.
func newEpoch() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// validEpoch reports whether e can be the epoch of an event id: at most 32
// lowercase hex digits.
func validEpoch(e string) bool {
	if e == "" || len(e) > 32 {
		return false
	}
	for _, c := range e {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	public := func(c echo.Context) bool {
		p := c.Request().URL.Path
		return !strings.HasPrefix(p, "/api/") && p != metricsPath
	}
	e.Pre(SecureHeaders(SecureHeadersConfig{}))
	// The representation depends on Accept (see seedapi.go).
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
			return next(c)
		}
	})
	e.Use(
		LoopbackHost(LoopbackHostConfig{}),
		SameOrigin(SameOriginConfig{}),
		TokenAuth(TokenAuthConfig{Token: s.cfg.Token, Skipper: public}),
		BodyLimit(BodyLimitConfig{Limit: s.cfg.BodyLimit, Timeout: s.cfg.BodyTimeout}),
		WriteDeadline(WriteDeadlineConfig{Timeout: responseTimeout, Skipper: func(c echo.Context) bool {
			return c.Request().URL.Path == "/api/events"
		}}),
	)
	for _, r := range s.routes() {
		e.Add(r.method, r.path, r.handle)
	}
	return e
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Serve answers requests on ln until ctx is done, then shuts down: it ends
// the event streams, waits up to 5 s for other requests, then closes the
// connections left. It does not
// close the runtime; call Drain first and Runtime.Close before, so that
// streams still carry the runs' last events.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler: s.echo,
		// A connection that sends no request, or its headers slowly, or
		// idles between requests, is closed rather than held; bodies have
		// their own deadline (readBody), responses other than event
		// streams theirs (writeDeadline), and streams one per write.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(newHeaderListener(ln, securityHeaders(DefaultCSP))) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.endStreams()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		// Shutdown also waits for connections that never sent a request,
		// such as a browser's preconnected socket: nothing is lost by
		// closing what is left after the wait.
		s.log.Debug("closing the connections left after the shutdown wait")
		err = hs.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// Drain refuses new runs and resumes from now on, for a server about to
// close its runtime.
func (s *Server) Drain() { s.draining.Store(true) }

// Streams is the number of event streams open now.
func (s *Server) Streams() int64 { return s.activeSSE.Load() }

// Route is one endpoint the server serves.
type Route struct{ Method, Path string }

// Routes lists the endpoints as the router has them, for documentation
// and its tests.
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.echo.Routes() {
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	return out
}
