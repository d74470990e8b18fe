package browsertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	callgate "github.com/dynworkflow/dynworkflow/internal/gate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/web"
)

// The browser is started once for the package; each test gets its own tab
// (and so its own sessionStorage).
var shared struct {
	browser context.Context
	skip    string
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	path, err := chromiumPath()
	if err != nil {
		shared.skip = err.Error()
		return m.Run()
	}
	profile, err := os.MkdirTemp("", "dynworkflow-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(profile)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("mute-audio", true),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil {
		fmt.Fprintln(os.Stderr, "browsertest: start chromium:", err)
		return 1
	}
	shared.browser = browser
	return m.Run()
}

// chromiumPath finds the browser: $DYNWORKFLOW_CHROMIUM, else chromium on
// PATH.
func chromiumPath() (string, error) {
	if p := os.Getenv("DYNWORKFLOW_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (apt-get install chromium, or set DYNWORKFLOW_CHROMIUM)")
}

// needBrowser skips a test without a browser, or fails it under CI.
func needBrowser(t testing.TB) {
	t.Helper()
	if shared.browser != nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the dashboard tests need a browser under CI: %s", shared.skip)
	}
	t.Skip(shared.skip)
}

const token = "browser-test-token-0123456789abcdef"

// server is a runtime and its HTTP server on a real port of 127.0.0.1,
// which can be stopped and started again on the same port with the same
// state, as a restarted `dynworkflow serve --port` would be.
type server struct {
	t      testing.TB
	dir    string
	state  string
	sim    simulate.Config
	gates  *callgate.Gates
	addr   string
	rt     *engine.Runtime
	srv    *web.Server
	cancel context.CancelFunc
	served chan error
	client *web.Client
	// extra are executors beside the simulated one.
	extra []executors.Executor
}

func newServer(t testing.TB, sim simulate.Config, extra ...executors.Executor) *server {
	t.Helper()
	needBrowser(t)
	s := &server{t: t, dir: t.TempDir(), state: filepath.Join(t.TempDir(), "state"), sim: sim, gates: &callgate.Gates{}, extra: extra}
	s.open("127.0.0.1:0")
	t.Cleanup(s.close)
	return s
}

func (s *server) open(addr string) {
	s.t.Helper()
	st, err := store.Open(s.state, s.dir)
	if err != nil {
		s.t.Fatal(err)
	}
	cps := web.NewCheckpoints()
	rt, err := engine.New(engine.Config{
		Store: st, Hosts: lang.NewRegistry(jsvm.New()), Executors: executors.NewSet(append([]executors.Executor{s.gates.Wrap(simulate.New(s.sim))}, s.extra...)...),
		Cwd: s.dir, Responder: cps, EventRing: 1 << 16,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := rt.Recover(); err != nil {
		s.t.Fatal(err)
	}
	srv, err := web.New(web.Config{Runtime: rt, Checkpoints: cps, Token: token, Cwd: s.dir})
	if err != nil {
		s.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.rt, s.srv, s.cancel, s.addr = rt, srv, cancel, ln.Addr().String()
	s.served = make(chan error, 1)
	go func() { s.served <- srv.Serve(ctx, ln) }()
	s.client = web.NewClient("http://"+s.addr, token)
}

// release lets the calls at gate name ([gate:NAME] in their prompt) run:
// a test that must see a run still going holds it with a gate.
func (s *server) release(name string) { s.gates.Release(name) }

// close shuts down as serve does on Ctrl-C: running runs are paused.
func (s *server) close() {
	if s.rt == nil {
		return
	}
	s.srv.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.rt.Close(ctx); err != nil {
		s.t.Errorf("close the runtime: %v", err)
	}
	s.cancel()
	if err := <-s.served; err != nil {
		s.t.Errorf("serve: %v", err)
	}
	s.rt = nil
}

func (s *server) link(runID string) string {
	return web.DashboardLink("http://"+s.addr, token, runID)
}

// start starts a run of script text.
func (s *server) start(script string) string {
	s.t.Helper()
	resp, err := s.client.Start(context.Background(), web.StartRequest{Script: script})
	if err != nil {
		s.t.Fatalf("start: %v", err)
	}
	return resp.RunID
}

// startFile starts a run of a file of the repository's examples.
func (s *server) startExample(name string) string {
	s.t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := s.client.Start(context.Background(), web.StartRequest{Path: abs})
	if err != nil {
		s.t.Fatalf("start %s: %v", name, err)
	}
	return resp.RunID
}

func (s *server) detail(id string) *engine.Detail {
	s.t.Helper()
	d, err := s.client.Run(context.Background(), id)
	if err != nil {
		s.t.Fatalf("run %s: %v", id, err)
	}
	return d
}

// waitStatus waits until the API says run id is want.
func (s *server) waitStatus(id, want string) *engine.Detail {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d := s.detail(id)
		if d.Summary.Status == want {
			return d
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("run %s is %s, not %s", id, d.Summary.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tab is one browser tab on the dashboard. It records the dialogs the page
// opens (and dismisses them) and fails the test on a script exception, a
// console.error or a Content-Security-Policy violation.
type tab struct {
	t       testing.TB
	ctx     context.Context
	mu      sync.Mutex
	dialogs []string
	errs    []string
}

func newTab(t testing.TB) *tab {
	t.Helper()
	needBrowser(t)
	ctx, cancel := chromedp.NewContext(shared.browser)
	tb := &tab{t: t, ctx: ctx}
	console := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	var wg sync.WaitGroup
	wg.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			// A refused connection while the server restarts, or a 401
			// the page is meant to get, are the network's, not the
			// page's errors.
			if m.Source == "network" {
				continue
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				tb.mu.Lock()
				tb.errs = append(tb.errs, m.String())
				tb.mu.Unlock()
			}
		}
	})
	wg.Go(func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.dialogs = append(tb.dialogs, string(ev.Type)+": "+ev.Message)
			tb.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, e := range tb.errs {
			t.Errorf("the page logged an error: %s", e)
		}
	})
	return tb
}

func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("%v\n%s", err, tb.pageText())
	}
}

func (tb *tab) navigate(url string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(url))
}

// waitFor polls a JavaScript expression until it is truthy.
func (tb *tab) waitFor(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(45*time.Second))); err != nil {
		tb.screenshot(artifacts(tb.t), "failed.png")
		tb.t.Fatalf("waiting for %s (%s): %v\npage:\n%s", what, expr, err, tb.pageText())
	}
}

// eval evaluates expr and decodes its value into T.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// click clicks the element the CSS selector finds.
func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do(chromedp.Click(chromedp.CSS(sel)))
}

func (tb *tab) pageText() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	if len(s) > 3000 {
		s = s[:3000] + "…"
	}
	return s
}

func (tb *tab) dialogsOpened() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.dialogs...)
}

// screenshot saves a PNG of the viewport as name in the artifacts
// directory.
func (tb *tab) screenshot(dir, name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", path)
}

// artifacts is where screenshots go: $DYNWORKFLOW_ARTIFACTS/<test>, else a
// temporary directory.
func artifacts(t testing.TB) string {
	t.Helper()
	base := os.Getenv("DYNWORKFLOW_ARTIFACTS")
	if base == "" {
		return t.TempDir()
	}
	dir := filepath.Join(base, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sendKeys types text into the element the CSS selector finds.
func sendKeys(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), text)
}

func evalVoid(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](expr)
}

// startRequest is a start of script text with a concurrency.
func startRequest(script string, concurrency int) web.StartRequest {
	return web.StartRequest{Script: script, Options: &web.RunOptions{Concurrency: new(concurrency)}}
}
