package metrics

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The Prometheus text exposition format, version 0.0.4: what every
// Prometheus server and agent scrapes. Each family is a # HELP and a
// # TYPE line, then one line per series; a histogram's series are its
// cumulative _bucket lines (the last le="+Inf"), _sum and _count.

// contentType is the format's media type, as scrapers expect it.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// counterVec is a counter family: one value per distinct set of label
// values. It is not safe for concurrent use: Metrics holds its lock.
type counterVec struct {
	name, help string
	labels     []string
	series     map[string]*counterSeries
}

type counterSeries struct {
	values []string
	v      float64
}

func newCounterVec(name, help string, labels ...string) *counterVec {
	return &counterVec{name: name, help: help, labels: labels, series: map[string]*counterSeries{}}
}

func (c *counterVec) add(v float64, values ...string) {
	k := seriesKey(values)
	s := c.series[k]
	if s == nil {
		s = &counterSeries{values: values}
		c.series[k] = s
	}
	s.v += v
}

func (c *counterVec) write(w *bytes.Buffer) {
	writeHeader(w, c.name, c.help, "counter")
	for _, k := range slices.Sorted(maps.Keys(c.series)) {
		s := c.series[k]
		writeSample(w, c.name, c.labels, s.values, "", "", s.v)
	}
}

// histogramVec is a histogram family with fixed upper bounds.
type histogramVec struct {
	name, help string
	labels     []string
	bounds     []float64
	series     map[string]*histogramSeries
}

type histogramSeries struct {
	values []string
	// counts[i] counts the observations in (bounds[i-1], bounds[i]];
	// the last one those above every bound.
	counts []uint64
	sum    float64
}

func newHistogramVec(name, help string, bounds []float64, labels ...string) *histogramVec {
	return &histogramVec{name: name, help: help, labels: labels, bounds: bounds, series: map[string]*histogramSeries{}}
}

func (h *histogramVec) observe(v float64, values ...string) {
	k := seriesKey(values)
	s := h.series[k]
	if s == nil {
		s = &histogramSeries{values: values, counts: make([]uint64, len(h.bounds)+1)}
		h.series[k] = s
	}
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v
	s.counts[i]++
	s.sum += v
}

func (h *histogramVec) write(w *bytes.Buffer) {
	writeHeader(w, h.name, h.help, "histogram")
	for _, k := range slices.Sorted(maps.Keys(h.series)) {
		s := h.series[k]
		var cumulative uint64
		for i, n := range s.counts {
			cumulative += n
			le := "+Inf"
			if i < len(h.bounds) {
				le = formatFloat(h.bounds[i])
			}
			writeSample(w, h.name+"_bucket", h.labels, s.values, "le", le, float64(cumulative))
		}
		writeSample(w, h.name+"_sum", h.labels, s.values, "", "", s.sum)
		writeSample(w, h.name+"_count", h.labels, s.values, "", "", float64(cumulative))
	}
}

// seriesKey joins label values with a byte no UTF-8 text holds, so that
// ("a b", "c") and ("a", "b c") stay apart.
func seriesKey(values []string) string { return strings.Join(values, "\xff") }

func writeHeader(w *bytes.Buffer, name, help, typ string) {
	w.WriteString("# HELP ")
	w.WriteString(name)
	w.WriteByte(' ')
	w.WriteString(escape(help, false))
	w.WriteString("\n# TYPE ")
	w.WriteString(name)
	w.WriteByte(' ')
	w.WriteString(typ)
	w.WriteByte('\n')
}

// writeSample writes one series line: name{labels="values",extra="value"} v.
func writeSample(w *bytes.Buffer, name string, labels, values []string, extra, extraValue string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 || extra != "" {
		w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.WriteByte(',')
			}
			writeLabel(w, l, values[i])
		}
		if extra != "" {
			if len(labels) > 0 {
				w.WriteByte(',')
			}
			writeLabel(w, extra, extraValue)
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

func writeLabel(w *bytes.Buffer, name, value string) {
	w.WriteString(name)
	w.WriteString(`="`)
	w.WriteString(escape(value, true))
	w.WriteByte('"')
}

// escape escapes a label value (backslash, double quote, newline) or a
// HELP text (backslash, newline): a model name comes from a script and
// must not be able to end its line or its quotes.
func escape(s string, quote bool) string {
	if !strings.ContainsAny(s, "\\\n\"") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
