package engine

import (
	"bytes"
	"fmt"
	"slices"
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
// can act on. calls tells which call a damaged record belonged to, from the
// good records around it; answered tells whether a call path still has a
// good answer, in which case a damaged one for it cost nothing.
func describeDamage(damaged []journal.Damage, calls *callIndex, answered func(path string) bool) []DamagedRecord {
	out := make([]DamagedRecord, 0, len(damaged))
	for _, d := range damaged {
		typ, path, fp := guessRecord(d.Head)
		path = calls.resolve(path, fp)
		rec := DamagedRecord{Line: d.Line, Offset: d.Offset, Reason: d.Reason, Type: typ, Path: path}
		switch typ {
		case recFinished:
			if path != "" && answered(path) {
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
		case recScriptError:
			rec.Effect = "it seems to be a script error that made a branch null, which is lost from the list show prints (the end of its execution still counts it)"
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

// guessRecord reads the type, call path and fingerprint of a damaged
// record, as far as its bytes still tell.
func guessRecord(head []byte) (typ, path, fp string) {
	typ = stringField(head, "type")
	switch typ {
	case recRun, recResume, recScript, recStarted, recFinished, recFailed, recRetry, recWorktree, recLog, recPhase, recScriptError, recEnd:
	default:
		typ = ""
		for _, m := range recordMarkers {
			if bytes.Contains(head, []byte(m.marker)) {
				typ = m.typ
				break
			}
		}
	}
	return typ, stringField(head, "path"), stringField(head, "fp")
}

// callIndex is what the good records of a journal say of its calls, to
// tell which call a damaged record belonged to: a damaged byte may be in
// its path, and a path read from it may name another call. Journals are
// rarely damaged, so the records are only noted as they are read, and
// indexed on the first damaged record to resolve.
type callIndex struct {
	notes []callNote
	built bool
	paths map[string]bool     // every call path of a good record
	byFP  map[string][]string // the paths of each fingerprint
	pairs map[string]bool     // path + "\x00" + fp
	// open holds the paths whose latest good record is a start: a call
	// that began and has no good end, such as one whose answer's line is
	// damaged.
	open map[string]string // path -> fp
}

// callNote is a good record of a call, in journal order.
type callNote struct{ typ, path, fp string }

func newCallIndex() *callIndex { return &callIndex{} }

// note records a good record; only those of calls count.
func (ix *callIndex) note(typ, path, fp string) {
	if path == "" || typ != recStarted && typ != recFinished && typ != recFailed {
		return
	}
	if ix.built {
		ix.index(callNote{typ, path, fp})
		return
	}
	ix.notes = append(ix.notes, callNote{typ, path, fp})
}

// build indexes the records noted.
func (ix *callIndex) build() {
	if ix.built {
		return
	}
	ix.built = true
	ix.paths, ix.byFP, ix.pairs, ix.open = map[string]bool{}, map[string][]string{}, map[string]bool{}, map[string]string{}
	for _, n := range ix.notes {
		ix.index(n)
	}
	ix.notes = nil
}

func (ix *callIndex) index(n callNote) {
	ix.paths[n.path] = true
	if k := n.path + "\x00" + n.fp; n.fp != "" && !ix.pairs[k] {
		ix.pairs[k] = true
		ix.byFP[n.fp] = append(ix.byFP[n.fp], n.path)
	}
	switch n.typ {
	case recStarted:
		ix.open[n.path] = n.fp
	case recFinished, recFailed:
		delete(ix.open, n.path)
	}
}

// resolve names the call of a damaged record that read as path and fp:
// the one call of that fingerprint left without an end, if there is one
// (its end is what was damaged); else the path when the journal knows it
// with that fingerprint, or the one path of the fingerprint, or the path
// if the journal knows it at all; else "".
func (ix *callIndex) resolve(path, fp string) string {
	ix.build()
	var open []string
	for _, p := range ix.byFP[fp] {
		if f, ok := ix.open[p]; ok && f == fp {
			open = append(open, p)
		}
	}
	switch {
	case slices.Contains(open, path):
		return path
	case len(open) == 1:
		return open[0]
	case ix.pairs[path+"\x00"+fp]:
		return path
	case len(ix.byFP[fp]) == 1:
		return ix.byFP[fp][0]
	case ix.paths[path]:
		return path
	}
	return ""
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
