package web_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes holds the hand-written description to the
// server: every operation it lists is served, and every API route served
// is listed.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	f.getJSON("/api/openapi.json", &doc)
	var described []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			described = append(described, strings.ToUpper(method)+" "+path)
		}
	}
	param := regexp.MustCompile(`:(\w+)`)
	var served []string
	for _, r := range f.srv.Routes() {
		if strings.HasPrefix(r.Path, "/api/") {
			served = append(served, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
		}
	}
	slices.Sort(described)
	slices.Sort(served)
	if !slices.Equal(described, served) {
		t.Errorf("openapi.json and the router disagree:\ndescribed %v\nserved    %v", described, served)
	}
	// And each described operation answers something other than 404/405
	// for a well-formed request (unknown ids aside).
	for _, op := range described {
		method, path, _ := strings.Cut(op, " ")
		concrete := strings.NewReplacer("{id}", "cp-00000000000000000000").Replace(path)
		if strings.HasPrefix(path, "/api/runs/") {
			concrete = strings.ReplaceAll(path, "{id}", "no-such-run")
		}
		res := f.do(request{method: method, path: concrete, stream: path == "/api/events", body: map[bool]string{true: "{}"}[method == http.MethodPost]})
		if res.status == http.StatusMethodNotAllowed || res.status == http.StatusNotFound && res.errorCode() != "not_found" {
			t.Errorf("%s %s: %d %s", method, concrete, res.status, res.body)
		}
	}
}
