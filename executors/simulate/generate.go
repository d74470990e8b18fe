package simulate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
)

// Generator makes JSON values that conform to one JSON Schema. It is safe for
// concurrent use.
//
// It understands type (with type lists, where it picks the first non-null
// type), enum, const, properties, required, additionalProperties,
// min/maxProperties, items, prefixItems, min/maxItems, uniqueItems,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
// min/maxLength, pattern (best effort), format (date-time, date, time,
// email, hostname, ipv4, ipv6, uri, uuid and a few more), allOf (merged),
// anyOf and oneOf (the first branch), local $refs, and boolean schemas. The
// schema true, or one without constraints, gives null. The schema false
// cannot be satisfied: a required value it governs is written as null,
// which the engine's validation rejects, and an optional one is left out.
type Generator struct {
	root *node
}

// NewGenerator compiles a schema. It fails on JSON that is not a schema, on
// unknown types, and on $refs that do not point into the schema itself.
func NewGenerator(schema json.RawMessage) (*Generator, error) {
	root, err := compile(schema)
	if err != nil {
		return nil, err
	}
	return &Generator{root: root}, nil
}

// Generate returns a value conforming to the schema. The seed chooses among
// the values the schema allows: the same seed always gives the same value.
func (g *Generator) Generate(seed []byte) json.RawMessage {
	return g.appendValue(nil, seed)
}

// Generate returns a value conforming to schema, chosen by seed; see
// [Generator].
func Generate(schema json.RawMessage, seed []byte) (json.RawMessage, error) {
	g, err := NewGenerator(schema)
	if err != nil {
		return nil, err
	}
	return g.Generate(seed), nil
}

// appendValue appends the value chosen by seed to dst.
func (g *Generator) appendValue(dst, seed []byte) []byte {
	var w writer
	s := sha256.Sum256(seed)
	w.rng.Seed(binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:16]))
	return w.value(dst, g.root, "value", 0)
}

const (
	// shallowDepth is the nesting below which a value holds only what its
	// schema requires: no optional properties and as few items as allowed.
	// It is what ends the values of recursive schemas.
	shallowDepth = 6
	// maxDepth is the nesting at which generation gives up with null; only
	// a schema that requires infinitely deep values gets there.
	maxDepth = 32
	// defaultMaxItems bounds arrays whose schema does not.
	defaultMaxItems = 3
	// numberWindow is how far from a lone bound, or from the lower of two
	// distant bounds, numbers are chosen.
	numberWindow = 100
)

// writer writes one generated value. Every choice it makes draws from rng,
// in the order of the schema, so the value depends only on the seed.
//
// Its methods append to a buffer and return it, like strconv's Append
// functions, so that one pooled buffer can serve call after call.
type writer struct {
	rng rand.PCG
}

// intn returns a number in [0, n).
func (w *writer) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(w.rng.Uint64() % uint64(n))
}

// value appends a value of the schema n. name is what the value is of, such
// as its property's name, for strings to derive from.
func (w *writer) value(dst []byte, n *node, name string, depth int) []byte {
	switch {
	case n == nil || n.never || depth > maxDepth:
		return append(dst, "null"...)
	case len(n.choices) > 0:
		return append(dst, n.choices[w.intn(len(n.choices))]...)
	}
	switch n.kind {
	case kindBoolean:
		return strconv.AppendBool(dst, w.intn(2) == 1)
	case kindInteger:
		return w.integer(dst, n)
	case kindNumber:
		return w.number(dst, n)
	case kindString:
		return w.string(dst, n, name)
	case kindObject:
		return w.object(dst, n, depth)
	case kindArray:
		return w.array(dst, n, name, depth)
	}
	return append(dst, "null"...)
}

func (w *writer) object(dst []byte, n *node, depth int) []byte {
	dst = append(dst, '{')
	count := 0
	optional := math.MaxInt // how many optional properties may be written
	if n.maxProps >= 0 {
		optional = n.maxProps - n.required
	}
	for _, p := range n.props {
		if !p.required {
			if depth >= shallowDepth || p.schema.never || optional <= 0 {
				continue
			}
			optional--
		}
		if count > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, p.key...)
		dst = w.value(dst, p.schema, p.name, depth+1)
		count++
	}
	// minProperties beyond the listed properties is met with extra ones,
	// where the schema allows them.
	for i := 1; count < n.minProps && !n.closed; i++ {
		name := "extra" + strconv.Itoa(i)
		if n.hasProperty(name) {
			continue
		}
		if count > 0 {
			dst = append(dst, ',')
		}
		dst = appendQuoted(dst, name)
		dst = append(dst, ':')
		dst = w.value(dst, n.extraSchema(), name, depth+1)
		count++
	}
	return append(dst, '}')
}

func (w *writer) array(dst []byte, n *node, name string, depth int) []byte {
	count := 1 + w.intn(defaultMaxItems)
	if depth+1 >= shallowDepth {
		count = 0 // the items would be shallow: keep to minItems
	}
	count = max(count, n.minItems)
	if n.maxItems >= 0 {
		count = min(count, n.maxItems)
	}
	if n.itemsClosed {
		count = min(count, len(n.prefix))
	}

	// starts records where each item begins, to check uniqueItems.
	var startSpace [8]int
	starts := startSpace[:0]
	dst = append(dst, '[')
	for i := 0; i < count; i++ {
		schema := n.items
		if i < len(n.prefix) {
			schema = n.prefix[i]
		}
		before := len(dst)
		if i > 0 {
			dst = append(dst, ',')
		}
		start := len(dst)
		dst = w.value(dst, schema, name, depth+1)
		// Duplicates are drawn again a few times; if they persist, the
		// schema offers too few values, and the array stops short.
		for try := 0; n.unique && repeats(dst, starts, start) && try < 8; try++ {
			dst = w.value(dst[:start], schema, name, depth+1)
		}
		if n.unique && repeats(dst, starts, start) {
			dst = dst[:before]
			break
		}
		starts = append(starts, start)
	}
	return append(dst, ']')
}

// repeats reports whether the last item of an array being written, which
// begins at start in buf, equals an earlier one; the items begin at starts.
func repeats(buf []byte, starts []int, start int) bool {
	item := buf[start:]
	for i, s := range starts {
		end := start - 1 // the comma before the item
		if i+1 < len(starts) {
			end = starts[i+1] - 1
		}
		if bytes.Equal(buf[s:end], item) {
			return true
		}
	}
	return false
}

// integer appends an integer within the schema's bounds and a multiple of
// its multipleOf.
func (w *writer) integer(dst []byte, n *node) []byte {
	lo, hi := math.Inf(-1), math.Inf(1)
	if n.hasMinimum {
		lo = math.Ceil(n.minimum)
		if n.exclusiveMinimum && lo == n.minimum {
			lo++
		}
	}
	if n.hasMaximum {
		hi = math.Floor(n.maximum)
		if n.exclusiveMaximum && hi == n.maximum {
			hi--
		}
	}
	lo, hi = window(lo, hi, 1)
	if n.multipleOf > 0 {
		if v, ok := w.multiple(lo, hi, n.multipleOf); ok && v == math.Trunc(v) {
			return appendNumber(dst, v)
		}
	}
	return appendNumber(dst, w.between(lo, hi))
}

// number appends a number within the schema's bounds, a half when it can,
// since a model's numbers are seldom all integers.
func (w *writer) number(dst []byte, n *node) []byte {
	within := func(v float64) bool {
		switch {
		case n.hasMinimum && (v < n.minimum || n.exclusiveMinimum && v == n.minimum):
			return false
		case n.hasMaximum && (v > n.maximum || n.exclusiveMaximum && v == n.maximum):
			return false
		}
		return true
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if n.hasMinimum {
		lo = n.minimum
	}
	if n.hasMaximum {
		hi = n.maximum
	}
	lo, hi = window(lo, hi, 0)
	if n.multipleOf > 0 {
		if v, ok := w.multiple(lo, hi, n.multipleOf); ok && within(v) {
			return appendNumber(dst, v)
		}
	}
	if first, last := math.Ceil(lo), math.Floor(hi); first <= last {
		k := w.between(first, last)
		for _, v := range [...]float64{k + 0.5, k, k - 0.5} {
			if within(v) {
				return appendNumber(dst, v)
			}
		}
	}
	return appendNumber(dst, roundWithin(lo+(hi-lo)/2, within))
}

// roundWithin rounds v to the fewest decimals that keep it within bounds, so
// that a midpoint such as 0.15000000000000002 is written 0.2 or 0.15.
func roundWithin(v float64, within func(float64) bool) float64 {
	scale := 1.0
	for range 17 {
		if r := math.Round(v*scale) / scale; within(r) {
			return r
		}
		scale *= 10
	}
	return v
}

// window narrows a range to one generated values can be drawn from: an
// unbounded side is put numberWindow from the other, and distant bounds are
// drawn near the lower one. The default range starts at def.
func window(lo, hi, def float64) (float64, float64) {
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		lo, hi = def, def+numberWindow-1
	case math.IsInf(lo, -1):
		lo = hi - numberWindow + 1
	case math.IsInf(hi, 1):
		hi = lo + numberWindow - 1
	}
	return lo, min(hi, lo+numberWindow-1)
}

// between returns an integer in [lo, hi], which must be integers; lo when the
// range is empty.
func (w *writer) between(lo, hi float64) float64 {
	if hi <= lo {
		return lo
	}
	return lo + float64(w.intn(int(hi-lo)+1))
}

// multiple returns a multiple of m in [lo, hi], if there is one.
func (w *writer) multiple(lo, hi, m float64) (float64, bool) {
	first, last := math.Ceil(lo/m), math.Floor(hi/m)
	if first > last {
		return 0, false
	}
	return w.between(first, min(last, first+numberWindow-1)) * m, true
}

// appendNumber appends v as a JSON number, without an exponent unless it is
// huge.
func appendNumber(dst []byte, v float64) []byte {
	if math.Abs(v) < 1e21 {
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}
