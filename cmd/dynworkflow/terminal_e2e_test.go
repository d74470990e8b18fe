package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/internal/e2etest"
)

// TestErrorsExitCodesAndJSON checks, for each kind of mistake, the exit
// code, the --json error object on stdout (same exit code), and the hint
// on stderr in text mode.
func TestErrorsExitCodesAndJSON(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("ok.workflow.js", `export const meta = { name: 'known-run', description: 'd' }
return await agent('hello')
`)
	e.Write("syntax.workflow.js", `export const meta = { name: 'syntax', description: 'd' }
const a = (1 +
return a
`)
	known := e.RunCompleted("ok.workflow.js")
	for _, tc := range []struct {
		name     string
		Args     []string
		exit     int
		Code     string
		position string // a regexp the position must match; "" for none
		hint     string // in the message, in text and in JSON
	}{
		{"unknown command", []string{"rn", "ok.workflow.js"}, 64, "unknown_command", "", "did you mean run?"},
		{"unknown command version-like", []string{"verson"}, 64, "unknown_command", "", "did you mean version?"},
		{"misspelt flag", []string{"run", "ok.workflow.js", "--concurency", "3"}, 64, "unknown_flag", "", "did you mean --concurrency?"},
		{"flag of another command", []string{"list", "--watch"}, 64, "unknown_flag", "", "--watch is a flag of `dynworkflow run`"},
		{"bad --args", []string{"run", "ok.workflow.js", "--args", "{items: 1}"}, 64, "bad_args", "", "is not valid JSON"},
		{"bad flag value", []string{"run", "ok.workflow.js", "--concurrency", "many"}, 64, "bad_flag", "", "invalid argument"},
		{"unknown run id", []string{"show", "known-rnu"}, 1, "not_found", "", "did you mean " + known.RunID + "?"},
		{"invalid run id", []string{"show", "../x"}, 1, "bad_id", "", "invalid run id"},
		{"script syntax error", []string{"run", "syntax.workflow.js"}, 1, "bad_script", `syntax\.workflow\.js:3:\d+$`, "SyntaxError"},
		{"unknown executor", []string{"run", "ok.workflow.js", "--executor", "claude"}, 64, "unknown_executor", "", "did you mean claude-code?"},
		{"missing file", []string{"run", "nowhere.workflow.js"}, 1, "not_found", "", "neither a file nor a saved workflow"},
		{"respond without a runtime", []string{"respond", "cp-1", "y"}, 1, "no_live_runtime", "", "dynworkflow serve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.DW(append(tc.Args, "--json")...)
			e2etest.ExpectCode(t, r, tc.exit)
			var body struct {
				Error *struct {
					Code     string `json:"code"`
					Message  string `json:"message"`
					Position string `json:"position"`
				} `json:"error"`
			}
			dec := json.NewDecoder(strings.NewReader(r.Stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&body); err != nil || body.Error == nil {
				t.Fatalf("stdout is not one {\"error\": {...}} object (%v):\n%s", err, r)
			}
			if body.Error.Code != tc.Code {
				t.Errorf("code %q, want %q:\n%s", body.Error.Code, tc.Code, r)
			}
			if !strings.Contains(body.Error.Message, tc.hint) {
				t.Errorf("the message lacks %q:\n%s", tc.hint, r)
			}
			if tc.position != "" && !regexp.MustCompile(tc.position).MatchString(body.Error.Position) {
				t.Errorf("position %q, want %s", body.Error.Position, tc.position)
			}
			if tc.position == "" && body.Error.Position != "" {
				t.Errorf("position %q where there is none", body.Error.Position)
			}

			text := e.DW(tc.Args...)
			e2etest.ExpectCode(t, text, tc.exit)
			if !strings.Contains(text.Stderr, "dynworkflow: ") || !strings.Contains(text.Stderr, tc.hint) {
				t.Errorf("stderr should explain, with %q:\n%s", tc.hint, text)
			}
			if text.Stdout != "" {
				t.Errorf("an error printed on stdout in text mode:\n%s", text)
			}
			if tc.exit == 64 && !strings.Contains(text.Stderr, "--help' for usage.") {
				t.Errorf("a usage error should point to the help:\n%s", text)
			}
		})
	}
	if ids := e.JournalIDs(); len(ids) != 1 {
		t.Errorf("the mistakes journaled runs: %v", ids)
	}
}

// TestVersion checks --version and the version command.
func TestVersion(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := e.DWOK(args...)
		// The test binary is built with VCS stamping off or on depending
		// on where the tests run: either way, a version and the Go
		// toolchain are named.
		if !regexp.MustCompile(`^dynworkflow (\(devel\)|v\S+) .*go1\.\d+.* \w+/\w+\n$`).MatchString(r.Stdout) {
			t.Errorf("%v printed %q", args, r.Stdout)
		}
	}
	r := e.DWOK("version", "--json")
	var v struct{ Version, Go, Platform string }
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil || v.Version == "" || v.Go == "" || v.Platform == "" {
		t.Errorf("version --json: %v:\n%s", err, r)
	}
	if r := e.DW(); r.Code != 0 || !strings.Contains(r.Stdout, "Available Commands") {
		t.Errorf("no command should print the help and exit 0:\n%s", r)
	}
}

// showScript logs, makes a call that fails and one whose answer holds a
// terminal escape sequence.
const showScript = "export const meta = { name: 'shown', description: 'what show prints' }\n" +
	"log('starting the review')\n" +
	"const a = await agent('Review the parser: PROMPT-ONE')\n" +
	"const b = await agent('Review the lexer [simulate:fail]: PROMPT-TWO')\n" +
	"log('reviews in: ' + (b === null ? 'one failed' : 'both'))\n" +
	"const c = await agent('Echo this back: \\u001b[2J\\u001b]0;pwned\\u0007 PROMPT-THREE ' + 'x'.repeat(3000) + ' END-OF-PROMPT')\n" +
	"return [a, b, c.length]\n"

// TestShow checks that show prints each call's prompt, the log lines
// and a failed call's reason, in time order, with control characters
// escaped; that show RUN CALL prints a call whole; and that runs are found
// by prefix and by "last".
func TestShow(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("shown.workflow.js", showScript)
	o := e.RunCompleted("shown.workflow.js")

	r := e.DWOK("show", o.RunID)
	out := r.Stdout
	if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
		t.Errorf("show printed raw control characters:\n%q", out)
	}
	if !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("show should print the escape sequence escaped, as \\x1b[2J:\n%s", out)
	}
	assertOrder(t, strings.Split(out, "\n"),
		"starting the review",
		"/agent.0", "prompt: Review the parser: PROMPT-ONE", "result: ",
		"/agent.1  failed", "prompt: Review the lexer [simulate:fail]: PROMPT-TWO", "error: ",
		"reviews in: one failed",
		"/agent.2", "PROMPT-THREE")
	if !regexp.MustCompile(`error: .*\S`).MatchString(out) {
		t.Errorf("the failed call's reason is missing:\n%s", out)
	}
	if strings.Contains(out, "END-OF-PROMPT") {
		t.Errorf("show of a run should cut a 3,000-character prompt, and point to show RUN CALL")
	}

	// One call whole, by path, by #N and by prefix.
	for _, call := range []string{"/agent.2", "#3"} {
		r := e.DWOK("show", o.RunID, call)
		if !strings.Contains(r.Stdout, "END-OF-PROMPT") || !strings.Contains(r.Stdout, strings.Repeat("x", 3000)) {
			t.Errorf("show RUN %s should print the whole prompt:\n%.2000s", call, r.Stdout)
		}
		for _, w := range []string{"Prompt", "Result", "Tokens", "Started", "Took", "Attempts"} {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("show RUN %s lacks %q:\n%.2000s", call, w, r.Stdout)
			}
		}
		if strings.ContainsRune(r.Stdout, 0x1b) {
			t.Errorf("show RUN CALL printed a raw escape character")
		}
	}
	r = e.DWOK("show", o.RunID, "/agent.1")
	if !strings.Contains(r.Stdout, "Error") || !strings.Contains(r.Stdout, "failed") {
		t.Errorf("show of the failed call lacks its error:\n%s", r.Stdout)
	}
	var call struct{ Path, Prompt string }
	if err := json.Unmarshal([]byte(e.DWOK("show", o.RunID, "#1", "--json").Stdout), &call); err != nil || call.Path != "/agent.0" {
		t.Errorf("show RUN #1 --json should be the first call: %+v (%v)", call, err)
	}

	// By prefix and by last.
	other := e.RunCompleted("shown.workflow.js")
	for _, ref := range []string{"last", other.RunID[:len("shown-")+3]} {
		if strings.HasPrefix(o.RunID, ref) && ref != "last" {
			continue // both ids start alike: not a unique prefix
		}
		r := e.DWOK("show", ref, "--json")
		var d e2etest.Detail
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || d.Summary.RunID != other.RunID {
			t.Errorf("show %s should show the newest run %s: %+v", ref, other.RunID, d.Summary)
		}
	}
	r = e.DW("show", "shown-")
	e2etest.ExpectCode(t, r, 1)
	if !strings.Contains(r.Stderr, "is the start of 2 run ids") {
		t.Errorf("an ambiguous prefix should name the runs it matches:\n%s", r)
	}
}

// TestCheckpointsWaiting checks that a run blocked on a human is waiting
// in list and show, that checkpoints lists its question, and that
// respond answers it by run id prefix with y and by choice number.
func TestCheckpointsWaiting(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	e.Write("confirm.workflow.js", `export const meta = { name: 'confirm', description: 'asks a human' }
const go = await checkpoint('Ship it?', { kind: 'confirm' })
const channel = await checkpoint('Which channel?', { kind: 'select', choices: ['beta', 'stable'] })
return { go, channel }
`)
	s := e2etest.Serve(e)
	r := e.DWOK("run", "confirm.workflow.js", "--json")
	var started struct{ RunID string }
	if err := json.Unmarshal([]byte(r.Stdout), &started); err != nil || started.RunID == "" {
		t.Fatalf("a forwarded run --json should print its id:\n%s", r)
	}
	id := started.RunID
	cp := s.WaitCheckpoint(id)

	if got := e.Listed(id).Status; got != "waiting" {
		t.Errorf("list --json says %q for a run waiting on a checkpoint, want waiting", got)
	}
	list := e.DWOK("list")
	if !regexp.MustCompile(regexp.QuoteMeta(id) + `\s+waiting\s`).MatchString(list.Stdout) {
		t.Errorf("list should say waiting:\n%s", list.Stdout)
	}
	show := e.DWOK("show", id)
	if !strings.Contains(show.Stdout, " · waiting") || !strings.Contains(show.Stdout, cp.ID) || !strings.Contains(show.Stdout, "Ship it?") {
		t.Errorf("show should say waiting, and on which checkpoint:\n%s", show.Stdout)
	}
	cps := e.DWOK("checkpoints")
	for _, w := range []string{cp.ID, id, "confirm", "Ship it?", "dynworkflow respond " + cp.ID + " yes|no"} {
		if !strings.Contains(cps.Stdout, w) {
			t.Errorf("checkpoints lacks %q:\n%s", w, cps.Stdout)
		}
	}
	var listed []struct{ ID, RunID, Prompt string }
	if err := json.Unmarshal([]byte(e.DWOK("checkpoints", "--json").Stdout), &listed); err != nil || len(listed) != 1 || listed[0].ID != cp.ID {
		t.Errorf("checkpoints --json: %+v (%v)", listed, err)
	}

	bad := e.DW("respond", cp.ID, "maybe")
	e2etest.ExpectCode(t, bad, 1)
	if !strings.Contains(bad.Stderr, "yes or no") {
		t.Errorf("a bad answer should say what the checkpoint takes:\n%s", bad)
	}
	// By the run's id prefix: it waits on exactly one checkpoint.
	ans := e.DWOK("respond", id[:len(id)-3], "y", "--json")
	var answered struct {
		Action, CheckpointID, RunID string
		Value                       json.RawMessage
	}
	if err := json.Unmarshal([]byte(ans.Stdout), &answered); err != nil || answered.CheckpointID != cp.ID || answered.RunID != id || string(answered.Value) != "true" {
		t.Errorf("respond --json should name the checkpoint and the run: %+v (%v)\n%s", answered, err, ans.Stdout)
	}
	second := s.WaitCheckpoint(id)
	if second.ID == cp.ID {
		t.Fatalf("the answered checkpoint is still pending")
	}
	e.DWOK("respond", second.ID, "2")
	s.WaitRun(id, "completed")
	d := e.Show(id)
	e2etest.SameJSON(t, "the answers", d.Result, json.RawMessage(`{"go": true, "channel": "stable"}`))
	if got := e.Listed(id).Status; got != "completed" {
		t.Errorf("after the answers, list says %q", got)
	}
	// serve said each change of the run's state, once.
	s.WaitStderr(id + " completed in ")
	for _, w := range []string{id + " started: confirm", id + " waiting: checkpoint " + cp.ID, id + " running: checkpoint at /checkpoint.0 answered true", id + " running: checkpoint at /checkpoint.1 answered \"stable\"",
		id + " waiting: checkpoint " + second.ID, id + " completed in "} {
		if n := strings.Count(s.Stderr.String(), w); n != 1 {
			t.Errorf("serve's terminal shows %q %d times, want once:\n%s", w, n, s.Stderr.String())
		}
	}
}

// TestRunFromStdin checks `run -`: a script piped in runs, in either
// language, and its errors name it.
func TestRunFromStdin(t *testing.T) {
	t.Parallel()
	e := e2etest.NewEnv(t)
	r := dwStdin(e, "export const meta = { name: 'piped', description: 'd' }\nreturn await agent('from a pipe')\n", "run", "-", "--json")
	e2etest.ExpectCode(t, r, 0)
	if o := e2etest.ParseOutcome(t, r); o.Name != "piped" || !strings.Contains(string(o.Result), "from a pipe") {
		t.Errorf("run - should run the piped script:\n%s", r)
	}
	r = dwStdin(e, "meta = {\"name\": \"piped-star\", \"description\": \"d\"}\ndef main(args):\n    return agent(\"starlark from a pipe\")\n", "run", "-", "--json")
	e2etest.ExpectCode(t, r, 0)
	if o := e2etest.ParseOutcome(t, r); o.Name != "piped-star" {
		t.Errorf("run - should run a piped Starlark script:\n%s", r)
	}
	r = dwStdin(e, "export const meta = { name: 'broken', description: 'd' }\nconst a = (\n", "run", "-", "--json")
	e2etest.ExpectCode(t, r, 1)
	if !regexp.MustCompile(`"position": ".*stdin\.workflow\.js:\d+:\d+"`).MatchString(r.Stdout) {
		t.Errorf("a piped script's error should name stdin.workflow.js and its line:\n%s", r)
	}
	r = dwStdin(e, "", "run", "-")
	e2etest.ExpectCode(t, r, 64)
	if !strings.Contains(r.Stderr, "standard input is empty") {
		t.Errorf("an empty pipe should be explained:\n%s", r)
	}
}

// dwStdin runs the binary to completion with stdin as its standard input.
func dwStdin(e *e2etest.Env, stdin string, args ...string) e2etest.Result {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2etest.CmdTimeout)
	defer cancel()
	cmd := e.Command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r, err := e2etest.ResultOf(args, cmd, err, stdout.String(), stderr.String())
	if err != nil {
		e.T.Fatalf("dynworkflow %s: %v", strings.Join(args, " "), err)
	}
	e.CheckRace(r)
	return r
}
