package jsvm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/dop251/goja"
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
// (undefined, functions) become null.
func (r *run) toJSON(v goja.Value) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	s, err := r.builtins.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if s == nil || goja.IsUndefined(s) {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(s.String()), nil
}

// resultJSON encodes the workflow's result. JSON.stringify turns a
// function, a Symbol, NaN or Infinity into null, or drops it from an
// object, without a word; as a result that is data lost, so it is an
// error here, naming where the value is. undefined stays what JSON makes
// of it: an absent field, or null.
func (r *run) resultJSON(v goja.Value) (json.RawMessage, error) {
	if v == nil || goja.IsUndefined(v) {
		return json.RawMessage("null"), nil
	}
	var bad error
	replacer := r.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		key, val := call.Argument(0).String(), call.Argument(1)
		if bad != nil {
			return val
		}
		what := ""
		switch {
		case isFunction(val):
			what = "a function"
		case isSymbol(val):
			what = "a Symbol"
		case goja.IsNaN(val):
			what = "NaN"
		case goja.IsInfinity(val):
			what = val.String()
		default:
			return val
		}
		where := "it"
		if holder, ok := call.This.(*goja.Object); ok && key != "" {
			where = fmt.Sprintf("its field %q", key)
			if holder.ClassName() == "Array" {
				where = "its element " + key
			}
		}
		bad = fmt.Errorf("%s is %s, which JSON cannot hold", where, what)
		return val
	})
	s, err := r.builtins.stringify(goja.Undefined(), v, replacer)
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	if s == nil || goja.IsUndefined(s) {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(s.String()), nil
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
