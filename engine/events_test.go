package engine

import (
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Events carry prompts and results whole when they are small, and a
// bounded start of them, flagged, when they are not.
func TestCallPayloadBoundsPromptAndResult(t *testing.T) {
	short := CallPayload{Path: "/agent.0"}.withPrompt("Review it").withResult(json.RawMessage(`{"ok":true}`))
	if short.Prompt != "Review it" || string(short.Result) != `{"ok":true}` || short.Truncated || short.ResultPreview != "" {
		t.Errorf("short payload %+v", short)
	}
	long := strings.Repeat("é", eventTextMax) // two bytes each
	p := CallPayload{}.withPrompt(long)
	if !p.Truncated || len(p.Prompt) > eventTextMax || !strings.HasPrefix(long, p.Prompt) || !json.Valid([]byte(`"`+p.Prompt+`"`)) {
		t.Errorf("long prompt cut to %d bytes, truncated %v", len(p.Prompt), p.Truncated)
	}
	text, _ := json.Marshal(long)
	r := CallPayload{}.withResult(text)
	if !r.Truncated || r.Result != nil || !strings.HasPrefix(long, r.ResultPreview) || len(r.ResultPreview) == 0 {
		t.Errorf("long result: %d bytes of result, preview %d bytes, truncated %v", len(r.Result), len(r.ResultPreview), r.Truncated)
	}
	obj, _ := json.Marshal(map[string]string{"text": long})
	if o := (CallPayload{}).withResult(obj); !o.Truncated || !strings.HasPrefix(string(obj), o.ResultPreview) {
		t.Errorf("long object result: preview %.40q", o.ResultPreview)
	}
}

// A queue gets what a subscription with the same bound gets, in the same
// order, with the same reset after a loss; it is still readable after
// Close, which closes Ready.
func TestQueueDeliversAsASubscription(t *testing.T) {
	type step struct {
		publish int // events published before the readers take
		take    bool
	}
	for _, tc := range []struct {
		name  string
		limit int
		steps []step
	}{
		{"within the bound", 8, []step{{5, true}, {3, true}}},
		{"a loss then a reset", 4, []step{{10, true}, {3, true}}},
		{"full again right after the reset", 3, []step{{5, true}, {7, true}, {2, false}}},
		{"filtered", 4, []step{{9, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus := NewBus(4)
			var filter func(Event) bool
			if tc.name == "filtered" {
				filter = func(e Event) bool { return e.Sequence%2 == 1 }
			}
			sub := bus.Subscribe(tc.limit, filter)
			q := bus.SubscribeQueue(tc.limit, filter)
			var fromSub, fromQueue []string
			got := func(e Event) string { return e.Type + "@" + strconv.FormatInt(e.Sequence, 10) }
			read := func() {
			drain:
				for {
					select {
					case e, ok := <-sub.C:
						if !ok {
							break drain
						}
						fromSub = append(fromSub, got(e))
					default:
						break drain
					}
				}
				for _, e := range q.Take() {
					fromQueue = append(fromQueue, got(e))
				}
			}
			for _, s := range tc.steps {
				for range s.publish {
					bus.Publish("r", EventLog, nil)
				}
				if s.take {
					read()
				}
			}
			sub.Close()
			q.Close()
			read()
			// At most the one pending signal, then closed.
			if _, ok := <-q.Ready(); ok {
				if _, ok := <-q.Ready(); ok {
					t.Error("Ready still open after Close")
				}
			}
			if !slices.Equal(fromQueue, fromSub) {
				t.Errorf("queue got\n%v\nsubscription got\n%v", fromQueue, fromSub)
			}
			if len(fromSub) == 0 {
				t.Error("nothing delivered")
			}
		})
	}
}

// A client that reconnects gets every event it missed while they are in
// the ring, and is told to rebuild from the store once some have left it.
func TestBusSinceCatchesUpOrSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name            string
		ring, published int
	}{
		{"empty", 8, 0},
		{"ring not full", 8, 5},
		{"ring just full", 8, 8},
		{"ring wrapped", 8, 13},
		{"ring wrapped twice", 8, 21},
		{"ring of one", 1, 3},
		{"large ring growing", 1000, 700},
		{"large ring wrapped", 1000, 2500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBus(tc.ring)
			for i := range tc.published {
				b.Publish("run", EventLog, i)
			}
			oldest := int64(max(tc.published-tc.ring, 0)) + 1
			for seen := int64(0); seen <= int64(tc.published); seen++ {
				evs, ok := b.Since(seen)
				if seen+1 < oldest {
					if ok {
						t.Fatalf("Since(%d) = ok with %d events, but events from %d on left the ring", seen, len(evs), seen+1)
					}
					continue
				}
				if !ok {
					t.Fatalf("Since(%d) is not ok, but the ring holds every event after it", seen)
				}
				if len(evs) != tc.published-int(seen) {
					t.Fatalf("Since(%d) returned %d events, want %d", seen, len(evs), tc.published-int(seen))
				}
				for i, ev := range evs {
					if want := seen + 1 + int64(i); ev.Sequence != want || ev.Payload != int(want-1) {
						t.Fatalf("Since(%d)[%d] = event %d with payload %v, want event %d", seen, i, ev.Sequence, ev.Payload, want)
					}
				}
			}
		})
	}
}

// A server's bus keeps 65,536 events; one that has seen none holds none.
func TestBusRingTakesMemoryAsEventsCome(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := NewBus(1 << 16)
	for i := range 100 {
		b.Publish("run", EventLog, i)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Errorf("a bus of 65,536 events that saw 100 allocated %d KB", grew>>10)
	}
}
