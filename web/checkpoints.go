package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/lang"
)

// Checkpoint event types, beside the engine's checkpoint.answered.
const (
	EventCheckpointPending   = "checkpoint.pending"
	EventCheckpointWithdrawn = "checkpoint.withdrawn"
)

// Checkpoint is a question a run is waiting on.
type Checkpoint struct {
	// ID is derived from the run and the call path, so it is the same
	// when a resumed run asks the question again, after a restart too.
	ID        string              `json:"id"`
	RunID     string              `json:"runId"`
	Path      string              `json:"path"`
	Prompt    string              `json:"prompt"`
	Kind      lang.CheckpointKind `json:"kind"`
	Choices   []string            `json:"choices,omitempty"`
	Default   json.RawMessage     `json:"default,omitempty"`
	CreatedAt time.Time           `json:"createdAt"`
}

// CheckpointID is the id of the checkpoint at call path of run runID.
func CheckpointID(runID, path string) string {
	sum := sha256.Sum256([]byte(runID + "\x00" + path))
	return "cp-" + hex.EncodeToString(sum[:10])
}

// validCheckpointID accepts what CheckpointID makes and nothing else, so
// an id from a URL never reaches further than a map lookup.
func validCheckpointID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, "cp-")
	if !ok || len(hexPart) != 20 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil && strings.ToLower(hexPart) == hexPart
}

// Checkpoints is the engine.Responder of server mode: a checkpoint is
// published (GET /api/checkpoints, the overview, an SSE event) and waits
// until someone answers it or the run is paused or stopped. Answers are
// checked here, so a bad one is a 400 and nothing is journaled; the engine
// journals a good one, and a resume replays it.
type Checkpoints struct {
	mu      sync.Mutex
	bus     *engine.Bus
	pending map[string]*pendingCheckpoint
}

type pendingCheckpoint struct {
	Checkpoint
	req    lang.CheckpointRequest
	answer chan json.RawMessage // buffered: Respond never blocks
}

// NewCheckpoints returns an empty broker. Give it to engine.Config as the
// Responder, and to the server's Config.
func NewCheckpoints() *Checkpoints {
	return &Checkpoints{pending: map[string]*pendingCheckpoint{}}
}

// Attach sets the bus the broker publishes on, for a runtime that serves
// no API (a run asking in its terminal): a server attaches its own.
func (c *Checkpoints) Attach(bus *engine.Bus) { c.attach(bus) }

// attach sets the bus the broker publishes on; the runtime that owns the
// bus is created after the broker.
func (c *Checkpoints) attach(bus *engine.Bus) {
	c.mu.Lock()
	c.bus = bus
	c.mu.Unlock()
}

// Ask publishes the checkpoint and waits for its answer.
func (c *Checkpoints) Ask(ctx context.Context, runID, path string, req lang.CheckpointRequest) (json.RawMessage, error) {
	p := &pendingCheckpoint{
		Checkpoint: Checkpoint{
			ID: CheckpointID(runID, path), RunID: runID, Path: path, Prompt: req.Prompt,
			Kind: req.Kind, Choices: req.Choices, Default: req.Default, CreatedAt: time.Now().UTC(),
		},
		req:    req,
		answer: make(chan json.RawMessage, 1),
	}
	c.mu.Lock()
	c.pending[p.ID] = p
	bus := c.bus
	c.mu.Unlock()
	if bus != nil {
		bus.Publish(runID, EventCheckpointPending, p.Checkpoint)
	}
	select {
	case answer := <-p.answer:
		return answer, nil
	case <-ctx.Done():
		c.mu.Lock()
		if c.pending[p.ID] == p {
			delete(c.pending, p.ID)
		}
		c.mu.Unlock()
		if bus != nil {
			bus.Publish(runID, EventCheckpointWithdrawn, p.Checkpoint)
		}
		return nil, context.Cause(ctx)
	}
}

// Pending lists the open checkpoints, oldest first.
func (c *Checkpoints) Pending() []Checkpoint {
	c.mu.Lock()
	out := make([]Checkpoint, 0, len(c.pending))
	for _, p := range c.pending {
		out = append(out, p.Checkpoint)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b Checkpoint) int {
		if d := a.CreatedAt.Compare(b.CreatedAt); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// pendingRequests lists the open checkpoints with their requests, oldest
// first.
func (c *Checkpoints) pendingRequests() []pendingCheckpoint {
	c.mu.Lock()
	out := make([]pendingCheckpoint, 0, len(c.pending))
	for _, p := range c.pending {
		out = append(out, pendingCheckpoint{Checkpoint: p.Checkpoint, req: p.req})
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b pendingCheckpoint) int {
		if d := a.CreatedAt.Compare(b.CreatedAt); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Respond answers checkpoint id. The answer is checked against the
// checkpoint's kind and choices first; a bad one leaves it pending.
func (c *Checkpoints) Respond(id string, value json.RawMessage) (Checkpoint, error) {
	if !validCheckpointID(id) {
		return Checkpoint{}, newAPIError(http.StatusBadRequest, codeBadID, "%q is not a checkpoint id", id)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	if !ok {
		return Checkpoint{}, newAPIError(http.StatusNotFound, codeNotFound, "no pending checkpoint %s", id)
	}
	if len(value) == 0 {
		return Checkpoint{}, newAPIError(http.StatusBadRequest, codeBadAnswer, "the body needs a value: {\"value\": ...}")
	}
	if err := p.req.Validate(value); err != nil {
		return Checkpoint{}, &apiError{status: http.StatusBadRequest, code: codeBadAnswer,
			message: fmt.Sprintf("checkpoint %s: %v", id, err), err: err}
	}
	delete(c.pending, id)
	p.answer <- value
	return p.Checkpoint, nil
}
