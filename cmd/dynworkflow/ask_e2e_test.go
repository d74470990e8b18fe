package main_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// askScript asks the three kinds of question.
const askScript = `export const meta = { name: 'ask', description: 'questions in the terminal' }
const go = await checkpoint('Ship it?')
const channel = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable', 'canary'] })
const note = await checkpoint('Release note?', { kind: 'text' })
return { go, channel, note }
`

// TestQuestionsInTheTerminal runs a workflow with a confirm, a select and
// a text checkpoint on a real terminal: each is asked in the live region
// (y/n; a list moved through with the arrow keys; a line of text with
// backspace), the answers reach the script, and the questions leave no
// trace but one line each in the scrollback.
func TestQuestionsInTheTerminal(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("ask.workflow.js", askScript)
	p := startPTY(e, 80, 24, true, "run", "ask.workflow.js")

	p.waitOutput(t, regexp.MustCompile(`\? Ship it\?[\s\S]*\[y/n\]`))
	type_(t, p, "y")
	p.waitOutput(t, regexp.MustCompile(`› 1\. beta`))
	type_(t, p, "\x1b[B") // down
	p.waitOutput(t, regexp.MustCompile(`› 2\. stable`))
	type_(t, p, "\r")
	p.waitOutput(t, regexp.MustCompile(`\? Release note\?[\s\S]*> `))
	type_(t, p, "hello wörlx")
	type_(t, p, "\x7f") // backspace
	type_(t, p, "d\r")
	<-p.Exited
	if p.err != nil {
		t.Fatalf("the run failed (%v):\n%s", p.err, p.out.String())
	}

	term := newVT(80, 24)
	term.feed(p.out.Bytes())
	lines := term.lines()
	transcript := strings.Join(lines, "\n")
	for _, want := range []string{`? Ship it? true`, `? Which channel? "stable"`, `? Release note? "hello wörld"`} {
		if countEqual(lines, want) != 1 {
			t.Errorf("%q should show once in the scrollback:\n%s", want, transcript)
		}
	}
	if strings.Contains(transcript, "[y/n]") || strings.Contains(transcript, "› ") {
		t.Errorf("a question was left on the screen after it was answered:\n%s", transcript)
	}
	if !strings.Contains(transcript, `"note": "hello wörld"`) || !strings.Contains(transcript, `"channel": "stable"`) {
		t.Errorf("the answers did not reach the script:\n%s", transcript)
	}
	// The answers were journaled as a human's.
	runs := e.List()
	d := e.Show(runs[0].RunID)
	e2etest.SameJSON(t, "the journaled result", d.Result, json.RawMessage(`{"go": true, "channel": "stable", "note": "hello wörld"}`))
}

// TestFirstAnswerWins asks a question in the terminal of run --ui while
// respond answers it from another shell: the respond wins, the terminal
// says it was answered elsewhere and goes on; the next question, answered
// in the terminal, is gone from the API.
func TestFirstAnswerWins(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("ask.workflow.js", `export const meta = { name: 'two', description: 'two questions' }
const a = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable'] })
const b = await checkpoint('Really?')
return { a, b }
`)
	p := startPTY(e, 100, 30, true, "run", "ask.workflow.js", "--ui")
	p.waitOutput(t, regexp.MustCompile(`› 1\. beta`))
	var cps []struct{ ID, Prompt string }
	if err := json.Unmarshal([]byte(e.DWOK("checkpoints", "--json").Stdout), &cps); err != nil || len(cps) != 1 {
		t.Fatalf("the question should be pending in the runtime too: %+v (%v)", cps, err)
	}
	e.DWOK("respond", cps[0].ID, "2")
	p.waitOutput(t, regexp.MustCompile(`\? Which channel\? "stable"  \(answered elsewhere\)`))
	p.waitOutput(t, regexp.MustCompile(`\? Really\?[\s\S]*\[y/n\]`))
	type_(t, p, "n")
	p.waitOutput(t, regexp.MustCompile(`completed in`))
	var left []any
	_ = json.Unmarshal([]byte(e.DWOK("checkpoints", "--json").Stdout), &left)
	if len(left) != 0 {
		t.Errorf("a question answered in the terminal is still pending: %v", left)
	}
	p.interrupt(t)
	d := e.Show(e.List()[0].RunID)
	e2etest.SameJSON(t, "the answers", d.Result, json.RawMessage(`{"a": "stable", "b": false}`))
}

// TestConfirmAboveInTheTerminal: a run whose forecast passes
// --confirm-above asks before its first agent, in the terminal; no ends it
// with nothing run, yes runs it.
func TestConfirmAboveInTheTerminal(t *testing.T) {
	t.Parallel()
	e, _ := paidEnv(t)
	e.Write("c.workflow.js", `export const meta = { name: 'c', description: 'two paid calls' }
await agent('one'); await agent('two')
return 'ran'`)
	for _, tc := range []struct{ key, want string }{{"n", "was declined"}, {"y", "completed in"}} {
		p := startPTY(e, 100, 30, true, "run", "c.workflow.js", "--executor", "paid", "--confirm-above", "0.5")
		p.waitOutput(t, regexp.MustCompile(`This run is forecast to cost \$\d+\.\d+ \(2 agent calls,[\s\S]*\[y/n\]`))
		type_(t, p, tc.key)
		<-p.Exited
		if !strings.Contains(p.out.String(), tc.want) {
			t.Errorf("answering %s: no %q in\n%s", tc.key, tc.want, p.out.String())
		}
	}
	runs := e.List()
	if len(runs) != 2 || runs[1].Status != "failed" || runs[1].Stats.Agents != 0 || runs[0].Status != "completed" {
		t.Errorf("runs %+v: want a declined one that ran nothing, then a completed one", runs)
	}
}

// type_ types keys on the terminal.
func type_(t *testing.T, p *ptyRun, keys string) {
	t.Helper()
	if _, err := p.terminal.Write([]byte(keys)); err != nil {
		t.Fatalf("type %q: %v", keys, err)
	}
}

// TestQuestionsWhenAttached: a run forwarded to serve and followed with
// --attach asks its questions in the attached terminal, and the answer
// goes to the runtime.
func TestQuestionsWhenAttached(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("one.workflow.js", `export const meta = { name: 'one', description: 'one question' }
return await checkpoint('Deploy?')
`)
	s := e2etest.Serve(e)
	p := startPTY(e, 100, 30, true, "run", "one.workflow.js", "--attach")
	p.waitOutput(t, regexp.MustCompile(`\? Deploy\?[\s\S]*\[y/n\]`))
	type_(t, p, "y")
	<-p.Exited
	if p.err != nil || !strings.Contains(p.out.String(), "completed in") {
		t.Fatalf("the attached run did not complete (%v):\n%s", p.err, p.out.String())
	}
	id := e.List()[0].RunID
	s.WaitRun(id, "completed")
	e2etest.SameJSON(t, "the answer", e.Show(id).Result, json.RawMessage(`true`))
}
