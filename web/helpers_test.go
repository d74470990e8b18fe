package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/internal/gate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

const testToken = "test-token-0123456789abcdef"

// fixture is a runtime and its server over real HTTP on 127.0.0.1.
type fixture struct {
	t      *testing.T
	dir    string
	rt     *engine.Runtime
	srv    *web.Server
	http   *httptest.Server
	client *web.Client
	// gates hold the calls whose prompt carries [gate:NAME].
	gates *gate.Gates
}

type fixtureConfig struct {
	ring      int
	keepalive time.Duration
	buffer    int
	prices    *cost.Table
}

func newFixture(t *testing.T, fc fixtureConfig) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"), dir)
	if err != nil {
		t.Fatal(err)
	}
	cps := web.NewCheckpoints()
	gates := &gate.Gates{}
	rt, err := engine.New(engine.Config{
		Store: st, Hosts: lang.NewRegistry(jsvm.New()),
		Executors: executors.NewSet(gates.Wrap(simulate.New(simulate.Config{}))), Cwd: dir,
		Responder: cps, EventRing: fc.ring, Prices: fc.prices,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Config{Runtime: rt, Checkpoints: cps, Token: testToken, Cwd: dir,
		Keepalive: fc.keepalive, StreamBuffer: fc.buffer})
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, dir, rt, srv)
	f.gates = gates
	return f
}

// serve serves srv over real HTTP on 127.0.0.1 until the test ends, then
// closes rt and the server.
func serve(t *testing.T, dir string, rt *engine.Runtime, srv *web.Server) *fixture {
	t.Helper()
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
		hs.CloseClientConnections()
		hs.Close()
	})
	return &fixture{t: t, dir: dir, rt: rt, srv: srv, http: hs, client: web.NewClient(hs.URL, testToken)}
}

// request is one raw HTTP request and what to send with it.
type request struct {
	method, path string
	body         string
	header       map[string]string
	host         string
	noToken      bool
	// stream returns once the headers are in: for the event stream.
	stream bool
	// chunked sends the body without a Content-Length.
	chunked bool
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) errorCode() string {
	var b web.ErrorBody
	_ = json.Unmarshal(r.body, &b)
	return b.Error.Code
}

func (f *fixture) do(r request) response {
	f.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
		if r.chunked {
			body = io.MultiReader(body) // hides the length
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, f.http.URL+r.path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if !r.noToken {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	// Our representations, unless the test asks for another.
	req.Header.Set("Accept", web.MediaType)
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if r.host != "" {
		req.Host = r.host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	if r.stream && res.StatusCode == http.StatusOK {
		return response{status: res.StatusCode, header: res.Header}
	}
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func (f *fixture) getJSON(path string, v any) {
	f.t.Helper()
	res := f.do(request{method: http.MethodGet, path: path})
	if res.status != http.StatusOK {
		f.t.Fatalf("GET %s: %d %s", path, res.status, res.body)
	}
	if err := json.Unmarshal(res.body, v); err != nil {
		f.t.Fatalf("GET %s: %v", path, err)
	}
}

// startScript starts a run of script text and returns its id.
func (f *fixture) startScript(script string) web.StartResponse {
	f.t.Helper()
	resp, err := f.client.Start(context.Background(), web.StartRequest{Script: script})
	if err != nil {
		f.t.Fatalf("start: %v", err)
	}
	return resp
}

// waitStatus waits for the run.status event that ends an execution of
// run id with status want (the journal and snapshot are written by then),
// and returns the run.
func (f *fixture) waitStatus(id, want string) *engine.Detail {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := f.client.Stream(ctx, 0, id, func(ev web.StreamEvent) error {
		var p engine.StatusPayload
		if ev.Type == engine.EventRunStatus && json.Unmarshal(ev.Payload, &p) == nil && string(p.Status) == want {
			return web.ErrStopStream
		}
		return nil
	})
	if err != nil {
		f.t.Fatalf("run %s never became %s: %v", id, want, err)
	}
	d, err := f.client.Run(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// waitCheckpoint waits for a pending checkpoint of run id.
func (f *fixture) waitCheckpoint(id string) web.Checkpoint {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cps, err := f.client.Checkpoints(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		for _, cp := range cps {
			if cp.RunID == id {
				return cp
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("run %s never asked a checkpoint", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func jsonBody(v any) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	return b.String()
}
