package browsertest_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/dynworkflow/dynworkflow/executors/simulate"
)

const payload = `<img src=x onerror=alert(1)>`

// hostileScript puts the payload everywhere a script or an agent can put
// text: the description, a label, a phase, a prompt and so the agent's
// answer, a log line, a checkpoint's question, an error and the result.
const hostileScript = "export const meta = { name: 'hostile', description: 'about " + payload + "', phases: ['" + payload + "'] }\n" +
	"phase('" + payload + "')\n" +
	"log('logged " + payload + "')\n" +
	"const said = await agent('Echo " + payload + " back', { label: 'label " + payload + "' })\n" +
	"const broke = await agent('fail " + payload + " [simulate:fail]', { label: 'broken " + payload + "' }).catch(e => 'caught')\n" +
	"const ok = await checkpoint('Allow " + payload + "?', { kind: 'confirm' })\n" +
	"return { said, ok, html: '" + payload + "' }\n"

// TestHostileTextStaysText: agent and script text containing HTML shows
// as the literal text it is, creates no element and opens no dialog.
func TestHostileTextStaysText(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.start(hostileScript)
	tb := newTab(t)
	tb.navigate(s.link(id))
	tb.waitFor("the checkpoint", `document.querySelector('.view-run form.checkpoint[data-kind=confirm]')`)
	q := jsString(payload)
	tb.waitFor("the question as text", `document.querySelector('.view-run form.checkpoint .cp-prompt').textContent === "Allow " + `+q+` + "?"`)
	tb.click(`.view-run form.checkpoint button[data-answer=yes]`)
	tb.waitFor("the run completed", `document.querySelector('.run-sub .badge').textContent === "completed"`)
	tb.waitFor("the agent's row", `[...document.querySelectorAll('.agent-row .a-name')].some(e => e.textContent === "label " + `+q+`)`)
	tb.click(`.agent-row[data-path="/agent.0"]`)
	tb.waitFor("the agent's answer as text", `document.querySelector('.agent-panel [data-field=result]')?.textContent.includes(`+q+`)`)
	// The result is rendered once the page has fetched the finished run,
	// after its badge says completed.
	tb.waitFor("the run's result", `document.querySelector('[data-field=run-result]')`)

	for what, expr := range map[string]string{
		"description":  `document.querySelector('.view-run .desc').textContent === "about " + ` + q,
		"phase":        `document.querySelector('.phase-toggle').textContent === ` + q,
		"prompt":       `document.querySelector('.agent-panel [data-field=prompt]').textContent === "Echo " + ` + q + ` + " back"`,
		"log line":     `[...document.querySelectorAll('.log-line .msg')].some(e => e.textContent === "logged " + ` + q + `)`,
		"run result":   `document.querySelector('[data-field=run-result]').textContent.includes('"html": "' + ` + q + ` + '"')`,
		"failure":      `[...document.querySelectorAll('.fail-calls button')].some(e => e.textContent === "broken " + ` + q + `)`,
		"no img":       `document.querySelectorAll('img').length === 0`,
		"no handlers":  `document.querySelectorAll('[onerror], [onload], [onclick], [onmouseover]').length === 0`,
		"page in view": `document.title.startsWith("hostile")`,
	} {
		if !eval[bool](tb, expr) {
			t.Errorf("%s: %s is false\n%s", what, expr, tb.pageText())
		}
	}
	tb.navigate(s.link(""))
	tb.waitFor("the list", `document.querySelector('.run-row[data-run]')`)
	if !eval[bool](tb, `document.querySelectorAll('img').length === 0`) {
		t.Error("the run list made an img element")
	}
	if d := tb.dialogsOpened(); len(d) != 0 {
		t.Errorf("the page opened dialogs: %v", d)
	}
}

// TestTokenLeavesTheAddressBar: the token in the link's fragment moves to
// sessionStorage, the address bar and history no longer hold it, and no
// request the page makes carries it in its URL.
func TestTokenLeavesTheAddressBar(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.start(liveScript)
	tb := newTab(t)
	var mu sync.Mutex
	var urls []string
	requests := chromedp.Events(tb.ctx, network.RequestWillBeSent)
	if _, err := chromedp.Call(tb.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(tb.ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range requests {
			if err != nil || ctx.Err() != nil {
				return
			}
			mu.Lock()
			urls = append(urls, ev.Request.URL+ev.Request.URLFragment)
			mu.Unlock()
		}
	}()
	tb.navigate(s.link(id))
	tb.waitFor("the run view", `document.querySelector('.view-run h1')?.textContent === "live-agents"`)
	tb.waitFor("the event stream", `document.body.dataset.conn === "live"`)
	href := eval[string](tb, `location.href`)
	if strings.Contains(href, token) || !strings.HasSuffix(href, "/#run="+id) {
		t.Errorf("the address bar holds %s", href)
	}
	if got := eval[string](tb, `sessionStorage.getItem("dynworkflow.token")`); got != token {
		t.Errorf("sessionStorage holds %q", got)
	}
	// The history entry of the link was replaced, not kept.
	if n := eval[int](tb, `history.length`); n != 2 {
		t.Errorf("history has %d entries, want 2 (about:blank and the dashboard)", n)
	}
	tb.do(chromedp.Reload())
	tb.waitFor("the run view after a reload, from sessionStorage", `document.querySelector('.view-run h1')?.textContent === "live-agents"`)
	cancel()
	mu.Lock()
	defer mu.Unlock()
	var api int
	for _, u := range urls {
		if strings.Contains(u, "/api/") {
			api++
		}
		if strings.Contains(u, token) && u != s.link(id) {
			t.Errorf("a request carried the token in its URL: %s", u)
		}
	}
	if api == 0 {
		t.Errorf("no API request seen among %v", urls)
	}
}

// TestWithoutAValidToken: no token, or a wrong one, gives a clear message
// and no data.
func TestWithoutAValidToken(t *testing.T) {
	s := newServer(t, simulate.Config{})
	id := s.start(liveScript)
	for _, c := range []struct{ name, url, state, says string }{
		{"no token", "http://" + s.addr + "/#run=" + id, "no-token", "This dashboard needs its link."},
		{"wrong token", "http://" + s.addr + "/#token=not-the-token-0123456789&run=" + id, "unauthorized", "The runtime refused this page's token."},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := newTab(t)
			tb.navigate(c.url)
			tb.waitFor(c.state, `document.body.dataset.state === `+jsString(c.state))
			if got := eval[string](tb, `document.querySelector('#gate-title').textContent`); got != c.says {
				t.Errorf("the page says %q", got)
			}
			text := tb.pageText()
			for _, secret := range []string{id, "live-agents", token} {
				if strings.Contains(text, secret) {
					t.Errorf("the page shows %q without a valid token:\n%s", secret, text)
				}
			}
			if got := eval[bool](tb, `sessionStorage.getItem("dynworkflow.token") === null`); !got {
				t.Error("a refused token stays in sessionStorage")
			}
		})
	}
}

// TestAgentPanelShowsFieldsItDoesNotKnow: a field a newer server adds to a
// call (a permission policy, a worktree) is listed in the agent's panel,
// as text, without the page knowing it.
func TestAgentPanelShowsFieldsItDoesNotKnow(t *testing.T) {
	s := newServer(t, simulate.Config{})
	tb := newTab(t)
	tb.navigate(s.link(""))
	tb.waitFor("the page", `document.body.dataset.state === "ready"`)
	text := eval[string](tb, `import("/assets/agentpanel.js").then(m => m.agentPanel({
		path: "/agent.0", kind: "agent", status: "done", label: "x",
		permissionPolicy: "read-only", worktree: { branch: "wf/x", dir: "<b>d</b>" },
	}, { onClose() {} }).textContent)`)
	for _, want := range []string{"permissionPolicyread-only", `worktree{"branch":"wf/x","dir":"<b>d</b>"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("the panel lacks %q:\n%s", want, text)
		}
	}
}
