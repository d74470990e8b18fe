package collectortest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Span is one span as the collector received it, flattened: attribute
// values as Go values (string, bool, int64, float64, []any).
type Span struct {
	TraceID      string
	SpanID       string
	ParentSpanID string
	Name         string
	Kind         int
	Start, End   time.Time
	Attributes   map[string]any
	Events       []Event
	Links        []Link
	// StatusCode is 0 unset, 1 ok, 2 error.
	StatusCode    int
	StatusMessage string
	// Resource and Scope are the attributes of the span's resource and the
	// name of its instrumentation scope.
	Resource map[string]any
	Scope    string
}

// Event is a span event.
type Event struct {
	Name       string
	Time       time.Time
	Attributes map[string]any
}

// Link is a span link.
type Link struct {
	TraceID, SpanID string
	Attributes      map[string]any
}

// String is the attribute key as a string, "" when absent.
func (s Span) String(key string) string {
	v, ok := s.Attributes[key]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// The OTLP JSON encoding (the file exporter's format).
type (
	otlpFile struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []otlpKV `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Scope struct {
					Name string `json:"name"`
				} `json:"scope"`
				Spans []otlpSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	otlpSpan struct {
		TraceID      string   `json:"traceId"`
		SpanID       string   `json:"spanId"`
		ParentSpanID string   `json:"parentSpanId"`
		Name         string   `json:"name"`
		Kind         int      `json:"kind"`
		Start        string   `json:"startTimeUnixNano"`
		End          string   `json:"endTimeUnixNano"`
		Attributes   []otlpKV `json:"attributes"`
		Events       []struct {
			Time       string   `json:"timeUnixNano"`
			Name       string   `json:"name"`
			Attributes []otlpKV `json:"attributes"`
		} `json:"events"`
		Links []struct {
			TraceID    string   `json:"traceId"`
			SpanID     string   `json:"spanId"`
			Attributes []otlpKV `json:"attributes"`
		} `json:"links"`
		Status struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
	}
	otlpKV struct {
		Key   string    `json:"key"`
		Value otlpValue `json:"value"`
	}
	otlpValue struct {
		String *string  `json:"stringValue"`
		Bool   *bool    `json:"boolValue"`
		Int    *string  `json:"intValue"` // int64 is a string in OTLP JSON
		Double *float64 `json:"doubleValue"`
		Array  *struct {
			Values []otlpValue `json:"values"`
		} `json:"arrayValue"`
	}
)

func (v otlpValue) value() any {
	switch {
	case v.String != nil:
		return *v.String
	case v.Bool != nil:
		return *v.Bool
	case v.Int != nil:
		n, _ := strconv.ParseInt(*v.Int, 10, 64)
		return n
	case v.Double != nil:
		return *v.Double
	case v.Array != nil:
		out := make([]any, len(v.Array.Values))
		for i, e := range v.Array.Values {
			out[i] = e.value()
		}
		return out
	}
	return nil
}

func attrs(kvs []otlpKV) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.value()
	}
	return m
}

func nanos(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Unix(0, n).UTC()
}

// parseSpans reads the file exporter's lines; a last line still being
// written is left for the next read.
func parseSpans(b []byte) ([]Span, error) {
	var out []Span
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		line := b[:i]
		b = b[i+1:]
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var f otlpFile
		if err := json.Unmarshal(line, &f); err != nil {
			return nil, fmt.Errorf("collectortest: a line of the file exporter: %w", err)
		}
		for _, rs := range f.ResourceSpans {
			res := attrs(rs.Resource.Attributes)
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					sp := Span{TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID, Name: s.Name, Kind: s.Kind,
						Start: nanos(s.Start), End: nanos(s.End), Attributes: attrs(s.Attributes),
						StatusCode: s.Status.Code, StatusMessage: s.Status.Message, Resource: res, Scope: ss.Scope.Name}
					for _, e := range s.Events {
						sp.Events = append(sp.Events, Event{Name: e.Name, Time: nanos(e.Time), Attributes: attrs(e.Attributes)})
					}
					for _, l := range s.Links {
						sp.Links = append(sp.Links, Link{TraceID: l.TraceID, SpanID: l.SpanID, Attributes: attrs(l.Attributes)})
					}
					out = append(out, sp)
				}
			}
		}
	}
	return out, nil
}
