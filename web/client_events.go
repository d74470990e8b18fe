package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// StreamEvent is one event of GET /api/events, as a client decodes it.
type StreamEvent struct {
	Sequence  int64           `json:"sequence"`
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	RunID     string          `json:"runId,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	// ID is the event's SSE id (EPOCH-SEQUENCE): where a reconnection
	// resumes.
	ID string `json:"-"`
}

// Reset reports the reset event: events were missed, rebuild from the
// overview and the run.
func (e StreamEvent) Reset() bool { return e.Type == sseReset }

// ErrStopStream, returned by a Stream callback, ends the stream cleanly.
var ErrStopStream = errors.New("stop streaming")

// streamRetries bounds reconnections in a row that fail: the runtime is
// then gone, not briefly unreachable.
const streamRetries = 5

// Stream follows GET /api/events from sequence since (a negative since
// means from now), optionally for one run, calling fn for each event.
// When the connection drops it reconnects with Last-Event-ID, so fn sees
// every event once, in order, or a reset. It returns when ctx is done, when
// fn returns an error (nil for ErrStopStream), or when the server cannot
// be reached again.
func (c *Client) Stream(ctx context.Context, since int64, runID string, fn func(StreamEvent) error) error {
	last, failures := "", 0
	if since >= 0 {
		last = strconv.FormatInt(since, 10)
	}
	for {
		progressed, err := c.streamOnce(ctx, last, runID, func(ev StreamEvent) error {
			if ev.ID != "" {
				last = ev.ID
			}
			return fn(ev)
		})
		switch {
		case errors.Is(err, ErrStopStream):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, new(*APIError)), errors.As(err, new(*callbackError)):
			return unwrapCallback(err)
		}
		if progressed {
			failures = 0
		}
		failures++
		if failures > streamRetries {
			return fmt.Errorf("lost the event stream: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(failures) * 100 * time.Millisecond):
		}
	}
}

// callbackError marks an error of the callback, which ends the stream.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
func (e *callbackError) Unwrap() error { return e.err }

func unwrapCallback(err error) error {
	var ce *callbackError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

func (c *Client) streamOnce(ctx context.Context, since string, runID string, fn func(StreamEvent) error) (progressed bool, err error) {
	q := url.Values{}
	if runID != "" {
		q.Set("runId", runID)
	}
	req, err := c.newRequest(ctx, http.MethodGet, "/api/events?"+q.Encode(), nil)
	if err != nil {
		return false, err
	}
	if since != "" {
		req.Header.Set("Last-Event-ID", since)
	}
	req.Header.Set("Accept", "text/event-stream, "+MediaType)
	res, err := c.http.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return false, readAPIError(res)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var data strings.Builder
	var id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() == 0 {
				continue
			}
			var ev StreamEvent
			if err := json.Unmarshal([]byte(data.String()), &ev); err != nil {
				return progressed, fmt.Errorf("decode an event: %w", err)
			}
			ev.ID = id
			data.Reset()
			progressed = true
			if err := fn(ev); err != nil {
				if errors.Is(err, ErrStopStream) {
					return true, err
				}
				return true, &callbackError{err}
			}
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimPrefix(strings.TrimPrefix(line, "id:"), " ")
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return progressed, err
	}
	return progressed, errors.New("the server closed the event stream")
}
