package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynworkflow/dynworkflow/engine/journal"
)

// Fuzz targets. Each runs its seed corpus with go test; .ci/run fuzzes each
// for a few seconds, and longer runs are one command away:
//
//	go test -run '^$' -fuzz FuzzJournalFold -fuzztime 10m ./engine

// FuzzJournalFold feeds arbitrary bytes to the readers of a run's journal:
// the history a resume folds, and the detail show folds. Neither may
// panic, and what they accept must be what was sealed.
func FuzzJournalFold(f *testing.F) {
	sealed := sealedJournal(f, []string{
		`{"seq":1,"type":"run","t":1,"run":{"runId":"r","name":"n","scriptPath":"/p/s.workflow.js","scriptHash":"h","scriptText":"x","options":{"executor":"echo","concurrency":1,"maxAgents":10,"maxItems":10,"agentRetries":0,"schemaAttempts":3}}}`,
		`{"seq":2,"type":"call.started","t":2,"path":"/par.0/0/agent.0","kind":"agent","fp":"f0","call":{"prompt":"task 0"}}`,
		`{"seq":3,"type":"call.finished","t":3,"path":"/par.0/0/agent.0","kind":"agent","fp":"f0","result":"answer to task 0","usage":{"inputTokens":5,"outputTokens":3},"answer":{"source":"live","durMs":1}}`,
		`{"seq":4,"type":"resume","t":4,"epoch":1,"resume":{"rule":"crash","oldHash":"h","newHash":"h","options":{"executor":"echo"}}}`,
		`{"seq":5,"type":"call.failed","t":5,"epoch":1,"path":"/par.0/1/agent.0","fp":"f1","error":{"message":"no"}}`,
		`{"seq":6,"type":"end","t":6,"epoch":1,"end":{"status":"completed","result":["answer to task 0",null],"replayed":1,"live":0,"failed":1}}`,
	})
	f.Add(sealed)
	f.Add(sealed[:len(sealed)/2])
	f.Add([]byte("{\"seq\":1,\"type\":\"run\"}\n{\"seq\":2,\"type\":\"end\"}\n"))
	f.Add([]byte("{\"seq\":1,\"type\":\"run\",\"run\":{\"runId\":\"x\",\"options\":{\"concurrency\":-1}}}\n"))
	f.Add([]byte("\x00\n\n{}\n[1]\n\"s\"\nnull\n"))
	f.Fuzz(func(t *testing.T, journal []byte) {
		path := filepath.Join(t.TempDir(), "run.jsonl")
		if err := os.WriteFile(path, journal, 0o600); err != nil {
			t.Fatal(err)
		}
		if fold, err := foldJournal(path); err == nil {
			_ = fold.summary("run", nil)
		}
		_, _ = loadHistory(path)
	})
}

// FuzzSchema compiles arbitrary schemas and checks arbitrary answers
// against them: errors, never a panic, and an accepted answer is JSON.
func FuzzSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`, `{"n":1}`)
	f.Add(`{"type":"array","items":{"type":"string"}}`, "Here you go:\n```json\n[\"a\",\"b\"]\n```")
	f.Add(`{"type":"string","enum":["x"]}`, `"x"`)
	f.Add(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`, `1`)
	f.Add(`{"type":["object","nul"]}`, `{}`)
	f.Add(`true`, `{"a":[}`)
	f.Fuzz(func(t *testing.T, schema, answer string) {
		var cache schemaCache
		cs, err := cache.get(json.RawMessage(schema))
		if err != nil || cs == nil {
			return
		}
		if v, err := cs.validate(answer); err == nil && !json.Valid(v) {
			t.Fatalf("schema %s accepted %q as %q, which is not JSON", schema, answer, v)
		}
	})
}

// sealedJournal is a journal of the given records, sealed as the writer
// seals them.
func sealedJournal(tb testing.TB, records []string) []byte {
	path := filepath.Join(tb.TempDir(), "seed.jsonl")
	w, err := journal.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range records {
		if err := w.Append([]byte(r)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
