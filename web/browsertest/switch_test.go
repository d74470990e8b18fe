package browsertest_test

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/web"
)

// TestSwitchRunWhileLoading: the user opens one run and, while its detail
// is still on its way, switches to another. The page must show the one
// chosen last: it stayed on "Loading…" for good, because the second fetch
// waited for the first and was then forgotten. The first detail is held by
// a proxy in front of the server until the switch has happened, so the
// order is the test's, not the machine's.
func TestSwitchRunWhileLoading(t *testing.T) {
	s := newServer(t, simulate.Config{})
	first := s.start("export const meta = { name: 'first', description: 'the run opened first' }\nreturn await agent('a')\n")
	second := s.start("export const meta = { name: 'second', description: 'the run chosen next' }\nreturn await agent('b')\n")
	s.waitStatus(first, "completed")
	s.waitStatus(second, "completed")

	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	target, _ := url.Parse("http://" + s.addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // the event stream goes through as it comes
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/runs/"+first) {
			hold := false
			once.Do(func() { hold = true })
			if hold {
				close(held)
				<-release
			}
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	tb := newTab(t)
	tb.navigate(web.DashboardLink("http://"+ln.Addr().String(), token, first))
	<-held
	tb.do(evalVoid(`location.hash = "run=" + ` + jsString(second)))
	tb.waitFor("the switch", `document.title.startsWith(`+jsString(second)+`)`)
	close(release)
	tb.waitFor("the run chosen last", `document.title === "second · dynworkflow" && !document.querySelector('.loading')`)
	if got := eval[string](tb, `document.title`); got != "second · dynworkflow" {
		t.Errorf("the page shows %q", got)
	}
}
