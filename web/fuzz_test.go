package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/star"
	"github.com/dynworkflow/dynworkflow/web"
)

// FuzzRequestBodies posts arbitrary bodies to the endpoints that take one:
// the answer is a JSON error under 500 or a success, never a panic or an
// internal error.
//
//	go test -run '^$' -fuzz FuzzRequestBodies -fuzztime 10m ./web
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{"script":"export const meta = { name: 'n', description: 'd' }\nreturn 1"}`,
		`{"script":"meta = {\"name\": \"n\", \"description\": \"d\"}\ndef main(args):\n    return 1\n","filename":"x.workflow.star"}`,
		`{"name":"nope","options":{"concurrency":0,"agentTimeoutMs":18446744073710}}`,
		`{"path":"../../etc/passwd","args":{"a":[1,{"b":null}]}}`,
		`{"script":"x","requestId":"r1","options":{"executor":"codex","tokenBudget":-1}}`,
		`{"value":true}`, `{"value":"a"}`, `{}`, `[]`, `null`, `{"script":1}`, "\x00", `{"a":1}{"b":2}`,
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	st, err := store.Open(filepath.Join(f.TempDir(), "state"), dir)
	if err != nil {
		f.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New(), star.New()),
		Executors: executors.NewSet(simulate.New(simulate.Config{})), Cwd: dir})
	if err != nil {
		f.Fatal(err)
	}
	srv, err := web.New(web.Config{Runtime: rt, Token: testToken, Cwd: dir})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
	})
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/api/runs", "/api/runs/some-run/resume", "/api/checkpoints/some-checkpoint/respond"} {
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewBufferString(body))
			req.Host = "127.0.0.1"
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("POST %s %q: %d, not JSON: %s", path, body, rec.Code, rec.Body)
			}
		}
	})
}
