package engine

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"

	"github.com/dynworkflow/dynworkflow/engine/journal"
)

// A DamagedRecord is a journal line that failed its checksum, and what the
// run makes of it. The journal skips such a line; the engine never trusts
// what it held (a damaged answer is not replayed: the call runs again), but
// says what the line seems to have been, so the user knows what was lost.
type DamagedRecord struct {
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
	// Type and Path are read from the damaged bytes: what the record seems
	// to have been, and the call it seems to belong to ("" if unknown).
	Type string `json:"type,omitempty"`
	Path string `json:"path,omitempty"`
	// Status is, for an end record, the status it seems to have held.
	Status string `json:"status,omitempty"`
	// Last marks the journal's last line.
	Last bool `json:"last,omitempty"`
	// Effect says what it means for the run.
	Effect string `json:"effect"`
}

func (d DamagedRecord) String() string {
	return fmt.Sprintf("journal line %d is damaged (%s): %s", d.Line, d.Reason, d.Effect)
}

// describeDamage turns the damaged lines of a scan into records a person
// can act on. finished tells whether a call path has a good finished
// record, in which case a damaged one for it cost nothing.
func describeDamage(damaged []journal.Damage, finished func(path string) bool) []DamagedRecord {
	out := make([]DamagedRecord, 0, len(damaged))
	for _, d := range damaged {
		typ, path := guessRecord(d.Head)
		rec := DamagedRecord{Line: d.Line, Offset: d.Offset, Reason: d.Reason, Type: typ, Path: path}
		switch typ {
		case recFinished:
			if path != "" && finished(path) {
				rec.Effect = fmt.Sprintf("it seems to be an answer of call %s, which has another good answer", path)
			} else if path != "" {
				rec.Effect = fmt.Sprintf("it seems to be the answer of call %s: that answer is not trusted, and the call runs again on resume", path)
			} else {
				rec.Effect = "it seems to be a call's answer: that answer is not trusted, and the call runs again on resume"
			}
		case recStarted, recRetry:
			rec.Effect = "it seems to be the start or retry of a call; nothing is lost"
		case recWorktree:
			rec.Effect = "it seems to say what became of a call's worktree; the worktree itself is untouched (see: dynworkflow worktrees)"
		case recFailed:
			rec.Effect = "it seems to be a call's failure; the call runs again on resume"
		case recLog, recPhase:
			rec.Effect = "it seems to be a log line or phase change, which is lost"
		case recEnd:
			rec.Status = stringField(d.Head, "status")
			rec.Effect = "it seems to be how an execution ended, which is lost: the run shows as paused until it is resumed, " +
				"and a resume replays its journaled calls at no cost"
		case recScript:
			rec.Effect = "it seems to be a child workflow's script; its calls replay only where their fingerprints match"
		case recResume:
			rec.Effect = "it seems to be the start of a resumed execution: the script and args it ran with are lost"
		case recRun:
			rec.Effect = "it seems to be the run record: the run's script, args and options are lost"
		default:
			rec.Effect = "what it held is unknown; no record is trusted from it"
		}
		out = append(out, rec)
	}
	return out
}

// recordMarkers recognise a record whose type field is itself damaged, by
// the header that follows it.
var recordMarkers = []struct{ marker, typ string }{
	{`"run":{"runId"`, recRun},
	{`"resume":{"rule"`, recResume},
	{`"end":{"status"`, recEnd},
	{`"script":{"frame"`, recScript},
	{`"answer":{"source"`, recFinished},
	{`"call":{`, recStarted},
}

// guessRecord reads the type and call path of a damaged record, as far as
// its bytes still tell.
func guessRecord(head []byte) (typ, path string) {
	typ = stringField(head, "type")
	switch typ {
	case recRun, recResume, recScript, recStarted, recFinished, recFailed, recRetry, recWorktree, recLog, recPhase, recEnd:
	default:
		typ = ""
		for _, m := range recordMarkers {
			if bytes.Contains(head, []byte(m.marker)) {
				typ = m.typ
				break
			}
		}
	}
	return typ, stringField(head, "path")
}

// stringField finds "key":"value" in damaged bytes and returns value when
// it is short and printable.
func stringField(b []byte, key string) string {
	i := bytes.Index(b, []byte(`"`+key+`":"`))
	if i < 0 {
		return ""
	}
	rest := b[i+len(key)+4:]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || end > 256 {
		return ""
	}
	v := string(rest[:end])
	if strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) || r == '\\' }) {
		return ""
	}
	return v
}
