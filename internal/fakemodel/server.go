package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Options tune a server; the zero value is usable.
type Options struct {
	// Usage is what every answer reports; zero means 11 input tokens (3 of
	// them cached) and 7 output tokens.
	Usage executors.Usage
	// SlowInterval is the gap between deltas of the Slow scenario;
	// zero means 200ms.
	SlowInterval time.Duration
	// ToolCommand, if set, is the shell command the Tool scenario asks
	// for instead of ToolCommand: a test can have an agent start a
	// process of its own.
	ToolCommand string
	// Log, when set, receives one JSON line per model request: its path,
	// scenario and body, for seeing what a CLI sends.
	Log io.Writer
	// Port is the port to listen on; zero picks a free one.
	Port int
	// UsageFromRequest makes every answer report usage that follows the
	// request's size, as a real model's does, instead of Usage: a token per
	// four bytes of the request (nine tenths of them cached past the first
	// 4 KiB, as a provider caches a CLI's system prompt and tools), and
	// Usage's output tokens. For measuring forecasts against something that
	// varies like a bill.
	UsageFromRequest bool
}

// Request is what the server saw of one request.
type Request struct {
	Path     string
	Scenario Scenario
	Stream   bool
	// Time is when it arrived.
	Time time.Time
}

// Server is a running fake model server.
type Server struct {
	opts Options
	url  string
	addr string

	mu   sync.Mutex
	http *http.Server
	// ln is the listener Stop closes at once, even before Serve took it.
	ln net.Listener
	// limitedUntil, when in the future, answers every request 429 (see
	// RateLimit).
	limitedUntil time.Time
	// limitNext, when set, starts a limit of that length at the next
	// request (see RateLimitFromNext).
	limitNext time.Duration
	forced    Scenario
	delay     time.Duration
	sent      executors.Usage
	cutSent   executors.Usage
	requests  []Request
	seq       int
	// arrived is closed (and replaced) at each request, to wake waiters.
	arrived chan struct{}
}

// maxBody bounds a request body; Claude Code's are about 50 KB.
const maxBody = 16 << 20

// Start listens on 127.0.0.1 (on a random port unless Options.Port) and
// serves until Close.
func Start(opts Options) (*Server, error) {
	if opts.Usage == (executors.Usage{}) {
		opts.Usage = executors.Usage{InputTokens: 11, CachedInputTokens: 3, OutputTokens: 7}
	}
	if opts.SlowInterval <= 0 {
		opts.SlowInterval = 200 * time.Millisecond
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{opts: opts, addr: ln.Addr().String(), url: "http://" + ln.Addr().String(), arrived: make(chan struct{})}
	s.listen(ln)
	return s, nil
}

// listen serves on ln.
func (s *Server) listen(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.http, s.ln = srv, ln
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// URL is the server's base URL, http://127.0.0.1:PORT, without a path.
func (s *Server) URL() string { return s.url }

// Close stops the server and drops open streams.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.mu.Lock()
	srv := s.http
	s.mu.Unlock()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
}

// Force makes every request play sc, whatever its markers; "" undoes it.
func (s *Server) Force(sc Scenario) {
	s.mu.Lock()
	s.forced = sc
	s.mu.Unlock()
}

// SetDelay holds every answer back for d before its first byte.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// Sent is the total usage the server has reported to clients so far.
func (s *Server) Sent() executors.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// Requests lists the model requests served so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// WaitRequests blocks until the server has seen n model requests, or ctx ends.
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, arrived := len(s.requests), s.arrived
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return fmt.Errorf("fakemodel: %d of %d requests arrived: %w", got, n, ctx.Err())
		}
	}
}

// report adds usage put on the wire.
func (s *Server) report(u executors.Usage) {
	s.mu.Lock()
	s.sent = s.sent.Add(u)
	s.mu.Unlock()
}

// reportCut notes usage that went out on a stream then cut: a client may or
// may not have read it before the connection dropped.
func (s *Server) reportCut(u executors.Usage) {
	s.mu.Lock()
	s.cutSent = s.cutSent.Add(u)
	s.mu.Unlock()
}

// SentOnCutStreams is the part of Sent that went out on streams the server
// then cut.
func (s *Server) SentOnCutStreams() executors.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cutSent
}

// next numbers ids so that each answer has its own.
func (s *Server) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead || r.Method == http.MethodGet {
		w.WriteHeader(http.StatusOK)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var proto protocol
	switch path := r.URL.Path; {
	case strings.HasSuffix(path, "/responses"):
		proto = responsesAPI{}
	case strings.HasSuffix(path, "/messages"):
		proto = messagesAPI{}
	case strings.HasSuffix(path, "/chat/completions"):
		proto = chatAPI{}
	default:
		http.NotFound(w, r)
		return
	}
	req, err := proto.parse(body)
	if err != nil {
		http.Error(w, "fakemodel: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	sc, delay := scenarioOf(body), s.delay
	if s.forced != "" {
		sc = s.forced
	}
	retryAfter := 2
	if s.limitNext > 0 {
		s.limitedUntil, s.limitNext = time.Now().Add(s.limitNext), 0
	}
	if wait := time.Until(s.limitedUntil); wait > 0 {
		sc, delay = Err429, 0
		retryAfter = int((wait + time.Second - 1) / time.Second)
	}
	s.requests = append(s.requests, Request{Path: r.URL.Path, Scenario: sc, Stream: req.stream, Time: time.Now()})
	close(s.arrived)
	s.arrived = make(chan struct{})
	if s.opts.Log != nil {
		line, _ := json.Marshal(map[string]any{"path": r.URL.Path, "scenario": sc, "stream": req.stream, "body": json.RawMessage(body)})
		_, _ = s.opts.Log.Write(append(line, '\n'))
	}
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	a := &answer{s: s, w: w, r: r, req: req, sc: sc, id: s.next(), size: len(body), retryAfter: retryAfter}
	switch sc {
	case Err500, Err401, Err429, ErrModel:
		proto.fail(a)
		return
	}
	proto.answer(a)
}

// protocol is one provider API.
type protocol interface {
	parse(body []byte) (parsed, error)
	answer(a *answer)
	fail(a *answer)
}

// parsed is what the scenarios need to know of a request.
type parsed struct {
	stream bool
	model  string
	// shellTool is the name of the request's shell tool, if it offers one.
	shellTool string
	// toolResult is true once the conversation holds a tool's output;
	// toolOutput is the last one's text.
	toolResult bool
	toolOutput string
	// patchTool is true when Codex offers its apply_patch tool.
	patchTool bool
	// structuredTool is true when Claude Code offers its StructuredOutput tool.
	structuredTool bool
	// cwd is the agent's working directory when the request says it
	// (Claude Code's system prompt does), for tools that want absolute paths.
	cwd string
}

// answer is one response in the making.
type answer struct {
	s   *Server
	w   http.ResponseWriter
	r   *http.Request
	req parsed
	sc  Scenario
	id  int
	// retryAfter is the seconds a 429 tells the client to wait.
	retryAfter int
	// size is the request body's, for Options.UsageFromRequest.
	size int
}

// usage is what the answer reports (see Options.UsageFromRequest).
func (a *answer) usage() executors.Usage {
	u := a.s.opts.Usage
	if !a.s.opts.UsageFromRequest {
		return u
	}
	in := int64(a.size / 4)
	cached := max(0, in-1024) * 9 / 10
	return executors.Usage{InputTokens: in, CachedInputTokens: cached, OutputTokens: u.OutputTokens}
}

// status is the HTTP status of an error scenario.
func (a *answer) status() int {
	switch a.sc {
	case Err401:
		return http.StatusUnauthorized
	case ErrModel:
		return http.StatusNotFound
	case Err429:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// errorMessage is the message of an error scenario, as a provider words it.
func (a *answer) errorMessage() string {
	switch a.sc {
	case Err401:
		return "fake invalid api key"
	case ErrModel:
		return fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", a.req.model)
	case Err429:
		return fmt.Sprintf("fake rate limit reached, retry after %ds", a.retryAfter)
	}
	return "fake internal server error"
}

func (a *answer) writeError(body string) {
	a.w.Header().Set("Content-Type", "application/json")
	if a.sc == Err429 {
		a.w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter))
	}
	a.w.WriteHeader(a.status())
	_, _ = io.WriteString(a.w, body)
}

// sse writes server-sent events and flushes each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func (a *answer) startSSE() *sse {
	h := a.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	a.w.WriteHeader(http.StatusOK)
	f, _ := a.w.(http.Flusher)
	return &sse{w: a.w, f: f}
}

// event writes one event; name may be empty. data is JSON.
func (e *sse) event(name string, data []byte) {
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	_, _ = e.w.Write(b.Bytes())
	if e.f != nil {
		e.f.Flush()
	}
}

// cut drops the connection mid-stream, as a failing proxy would.
func (e *sse) cut() {
	if e.f != nil {
		e.f.Flush()
	}
	panic(http.ErrAbortHandler)
}

// trickle sends deltas every SlowInterval for a minute or until the
// client leaves.
func (a *answer) trickle(send func(i int)) {
	t := time.NewTicker(a.s.opts.SlowInterval)
	defer t.Stop()
	end := time.After(time.Minute)
	for i := 0; ; i++ {
		send(i)
		select {
		case <-a.r.Context().Done():
			return
		case <-end:
			return
		case <-t.C:
		}
	}
}

// text is the scenario's text answer (Tool and Write answer after their
// tool ran).
func (a *answer) text() string {
	switch a.sc {
	case Tool:
		return ToolAnswer
	case Write, WriteOutside:
		out := strings.TrimSpace(a.req.toolOutput)
		if len(out) > 500 {
			out = out[:500]
		}
		return WriteAnswer + out
	case Schema:
		return SchemaAnswer
	}
	return TextAnswer
}

// wantsTool is true when this turn should be a shell tool call.
func (a *answer) wantsTool() bool {
	return a.sc == Tool && !a.req.toolResult && a.req.shellTool != ""
}

// wantsWrite is true when this turn should be the Write scenario's tool
// call. It is made whether or not the request offers the tool, so that a
// CLI that withholds it (a read-only policy) is seen refusing it.
func (a *answer) wantsWrite() bool {
	return (a.sc == Write || a.sc == WriteOutside) && !a.req.toolResult
}

var errNoBody = errors.New("empty request body")
