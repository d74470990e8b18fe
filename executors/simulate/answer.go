package simulate

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/executors"
)

const (
	// provider and defaultModel identify the simulator in results.
	provider     = "simulate"
	defaultModel = "simulated"

	// quoteLimit is how much of the prompt a text answer quotes.
	quoteLimit = 60
	// historyLimit is how much of each message the history keeps.
	historyLimit = 200
)

// answer builds the successful result of a call. When invalid is set and the
// call has a schema, the answer deliberately breaks the schema. A size
// pads a text answer to that many bytes.
func (e *Executor) answer(req executors.Request, invalid bool, size int, observe executors.Observer) (executors.Result, error) {
	digest := digestOf(req.Prompt, req.Model)
	var text string
	if len(req.Schema) == 0 {
		text = padded(textAnswer(req.Prompt, digest), size)
	} else {
		g, err := e.schemas.generator(req.Schema)
		if err != nil {
			return executors.Result{}, &executors.Error{Class: executors.Terminal, Message: "simulate: " + err.Error()}
		}
		if invalid {
			text = g.invalid()
		} else {
			text = e.generate(g, digest[:])
		}
	}

	model := req.Model
	if model == "" {
		model = defaultModel
	}
	res := executors.Result{
		Text: text,
		Usage: executors.Usage{
			InputTokens:  estimateTokens(req.Prompt),
			OutputTokens: estimateTokens(text),
		},
		Provider: provider,
		Model:    model,
		History: []executors.HistoryItem{
			{Kind: "message", Role: "user", Text: truncate(req.Prompt, historyLimit)},
			{Kind: "message", Role: "assistant", Text: truncate(text, historyLimit)},
		},
	}
	if observe != nil {
		observe(executors.Progress{History: &res.History[1]})
	}
	return res, nil
}

// maxPooledBuffer is the largest generation buffer kept for reuse; a rare
// huge answer should not pin its memory.
const maxPooledBuffer = 64 << 10

// generate returns the value g generates from seed, writing it in a pooled
// buffer so that the only allocation is the resulting string.
func (e *Executor) generate(g *Generator, seed []byte) string {
	bp, _ := e.buffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	*bp = g.appendValue((*bp)[:0], seed)
	text := string(*bp)
	if cap(*bp) <= maxPooledBuffer {
		e.buffers.Put(bp)
	}
	return text
}

// digestOf identifies a request's content: answers depend on nothing else,
// which is what makes them deterministic.
func digestOf(prompt, model string) [sha256.Size]byte {
	// Hashing one buffer lets typical prompts stay on the stack, where a
	// streaming hash.Hash would escape to the heap.
	var buf [1024]byte
	b := append(buf[:0], prompt...)
	b = append(b, '|')
	b = append(b, model...)
	return sha256.Sum256(b)
}

// textAnswer is the answer to a call without a schema: a line quoting the
// start of the prompt, tagged with the start of the request's digest so that
// different models give different answers.
func textAnswer(prompt string, digest [sha256.Size]byte) string {
	quote, cut := cutRunes(prompt, quoteLimit)
	var b strings.Builder
	b.Grow(len(`simulated answer to "…" [12345678]`) + len(quote))
	b.WriteString(`simulated answer to "`)
	// The quote stays on one line.
	for {
		i := strings.IndexAny(quote, "\n\r\t")
		if i < 0 {
			b.WriteString(quote)
			break
		}
		b.WriteString(quote[:i])
		b.WriteByte(' ')
		quote = quote[i+1:]
	}
	if cut {
		b.WriteString("…")
	}
	b.WriteString(`" [`)
	var tag [8]byte
	hex.Encode(tag[:], digest[:4])
	b.Write(tag[:])
	b.WriteByte(']')
	return b.String()
}

// padded is text cut or padded with dots to size bytes (0: as it is),
// cutting only between runes.
func padded(text string, size int) string {
	if size <= 0 || size == len(text) {
		return text
	}
	if size < len(text) {
		i := size
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		text = text[:i]
	}
	return text + strings.Repeat(".", size-len(text))
}

// estimateTokens estimates a text's tokens at four bytes each, the usual rule
// of thumb, counting at least one.
func estimateTokens(s string) int64 {
	return max(int64(len(s)+3)/4, 1)
}

// truncate shortens s to at most limit runes, marking a cut with an
// ellipsis. Only a cut allocates.
func truncate(s string, limit int) string {
	if head, cut := cutRunes(s, limit); cut {
		return head + "…"
	}
	return s
}

// cutRunes returns the first limit runes of s, and whether that left any
// out.
func cutRunes(s string, limit int) (head string, cut bool) {
	if len(s) <= limit {
		return s, false
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i], true
		}
		n++
	}
	return s, false
}
