package web

import (
	"encoding/json"
	"sync"

	"github.com/dynworkflow/dynworkflow/engine"
)

// eventCacheSize is how many recent events an eventCache holds: more than
// the streams are ever apart in practice, few enough that what it holds is
// bounded by a few of the largest events.
const eventCacheSize = 64

// eventCache encodes events once for every stream. Without it each stream
// held its own encoding of an event as long as its client did not read it:
// a hundred stalled streams and one 4 MiB answer made 800 MiB.
type eventCache struct {
	mu      sync.Mutex
	entries [eventCacheSize]struct {
		seq  int64
		data []byte
	}
}

func newEventCache() *eventCache { return &eventCache{} }

// encode returns ev as JSON; the slice is shared and must not be changed.
func (c *eventCache) encode(ev engine.Event) []byte {
	slot := &c.entries[uint64(ev.Sequence)%eventCacheSize]
	c.mu.Lock()
	if slot.seq == ev.Sequence && slot.data != nil {
		data := slot.data
		c.mu.Unlock()
		return data
	}
	c.mu.Unlock()
	data, err := json.Marshal(ev)
	if err != nil {
		data, _ = json.Marshal(engine.Event{Sequence: ev.Sequence, Timestamp: ev.Timestamp, Type: ev.Type, RunID: ev.RunID,
			Payload: map[string]string{"error": "payload not encodable: " + err.Error()}})
	}
	c.mu.Lock()
	slot.seq, slot.data = ev.Sequence, data
	c.mu.Unlock()
	return data
}
