package jsvm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/dop251/goja"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Values cross between the script and the engine as JSON, converted by the
// VM's own JSON.parse and JSON.stringify: the script gets native arrays and
// objects (not Go values in disguise), and the engine gets exactly what
// JSON.stringify would give in Node.

// builtins are the functions the host itself calls, read from a fresh VM
// before any script code runs.
type builtins struct {
	parse, stringify goja.Callable
	resolve, then    goja.Callable
	freeze           goja.Callable
	Promise, Error   *goja.Object
}

func (r *run) readBuiltins() error {
	global := r.vm.GlobalObject()
	object := func(v goja.Value) *goja.Object {
		o, _ := v.(*goja.Object)
		return o
	}
	method := func(obj *goja.Object, name string) goja.Callable {
		if obj == nil {
			return nil
		}
		fn, _ := goja.AssertFunction(obj.Get(name))
		return fn
	}
	json, promise := object(global.Get("JSON")), object(global.Get("Promise"))
	r.builtins = builtins{
		parse:     method(json, "parse"),
		stringify: method(json, "stringify"),
		resolve:   method(promise, "resolve"),
		then:      method(object(promise.Get("prototype")), "then"),
		freeze:    method(object(global.Get("Object")), "freeze"),
		Promise:   promise,
		Error:     object(global.Get("Error")),
	}
	b := r.builtins
	if b.parse == nil || b.stringify == nil || b.resolve == nil || b.then == nil || b.freeze == nil || b.Error == nil {
		return fmt.Errorf("jsvm: the runtime lacks a builtin the host needs")
	}
	return nil
}

// toJSON encodes v with JSON.stringify. Values JSON has no form for
// (undefined, functions, NaN) become null, or are left out of objects, as
// JSON.stringify makes them. A value nested deeper than the limit is a
// *lang.NestingError naming it "the value".
func (r *run) toJSON(v goja.Value) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	return r.encoder().encode(v, false)
}

// resultJSON encodes the workflow's result. JSON.stringify turns a function
// or a Symbol into null, or drops it from an object, without a word; as a
// result that is data lost, so it is an error here, naming where the value
// is. NaN and Infinity become null, as JSON.stringify makes them (a script
// that returns budget.remaining() without a budget gets null, not a failed
// run after every agent was paid); notes lists where, for a warning.
// undefined stays what JSON makes of it: an absent field, or null.
func (r *run) resultJSON(v goja.Value) (out json.RawMessage, notes []string, err error) {
	if v == nil || goja.IsUndefined(v) {
		return json.RawMessage("null"), nil, nil
	}
	e := r.encoder()
	out, err = e.encode(v, true)
	return out, e.nonFinite, err
}

// encoder runs JSON.stringify with a replacer that follows the nesting of
// what it encodes, so that a value nested deeper than the limit is refused
// at the level that goes over it: JSON.stringify itself checks for cycles
// by comparing each object with every one above it, which at 20,000
// levels took 4 seconds, at 200,000 minutes. One per run, reused.
type encoder struct {
	r        *run
	replacer goja.Value
	// depths holds the level of every object seen in this encoding;
	// parents how each was reached, for the path of a note.
	depths  map[*goja.Object]int
	parents map[*goja.Object]parentLink
	// result marks the encoding of a result (see resultJSON).
	result    bool
	tooDeep   bool
	bad       error
	nonFinite []string
}

type parentLink struct {
	holder *goja.Object
	key    string
}

func (r *run) encoder() *encoder {
	if r.enc == nil {
		e := &encoder{r: r, depths: map[*goja.Object]int{}, parents: map[*goja.Object]parentLink{}}
		e.replacer = r.vm.ToValue(e.replace)
		r.enc = e
	}
	return r.enc
}

func (e *encoder) encode(v goja.Value, result bool) (json.RawMessage, error) {
	clear(e.depths)
	clear(e.parents)
	e.result, e.tooDeep, e.bad, e.nonFinite = result, false, nil, nil
	s, err := e.r.builtins.stringify(goja.Undefined(), v, e.replacer)
	switch {
	case e.tooDeep:
		return nil, &lang.NestingError{What: "the value", Limit: e.r.script.maxNesting}
	case err != nil:
		return nil, err
	case e.bad != nil:
		return nil, e.bad
	case s == nil || goja.IsUndefined(s):
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(s.String()), nil
}

// replace is the replacer: called for every value JSON.stringify meets,
// with the object holding it as this, before it goes into the value.
func (e *encoder) replace(call goja.FunctionCall) goja.Value {
	holder, _ := call.This.(*goja.Object)
	key, val := call.Argument(0).String(), call.Argument(1)
	if obj, ok := val.(*goja.Object); ok && !isFunction(val) {
		depth := e.depths[holder] + 1 // the holder of the value itself is at 0
		if depth > e.r.script.maxNesting {
			e.tooDeep = true
			panic(e.r.vm.ToValue("nested too deeply")) // ends JSON.stringify; encode reports it
		}
		e.depths[obj] = depth
		if e.result {
			e.parents[obj] = parentLink{holder, key}
		}
	}
	if !e.result || e.bad != nil {
		return val
	}
	switch {
	case goja.IsNaN(val), goja.IsInfinity(val):
		e.nonFinite = append(e.nonFinite, fmt.Sprintf("%s at %s", val.String(), e.path(holder, key)))
		return goja.Null()
	case isFunction(val):
		e.bad = fmt.Errorf("%s is a function, which JSON cannot hold", e.where(holder, key))
	case isSymbol(val):
		e.bad = fmt.Errorf("%s is a Symbol, which JSON cannot hold", e.where(holder, key))
	}
	return val
}

// where names the place of a value for an error: "it", "its field \"x\"",
// "its element 3".
func (e *encoder) where(holder *goja.Object, key string) string {
	if _, nested := e.depths[holder]; !nested || holder == nil {
		return "it"
	}
	if holder.ClassName() == "Array" {
		return "its element " + key
	}
	return fmt.Sprintf("its field %q", key)
}

// path spells where a value sits in the result, as JavaScript would reach
// it: result.items[2].score.
func (e *encoder) path(holder *goja.Object, key string) string {
	var steps []string
	for {
		if _, nested := e.depths[holder]; !nested || holder == nil {
			break
		}
		steps = append(steps, pathStep(holder, key))
		link := e.parents[holder]
		holder, key = link.holder, link.key
	}
	var b strings.Builder
	b.WriteString("result")
	for i := len(steps) - 1; i >= 0; i-- {
		b.WriteString(steps[i])
	}
	return b.String()
}

func pathStep(holder *goja.Object, key string) string {
	if holder.ClassName() == "Array" {
		return "[" + key + "]"
	}
	if isIdentifier(key) {
		return "." + key
	}
	q, _ := json.Marshal(key)
	return "[" + string(q) + "]"
}

func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) || s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isFunction(v goja.Value) bool {
	_, ok := goja.AssertFunction(v)
	return ok
}

func isSymbol(v goja.Value) bool {
	_, ok := v.(*goja.Symbol)
	return ok
}

// optionsJSON encodes an optional options argument: nil when absent.
func (r *run) optionsJSON(fn string, v goja.Value) json.RawMessage {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	raw, err := r.toJSON(v)
	var deep *lang.NestingError
	if errors.As(err, &deep) {
		deep.What = fn + ": the options"
		r.throwNesting(deep)
	}
	if err != nil {
		r.typeError("%s: the options cannot be turned into JSON: %s", fn, r.describeThrownError(err))
	}
	return raw
}

// fromJSON decodes JSON from the engine with JSON.parse. Empty input is
// null. A text answer, the commonest, is decoded directly: goja's JSON.parse
// allocates a 4 KB reader buffer per call, which dominated the host's cost
// per agent call.
func (r *run) fromJSON(raw json.RawMessage) (goja.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return goja.Null(), nil
	}
	if raw[0] == '"' {
		// Most answers are text: one JSON string, often of many
		// kilobytes. jsontext unquotes it in one pass, four times as fast
		// as encoding/json's scan-then-decode; encoding/json still takes
		// what jsontext refuses, such as invalid UTF-8, which it replaces
		// as it always has.
		if b, err := jsontext.AppendUnquote(nil, raw); err == nil {
			return r.vm.ToValue(string(b)), nil
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return r.vm.ToValue(s), nil
		}
	}
	return r.builtins.parse(goja.Undefined(), r.vm.ToValue(string(raw)))
}

// describeThrownError gives the message of an error a JS call returned.
func (r *run) describeThrownError(err error) string {
	if ex, ok := err.(*goja.Exception); ok {
		return r.describeThrown(ex.Value())
	}
	return err.Error()
}

// format renders values the way console.log does, joined by spaces:
// strings as they are, errors as "Name: message", other objects as JSON.
func (r *run) format(args []goja.Value) string {
	var b strings.Builder
	for i, v := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.formatOne(v))
	}
	return b.String()
}

func (r *run) formatOne(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Error" || obj.ClassName() == "Function" {
		return r.safeString(v)
	}
	s, err := r.toJSON(v)
	if err != nil {
		return r.safeString(v)
	}
	return string(s)
}

// kind names the type of v for an error message: "a string", "an array".
var promiseType = reflect.TypeFor[*goja.Promise]()

func kind(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		switch v.ExportType().Kind() {
		case reflect.String:
			return "a string"
		case reflect.Bool:
			return "a boolean"
		case reflect.Int64, reflect.Float64:
			return "a number"
		}
		return "a " + v.ExportType().String()
	}
	// ExportType, not Export: Export copies a whole array or object, which
	// for new Array(5e7) took seconds.
	if obj.ExportType() == promiseType {
		return "a promise"
	}
	switch obj.ClassName() {
	case "Array":
		return "an array"
	case "Function":
		return "a function"
	}
	return "an object"
}
