package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

// served is a server on a real listener, through Server.Serve, as
// dynworkflow serve runs it.
type served struct {
	rt   *engine.Runtime
	srv  *web.Server
	addr string
	// stop ends Serve as a Ctrl-C of serve does and returns its error.
	stop func() error
}

func serveReal(t *testing.T, cfg web.Config) *served {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()),
		Executors: executors.NewSet(simulate.New(simulate.Config{})), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Runtime, cfg.Token, cfg.Cwd = rt, testToken, dir
	srv, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := web.ListenLoopback("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-errc
	})
	t.Cleanup(func() {
		_ = stop()
		closeCtx, cancelClose := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancelClose()
		_ = rt.Close(closeCtx)
	})
	return &served{rt: rt, srv: srv, addr: ln.Addr().String(), stop: stop}
}

// rawResponse sends raw bytes on a new connection and reads the response's
// status line and headers.
func rawResponse(t *testing.T, addr, raw string) (string, http.Header) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.Status, res.Header
}

// The answers Go's server makes itself, before any handler runs, carry the
// same security headers as ours.
func TestGoOwnErrorsCarrySecurityHeaders(t *testing.T) {
	s := serveReal(t, web.Config{})
	for name, raw := range map[string]string{
		"malformed request": "GARBAGE\r\n\r\n",
		"bad host header":   "GET /api/health HTTP/1.1\r\nHost: a b\r\n\r\n",
		"headers too large": "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("x", 200<<10) + "\r\n\r\n",
		"no host":           "GET /api/health HTTP/1.1\r\n\r\n",
	} {
		status, h := rawResponse(t, s.addr, raw)
		if !strings.HasPrefix(status, "4") {
			t.Errorf("%s: status %s, want a 4xx from Go's server", name, status)
		}
		for _, k := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy", "Cache-Control"} {
			if h.Get(k) == "" {
				t.Errorf("%s (%s): no %s header: %v", name, status, k, h)
			}
		}
	}
	// Ours are not doubled.
	_, h := rawResponse(t, s.addr, "GET /api/nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if len(h.Values("Content-Security-Policy")) != 1 {
		t.Errorf("our own 404 has %d CSP headers", len(h.Values("Content-Security-Policy")))
	}
}

// Idle keep-alive connections and slow bodies do not hold the server.
func TestIdleAndBodyTimeouts(t *testing.T) {
	s := serveReal(t, web.Config{IdleTimeout: 200 * time.Millisecond, BodyTimeout: 200 * time.Millisecond})
	closedWithin := func(c net.Conn, d time.Duration) bool {
		_ = c.SetReadDeadline(time.Now().Add(d))
		_, err := io.Copy(io.Discard, c)
		return err == nil // EOF: the server closed it
	}

	idle, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", testToken)
	br := bufio.NewReader(idle)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("health: %v %v", res, err)
	}
	io.Copy(io.Discard, res.Body)
	if !closedWithin(idle, 5*time.Second) {
		t.Error("an idle keep-alive connection was not closed")
	}

	slow, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"scr", testToken)
	start := time.Now()
	if !closedWithin(slow, 5*time.Second) {
		t.Error("a body that never comes held its connection")
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("the slow body was cut after %v", time.Since(start))
	}
}

// A connection that never sends a request, as a browser opens ahead of
// need, does not make the shutdown fail: it is closed once the wait for
// requests is over.
func TestShutdownClosesSilentConnections(t *testing.T) {
	s := serveReal(t, web.Config{})
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := s.stop(); err != nil {
		t.Errorf("Serve ended with %v, want nil", err)
	}
	// Closed: EOF, or a reset when the listener closed before accepting it.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var timeout net.Error
	if n, err := c.Read(make([]byte, 1)); err == nil || errors.As(err, &timeout) && timeout.Timeout() {
		t.Errorf("the silent connection is still open after the shutdown (read %d, %v)", n, err)
	}
}

// One stream more than the cap gets a clear 503.
func TestStreamCap(t *testing.T) {
	s := serveReal(t, web.Config{MaxStreams: 2})
	open := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, "http://"+s.addr+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Accept", web.MediaType)
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	for range 2 {
		if res := open(); res.StatusCode != http.StatusOK {
			t.Fatalf("stream under the cap: %s", res.Status)
		}
	}
	res := open()
	var body web.ErrorBody
	_ = json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != http.StatusServiceUnavailable || body.Error.Code != "too_many_streams" ||
		!strings.Contains(body.Error.Message, "2 event streams") || res.Header.Get("Retry-After") == "" {
		t.Errorf("stream over the cap: %s %+v (Retry-After %q)", res.Status, body, res.Header.Get("Retry-After"))
	}
}

// A client that stops reading its stream is cut off after the write
// timeout, and its stream stops counting.
func TestStalledStreamIsCutOff(t *testing.T) {
	s := serveReal(t, web.Config{StreamWriteTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", testToken)
	deadline := time.Now().Add(5 * time.Second)
	for s.srv.Streams() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the stream did not open")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Large events, never read, until the socket buffers are full.
	big := strings.Repeat("x", 1<<20)
	for i := 0; s.srv.Streams() == 1; i++ {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("a stalled stream was never cut off")
		}
		s.rt.Events().Publish("r", engine.EventLog, engine.LogPayload{Message: big})
		time.Sleep(20 * time.Millisecond)
	}
}

func TestListenLoopback(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "localhost", "localhost.", "LOCALHOST"} {
		ln, err := web.ListenLoopback(host, 0)
		if err != nil {
			t.Errorf("ListenLoopback(%q) = %v", host, err)
			continue
		}
		if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			t.Errorf("ListenLoopback(%q) bound %v", host, ip)
		}
		ln.Close()
	}
	for _, host := range []string{"0.0.0.0", "::", "example.com", "localhost.example", "10.1.2.3", ""} {
		if ln, err := web.ListenLoopback(host, 0); err == nil {
			ln.Close()
			t.Errorf("ListenLoopback(%q) listened on %v", host, ln.Addr())
		}
	}
}
