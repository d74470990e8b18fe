package fakemodel

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, srv *Server) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[]}`))
	if err != nil {
		return nil, "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), nil
}

// A stopped server refuses connections; restarted, it answers on the same
// address.
func TestStopAndRestart(t *testing.T) {
	srv, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Stop()
	if _, _, err := post(t, srv); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a stopped server answered: %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if resp, body, err := post(t, srv); err != nil || resp.StatusCode != 200 || !strings.Contains(body, "[DONE]") {
		t.Fatalf("restarted: %v, %v", resp, err)
	}
}

// Until the reset, every request gets 429 with the wait in its header and
// message; after it, answers.
func TestRateLimit(t *testing.T) {
	srv, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.RateLimit(time.Now().Add(5 * time.Second))
	resp, body, err := post(t, srv)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "5" || !strings.Contains(body, "retry after 5s") {
		t.Fatalf("rate limited: %v %v %s", resp, err, body)
	}
	srv.RateLimit(time.Now())
	if resp, _, err := post(t, srv); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the reset: %v, %v", resp, err)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Scenario != Err429 {
		t.Fatalf("requests %+v", reqs)
	}
}
