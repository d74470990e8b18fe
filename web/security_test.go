package web_test

import (
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/web"
)

// apiRoute is a request to every API route that passes the checks and
// changes nothing: unknown ids, empty or invalid bodies.
type apiRoute struct {
	method, path, body string
	ok                 int    // the status when authenticated
	traversal          string // the same route with a traversing id, if it has an id
	stream             bool
}

func apiRoutes() []apiRoute {
	const run = "/api/runs/no-such-run"
	const cp = "/api/checkpoints/cp-00000000000000000000"
	return []apiRoute{
		{method: "GET", path: "/api/health", ok: 200},
		{method: "GET", path: "/api/openapi.json", ok: 200},
		{method: "GET", path: "/api/overview", ok: 200},
		{method: "GET", path: "/api/state", ok: 200},
		{method: "GET", path: "/api/events", ok: 200, stream: true},
		{method: "GET", path: "/api/runs", ok: 200},
		{method: "POST", path: "/api/runs", body: "{}", ok: 400},
		{method: "GET", path: run, ok: 404, traversal: "/api/runs/..%2F..%2Fetc%2Fpasswd"},
		{method: "DELETE", path: run, ok: 404, traversal: "/api/runs/..%2Fruns%2Fx"},
		{method: "POST", path: run + "/pause", ok: 404, traversal: "/api/runs/..%2F..%2Fx/pause"},
		{method: "POST", path: run + "/resume", ok: 404, traversal: "/api/runs/../resume"},
		{method: "POST", path: run + "/stop", ok: 404, traversal: "/api/runs/..%2Fx/stop"},
		{method: "GET", path: "/api/checkpoints", ok: 200},
		{method: "POST", path: cp + "/respond", body: `{"value":true}`, ok: 404, traversal: "/api/checkpoints/..%2F..%2Fx/respond"},
	}
}

func withQuery(path, key, value string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + key + "=" + url.QueryEscape(value)
}

// TestEveryRouteIsGuarded sends each API route every kind of request the
// issue lists and checks the status, then that nothing changed on disk.
func TestEveryRouteIsGuarded(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	done := f.startScript("export const meta = { name: 'guarded', description: 'd' }\nreturn await agent('hello')")
	f.waitStatus(done.RunID, "completed")
	before := f.files()

	for _, rt := range apiRoutes() {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			f.t = t
			tokenForms := map[string]func(tok string) request{
				"bearer": func(tok string) request {
					return request{noToken: true, header: map[string]string{"Authorization": "Bearer " + tok}}
				},
				"header": func(tok string) request {
					return request{noToken: true, header: map[string]string{"X-Workflow-Token": tok}}
				},
				"query": func(tok string) request {
					return request{noToken: true, path: withQuery(rt.path, "token", tok)}
				},
			}
			send := func(r request) response {
				r.method, r.stream = rt.method, rt.stream
				if r.path == "" {
					r.path = rt.path
				}
				if r.body == "" {
					r.body = rt.body
				}
				return f.do(r)
			}
			if res := send(request{noToken: true}); res.status != 401 || res.header.Get("WWW-Authenticate") == "" {
				t.Errorf("no token: %d %s", res.status, res.body)
			}
			for name, form := range tokenForms {
				if res := send(form("wrong-token-wrong-token")); res.status != 401 || res.errorCode() != "unauthorized" {
					t.Errorf("wrong token as %s: %d %s", name, res.status, res.body)
				}
				if res := send(form(testToken)); res.status != rt.ok {
					t.Errorf("token as %s: %d %s, want %d", name, res.status, res.body, rt.ok)
				}
			}
			for _, host := range []string{"evil.example", "evil.example:" + portOf(f.http.URL), "127.0.0.1.evil.example"} {
				if res := send(request{host: host}); res.status != 403 {
					t.Errorf("Host %s: %d %s", host, res.status, res.body)
				}
			}
			for _, host := range []string{"localhost:" + portOf(f.http.URL), "[::1]:" + portOf(f.http.URL)} {
				if res := send(request{host: host}); res.status != rt.ok {
					t.Errorf("Host %s: %d %s, want %d", host, res.status, res.body, rt.ok)
				}
			}
			origin := send(request{header: map[string]string{"Origin": "http://evil.example"}})
			if rt.method == "GET" {
				if origin.status != rt.ok {
					t.Errorf("GET with a foreign Origin: %d, want %d", origin.status, rt.ok)
				}
			} else if origin.status != 403 {
				t.Errorf("foreign Origin: %d %s", origin.status, origin.body)
			}
			if rt.method != "GET" {
				own := send(request{header: map[string]string{"Origin": "http://127.0.0.1:" + portOf(f.http.URL)}})
				if own.status != rt.ok {
					t.Errorf("own Origin: %d %s, want %d", own.status, own.body, rt.ok)
				}
				big := `{"script":"` + strings.Repeat("x", 5<<20) + `"}`
				for _, chunked := range []bool{false, true} {
					if res := send(request{body: big, chunked: chunked}); res.status != 413 {
						t.Errorf("5 MiB body (chunked %v): %d %.200s", chunked, res.status, res.body)
					}
				}
			}
			if rt.traversal != "" {
				if res := send(request{path: rt.traversal}); res.status != 400 {
					t.Errorf("traversal %s: %d %s", rt.traversal, res.status, res.body)
				}
			}
		})
	}
	f.t = t
	if after := f.files(); !reflect.DeepEqual(before, after) {
		t.Errorf("the state changed:\nbefore %v\nafter  %v", before, after)
	}
}

// files lists the state's run files with their sizes.
func (f *fixture) files() map[string]int64 {
	f.t.Helper()
	dir := f.rt.Store().RunsDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			f.t.Fatal(err)
		}
		if !strings.HasSuffix(e.Name(), ".lock") {
			out[e.Name()] = fi.Size()
		}
	}
	return out
}

func portOf(rawURL string) string {
	u, _ := url.Parse(rawURL)
	return u.Port()
}

// TestDashboardShell loads without the token but with the headers, and
// holds no data.
func TestDashboardShell(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	for _, path := range []string{"/", "/assets/main.js", "/assets/style.css"} {
		res := f.do(request{method: "GET", path: path, noToken: true})
		if res.status != 200 {
			t.Fatalf("%s: %d", path, res.status)
		}
		for h, want := range map[string]string{
			"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
		} {
			if got := res.header.Get(h); got != want {
				t.Errorf("%s: %s = %q, want %q", path, h, got, want)
			}
		}
		csp := res.header.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "frame-ancestors 'none'", "script-src 'self'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, d)
			}
		}
		if strings.Contains(string(res.body), testToken) {
			t.Errorf("%s holds the token", path)
		}
		if res := f.do(request{method: "GET", path: path, noToken: true, host: "evil.example"}); res.status != 403 {
			t.Errorf("%s with a foreign Host: %d", path, res.status)
		}
	}
	if res := f.do(request{method: "GET", path: "/api/nothing-here"}); res.status != 404 || res.errorCode() != "not_found" {
		t.Errorf("unknown API route: %d %s", res.status, res.body)
	}
	if res := f.do(request{method: "PUT", path: "/api/runs"}); res.status != 405 {
		t.Errorf("PUT /api/runs: %d %s", res.status, res.body)
	}
	if res := f.do(request{method: "GET", path: "/api/health"}); res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("API answers must not be cached")
	}
}

// TestDashboardAssets serves the dashboard's files with their types, and
// nothing else under /assets/.
func TestDashboardAssets(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	for path, want := range map[string]string{
		"/":                 "text/html; charset=utf-8",
		"/assets/main.js":   "text/javascript; charset=utf-8",
		"/assets/style.css": "text/css; charset=utf-8",
		"/assets/icon.svg":  "image/svg+xml",
	} {
		res := f.do(request{method: "GET", path: path, noToken: true})
		if res.status != 200 || res.header.Get("Content-Type") != want {
			t.Errorf("%s: %d %q, want 200 %q", path, res.status, res.header.Get("Content-Type"), want)
		}
	}
	for _, path := range []string{"/assets/nothing.js", "/assets/../dashboard.go", "/assets/%2e%2e/index.html", "/assets/index.html", "/assets/"} {
		if res := f.do(request{method: "GET", path: path, noToken: true}); res.status != 404 {
			t.Errorf("%s: %d, want 404", path, res.status)
		}
	}
}

// TestDashboardLinks puts the token in the fragment, which browsers never
// send to a server, and never in the query.
func TestDashboardLinks(t *testing.T) {
	d := web.Descriptor{URL: "http://127.0.0.1:4242", Token: "tok+en/="}
	for _, c := range []struct{ got, want string }{
		{d.DashboardURL(), "http://127.0.0.1:4242/#token=tok%2Ben%2F%3D"},
		{d.RunURL("audit-1"), "http://127.0.0.1:4242/#token=tok%2Ben%2F%3D&run=audit-1"},
		{web.DashboardLink(d.URL, "", "audit-1"), "http://127.0.0.1:4242/#run=audit-1"},
		{web.DashboardLink(d.URL, "", ""), "http://127.0.0.1:4242/"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
		if u, err := url.Parse(c.got); err != nil || u.RawQuery != "" {
			t.Errorf("%s has a query", c.got)
		}
	}
}
