package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/executors"
)

// appendRecord encodes rec as one line of JSON, as encoding/json would
// (same field names, omitted empty fields), without reflection: two records
// per agent call made json.Marshal a tenth of the engine's cost per call.
// Decoding stays with encoding/json; TestRecordEncoding holds the two
// together. The few records written once per execution (run, resume,
// script, end) go through encoding/json whole: handing their headers to it
// from here would make every call's record escape to the heap. So do the
// records of isolated calls, which cost a git checkout each anyway.
func appendRecord(b []byte, rec *record) ([]byte, error) {
	if rec.Run != nil || rec.Resume != nil || rec.Script != nil || rec.End != nil || rec.Worktree != nil {
		return appendRareRecord(b, *rec)
	}
	w := objWriter{b: b}
	w.open()
	w.int("seq", rec.Seq)
	w.str("type", rec.Type)
	w.int("t", rec.Time)
	if rec.Epoch != 0 {
		w.int("epoch", int64(rec.Epoch))
	}
	w.strOmit("path", rec.Path)
	w.strOmit("kind", rec.Kind)
	w.strOmit("fp", rec.Fingerprint)
	if c := rec.Call; c != nil {
		w.key("call")
		w.open()
		w.strOmit("label", c.Label)
		w.strOmit("phase", c.Phase)
		w.str("prompt", c.Prompt)
		w.strOmit("executor", c.Executor)
		w.strOmit("model", c.Model)
		w.strOmit("effort", c.Effort)
		w.strOmit("permissions", string(c.Permissions))
		w.rawOmit("schema", c.Schema)
		w.strOmit("route", c.Route)
		w.close()
	}
	w.rawOmit("result", rec.Result)
	if rec.Usage != nil {
		w.key("usage")
		w.usage(*rec.Usage)
	}
	if a := rec.Answer; a != nil {
		w.key("answer")
		w.open()
		w.str("source", a.Source)
		w.strOmit("provider", a.Provider)
		w.strOmit("model", a.Model)
		if a.Attempts != 0 {
			w.int("attempts", int64(a.Attempts))
		}
		w.int("durMs", a.DurMs)
		if len(a.History) > 0 {
			w.key("history")
			w.b = append(w.b, '[')
			for i, h := range a.History {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.history(h)
			}
			w.b = append(w.b, ']')
		}
		w.close()
	}
	if e := rec.Error; e != nil {
		w.key("error")
		w.open()
		w.strOmit("class", e.Class)
		w.strOmit("code", e.Code)
		w.str("message", e.Message)
		w.close()
	}
	w.strOmit("level", rec.Level)
	w.strOmit("message", rec.Message)
	w.strOmit("pos", rec.Position)
	w.close()
	return w.b, nil
}

// appendRareRecord encodes a once-per-execution record; it takes a copy so
// that what escapes is the copy, not the caller's record. encoding/json
// checks the JSON the record carries (args, a result): what it refuses is
// an error of the record, never a panic, which under serve took every run
// of the process down with it.
func appendRareRecord(b []byte, rec record) ([]byte, error) {
	data, err := json.Marshal(&rec)
	if err != nil {
		return b, fmt.Errorf("encode the journal's %s record: %w", rec.Type, err)
	}
	return append(b, data...), nil
}

// objWriter appends JSON objects; first tracks whether a comma is due.
type objWriter struct {
	b     []byte
	first bool
}

func (w *objWriter) open() {
	w.b = append(w.b, '{')
	w.first = true
}

func (w *objWriter) close() {
	w.b = append(w.b, '}')
	w.first = false
}

func (w *objWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *objWriter) str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

func (w *objWriter) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *objWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

// rawOmit appends JSON the engine holds already encoded and compact.
func (w *objWriter) rawOmit(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.key(k)
		w.b = append(w.b, v...)
	}
}

func (w *objWriter) usage(u executors.Usage) {
	w.open()
	w.int("inputTokens", u.InputTokens)
	if u.CachedInputTokens != 0 {
		w.int("cachedInputTokens", u.CachedInputTokens)
	}
	w.int("outputTokens", u.OutputTokens)
	if u.CostUSD != 0 {
		w.key("costUsd")
		w.b = strconv.AppendFloat(w.b, u.CostUSD, 'g', -1, 64)
	}
	w.close()
}

func (w *objWriter) history(h executors.HistoryItem) {
	w.open()
	w.str("kind", h.Kind)
	w.strOmit("role", h.Role)
	w.strOmit("name", h.Name)
	w.strOmit("text", h.Text)
	if h.IsError {
		w.key("isError")
		w.b = append(w.b, "true"...)
	}
	w.close()
}

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// with encoding/json, so every record reads back.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
