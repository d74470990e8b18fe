package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
)

// The hand-written encoder must say exactly what encoding/json would: every
// record it writes decodes to the record it was given.
func TestRecordEncoding(t *testing.T) {
	usage := &executors.Usage{InputTokens: 12, CachedInputTokens: 3, OutputTokens: 7, CostUSD: 0.0125}
	tests := []record{
		{Seq: 1, Type: recRun, Time: 1700000000000, Run: &runHeader{RunID: "r-1", Name: "n", ScriptPath: "/a.js", ScriptHash: "h",
			ScriptText: "export const meta = {}\nreturn 1", Args: json.RawMessage(`{"x":[1,2]}`), Options: DefaultOptions(), Cwd: "/tmp",
			Executors: []executors.Definition{{Name: "fake", Kind: "command", Command: []string{"echo", "{prompt}"}, EnvNames: []string{"KEY"}}}}},
		{Seq: 2, Type: recStarted, Time: 5, Epoch: 3, Path: "/par.0/1/agent.0", Kind: "agent", Fingerprint: "abc",
			Call: &callInfo{Label: "l", Phase: "p", Prompt: "quote \" backslash \\ newline \n tab \t bell \a nul \x00 é 😀 \u2028", Executor: "simulate", Model: "m",
				Effort: "high", Permissions: executors.ReadOnly, Schema: json.RawMessage(`{"type":"object"}`), Route: "scan *=haiku"}},
		{Seq: 3, Type: recFinished, Time: 6, Path: "/agent.0", Kind: "agent", Fingerprint: "f", Result: json.RawMessage(`"text"`), Usage: usage,
			Answer: &answerInfo{Source: "live", Provider: "p", Model: "m", Attempts: 2, DurMs: 40,
				History: []executors.HistoryItem{{Kind: "message", Role: "user", Text: "hi"}, {Kind: "tool_call", Name: "bash", Text: "ls", IsError: true}}}},
		{Seq: 4, Type: recFinished, Time: 7, Path: "/ckpt", Kind: "checkpoint", Fingerprint: "f", Result: json.RawMessage(`true`),
			Call: &callInfo{Prompt: "ok?"}, Answer: &answerInfo{Source: "headless-default"}},
		{Seq: 5, Type: recFailed, Time: 8, Path: "/agent.1", Kind: "agent", Fingerprint: "g", Usage: &executors.Usage{},
			Error: &errorInfo{Class: "terminal", Code: "X", Message: "boom"}, Answer: &answerInfo{Source: "live", Attempts: 1}},
		{Seq: 6, Type: recLog, Time: 9, Path: "/par.0/2", Level: "warn", Message: "careful"},
		{Seq: 7, Type: recResume, Time: 10, Epoch: 1, Resume: &resumeHeader{Rule: "edit", OldHash: "a", NewHash: "b", Options: DefaultOptions()}},
		{Seq: 8, Type: recScript, Time: 11, Script: &scriptRecord{Frame: "/wf.0:c", Name: "c", Path: "c.js", Hash: "h", Text: "t"}},
		{Seq: 9, Type: recEnd, Time: 12, End: &endInfo{Status: "completed", Result: json.RawMessage(`{"a":1}`), Replayed: 1, Live: 2}},
		{Seq: 10, Type: recLog, Time: 13, Message: "invalid utf-8: \xff\xfe end"},
		{Seq: 13, Type: recScriptError, Time: 16, Path: "/pipe.0/1/s0", Message: "ReferenceError: X is not defined", Position: "a.js:3:9"},
		{Seq: 11, Type: recStarted, Time: 14, Path: "/agent.2", Kind: "agent", Fingerprint: "h", Call: &callInfo{Label: "w", Prompt: "edit"},
			Worktree: &Worktree{Status: "active", Dir: "/s/worktrees/r/w", Branch: "dynworkflow/r/w", Base: "abc"}},
		{Seq: 12, Type: recWorktree, Time: 15, Path: "/agent.2", Kind: "agent", Fingerprint: "h",
			Worktree: &Worktree{Status: "kept", Dir: "/s/worktrees/r/w", Branch: "dynworkflow/r/w", Base: "abc", Head: "def",
				Committed: true, Interrupted: true, Files: 2, Insertions: 3, Deletions: 1}},
	}
	for _, rec := range tests {
		got, err := appendRecord(nil, &rec)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(&rec)
		if err != nil {
			t.Fatal(err)
		}
		var a, b record
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%s: our encoding does not decode: %v\n%s", rec.Type, err, got)
		}
		if err := json.Unmarshal(want, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: decodes differently from encoding/json:\nours %s\njson %s", rec.Type, got, want)
		}
		if strings.ContainsRune(string(got), '\n') {
			t.Errorf("%s: the record spans lines", rec.Type)
		}
	}
}

// A record whose JSON encoding/json refuses is an error, never a panic: a
// result nested 20,000 levels deep panicked in appendRareRecord, and under
// serve took every run of the process down with it.
func TestRecordEncodingRefusesWithoutPanic(t *testing.T) {
	deep := json.RawMessage(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	for _, rec := range []record{
		{Seq: 1, Type: recEnd, End: &endInfo{Status: "completed", Result: deep}},
		{Seq: 1, Type: recRun, Run: &runHeader{RunID: "r", Args: json.RawMessage(`{"a":`)}},
		{Seq: 1, Type: recScript, Script: &scriptRecord{Frame: "/wf.0:c", Args: deep}},
	} {
		if got, err := appendRecord(nil, &rec); err == nil {
			t.Errorf("%s: encoded %d bytes of a record JSON cannot hold", rec.Type, len(got))
		}
	}
}
