package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/web"
)

// sseEvent is one frame as it came over the wire.
type sseEvent struct {
	id      int64
	epoch   string
	name    string
	data    string
	comment string
}

// sseConn is a raw event stream.
type sseConn struct {
	cancel context.CancelFunc
	res    *http.Response
	frames chan sseEvent
}

// openStream connects to /api/events with query and Last-Event-ID (when
// lastID >= 0).
func (f *fixture) openStream(query string, lastID int64) *sseConn {
	f.t.Helper()
	if lastID < 0 {
		return f.openStreamAt(query, "")
	}
	return f.openStreamAt(query, strconv.FormatInt(lastID, 10))
}

// openStreamAt connects with Last-Event-ID lastID, unless it is "".
func (f *fixture) openStreamAt(query, lastID string) *sseConn {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/events?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		f.t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	c := &sseConn{cancel: cancel, res: res, frames: make(chan sseEvent, 1<<16)}
	go func() {
		defer close(c.frames)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					c.frames <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ev.comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "id: "):
				epoch, seq, _ := strings.Cut(line[4:], "-")
				ev.epoch = epoch
				ev.id, _ = strconv.ParseInt(seq, 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return c
}

func (c *sseConn) close() {
	c.cancel()
	c.res.Body.Close()
}

// next returns the next event frame (skipping retry and comments).
func (c *sseConn) next(t *testing.T) sseEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-c.frames:
			if !ok {
				t.Fatal("the stream ended")
			}
			if ev.name != "" {
				return ev
			}
		case <-timeout:
			t.Fatal("no event within 30 s")
		}
	}
}

// TestStreamReconnectExactlyOnce drops the stream again and again while
// events are published, reconnecting with Last-Event-ID, and checks that
// the client saw every event exactly once, in order.
func TestStreamReconnectExactlyOnce(t *testing.T) {
	f := newFixture(t, fixtureConfig{ring: 100_000})
	bus := f.rt.Events()
	const total = 3000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range total {
			bus.Publish("run-a", "test", map[string]int{"i": i})
			if i%100 == 0 {
				time.Sleep(time.Millisecond) // let reconnections interleave
			}
		}
	}()
	var seen []int64
	last := int64(0)
	for reconnects := 0; len(seen) < total; reconnects++ {
		c := f.openStream("", last)
		// Read a few events, then drop the connection mid-stream.
		for n := 0; n < 97 && len(seen) < total; n++ {
			ev := c.next(t)
			if ev.name != "workflow" {
				t.Fatalf("unexpected %s event: %s", ev.name, ev.data)
			}
			var env web.StreamEvent
			if err := json.Unmarshal([]byte(ev.data), &env); err != nil || env.Sequence != ev.id || env.RunID != "run-a" || env.Type != "test" {
				t.Fatalf("envelope %s does not match id %d (%v)", ev.data, ev.id, err)
			}
			seen = append(seen, ev.id)
			last = ev.id
		}
		c.close()
	}
	wg.Wait()
	for i, seq := range seen {
		if seq != int64(i+1) {
			t.Fatalf("event %d has sequence %d: lost or duplicated events around it", i, seq)
		}
	}
}

// TestStreamCatchesUpFromTheRing: a client slower than its buffer still
// gets every event, from the ring, exactly once.
func TestStreamCatchesUpFromTheRing(t *testing.T) {
	f := newFixture(t, fixtureConfig{ring: 100_000, buffer: 2})
	c := f.openStream("since=0", -1)
	defer c.close()
	const total = 5000
	for i := range total {
		f.rt.Events().Publish("run-a", "test", i)
	}
	for i := 1; i <= total; i++ {
		ev := c.next(t)
		if ev.name != "workflow" || ev.id != int64(i) {
			t.Fatalf("event %d: got %s id %d", i, ev.name, ev.id)
		}
	}
}

// TestStreamReset: a client whose last event left the ring, or whose
// Last-Event-ID comes from an earlier process, gets reset and then the
// live events.
func TestStreamReset(t *testing.T) {
	f := newFixture(t, fixtureConfig{ring: 16})
	bus := f.rt.Events()
	for i := range 100 {
		bus.Publish("run-a", "test", i)
	}
	for _, last := range []int64{1, 50, 10_000} {
		t.Run(fmt.Sprint(last), func(t *testing.T) {
			c := f.openStream("", last)
			defer c.close()
			ev := c.next(t)
			if ev.name != "reset" {
				t.Fatalf("first event is %s %s, want reset", ev.name, ev.data)
			}
			now := bus.Sequence()
			if ev.id != now {
				t.Errorf("reset id %d, want the current sequence %d", ev.id, now)
			}
			bus.Publish("run-a", "after", nil)
			if ev := c.next(t); ev.name != "workflow" || ev.id != now+1 {
				t.Errorf("after the reset: %s id %d, want workflow %d", ev.name, ev.id, now+1)
			}
		})
	}
	// Within the ring there is no reset, with a bare sequence or this
	// process's event id.
	for _, last := range []string{fmt.Sprint(bus.Sequence() - 3), epoch(t, f) + "-" + fmt.Sprint(bus.Sequence()-3)} {
		c := f.openStreamAt("", last)
		for range 3 {
			if ev := c.next(t); ev.name != "workflow" {
				t.Fatalf("Last-Event-ID %s: got %s within the ring", last, ev.name)
			}
		}
		c.close()
	}
	// An id from another process is reset even when its sequence is
	// lower than ours, which a bare number cannot tell from a gap.
	c := f.openStreamAt("", "0123456789ab-40")
	defer c.close()
	if ev := c.next(t); ev.name != "reset" || ev.epoch != epoch(t, f) {
		t.Fatalf("an id from another process: got %s (epoch %q), want a reset from %q", ev.name, ev.epoch, epoch(t, f))
	}
}

// epoch is the server's, from the overview.
func epoch(t *testing.T, f *fixture) string {
	t.Helper()
	var ov web.Overview
	f.getJSON("/api/overview", &ov)
	if ov.Runtime.Epoch == "" {
		t.Fatal("the overview names no epoch")
	}
	return ov.Runtime.Epoch
}

func TestStreamFilterAndKeepalive(t *testing.T) {
	f := newFixture(t, fixtureConfig{keepalive: 20 * time.Millisecond})
	c := f.openStream("runId=run-b", -1)
	defer c.close()
	bus := f.rt.Events()
	bus.Publish("run-a", "test", 1)
	bus.Publish("run-b", "test", 2)
	ev := c.next(t)
	if !strings.Contains(ev.data, `"runId":"run-b"`) {
		t.Errorf("the filter let through %s", ev.data)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case fr := <-c.frames:
			if fr.comment == "keepalive" {
				return
			}
		case <-timeout:
			t.Fatal("no keepalive comment")
		}
	}
}

func TestStreamBadStart(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	for _, q := range []string{"since=abc", "since=-1", "since=XYZ-3", "since=ab-", "since=-ab-3", "runId=..%2Fx"} {
		if res := f.do(request{method: "GET", path: "/api/events?" + q}); res.status != 400 {
			t.Errorf("%s: %d %s", q, res.status, res.body)
		}
	}
}

// TestClientStream follows a real run with the Go client and sees it end.
func TestClientStream(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	resp := f.startScript("export const meta = { name: 'streamed', description: 'd' }\n" +
		"return await parallel([1,2,3].map(i => () => agent('item ' + i)))")
	var types []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := f.client.Stream(ctx, resp.Sequence, resp.RunID, func(ev web.StreamEvent) error {
		types = append(types, ev.Type)
		if ev.Type == "run.status" {
			return web.ErrStopStream
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if types[0] != "run.started" || strings.Count(strings.Join(types, " "), "call.finished") != 3 {
		t.Errorf("events: %v", types)
	}
}
