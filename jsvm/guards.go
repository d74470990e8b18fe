package jsvm

import (
	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// A script can hand goja's parsers text it made at run time: eval, new
// Function (and its async and generator kin) parse JavaScript, JSON.parse
// parses JSON, and each recurses once per level of nesting, so that
// eval("[".repeat(1e6) + "]".repeat(1e6)) overflowed the Go stack and took
// the process down. guardsSource puts a check in front of each: the same
// nesting limit as the script's own text, measured the same way, before
// the parser sees a byte.
//
// The eval that stands in for the real one calls it indirectly, so the
// code runs in the global scope, as (0, eval)(code) and globalThis.eval(code)
// do in Node too; a direct eval(code), which would see the script's local
// variables in Node, is refused when the script loads (see checkForbidden)
// rather than run in another scope.
const guardsSource = `(function (checkCode, checkJSON) {
	"use strict";
	const define = (obj, name, value) =>
		Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
	const realEval = globalThis.eval;
	define(globalThis, "eval", { eval(code) {
		if (typeof code === "string") checkCode("eval()", code);
		return realEval(code);
	} }.eval);
	const guard = (Real, what) => {
		const Guarded = function (...args) {
			const texts = args.map(String);
			for (const text of texts) checkCode(what, text);
			return Reflect.construct(Real, texts, new.target === undefined ? Guarded : new.target);
		};
		Object.setPrototypeOf(Guarded, Object.getPrototypeOf(Real));
		Object.defineProperty(Guarded, "prototype", { value: Real.prototype });
		Object.defineProperty(Guarded, "name", { value: Real.name });
		Object.defineProperty(Guarded, "length", { value: 1 });
		define(Real.prototype, "constructor", Guarded);
		return Guarded;
	};
	define(globalThis, "Function", guard(Function, "new Function()"));
	guard(Object.getPrototypeOf(async function () {}).constructor, "new AsyncFunction()");
	guard(Object.getPrototypeOf(function* () {}).constructor, "new GeneratorFunction()");
	const realParse = JSON.parse;
	define(JSON, "parse", { parse(text, reviver) {
		const s = String(text);
		checkJSON(s);
		return arguments.length > 1 ? realParse(s, reviver) : realParse(s);
	} }.parse);
})`

// installGuards runs guardsSource in the run's fresh VM, before any of the
// script's code: the RangeError its checks throw is read now, so that a
// script cannot replace it.
func (r *run) installGuards() error {
	v, err := r.vm.RunProgram(r.script.guards)
	if err != nil {
		return err
	}
	install, _ := goja.AssertFunction(v)
	r.rangeError, _ = r.vm.Get("RangeError").(*goja.Object)
	limit := r.script.maxNesting
	throw := func(what string) { r.throwNesting(&lang.NestingError{What: what, Limit: limit}) }
	checkCode := func(what, text string) {
		if sourceNesting(text, limit) >= 0 {
			throw(what + ": the code")
		}
	}
	checkJSON := func(text string) {
		if lang.JSONNesting([]byte(text), limit) > limit {
			throw("JSON.parse(): the text")
		}
	}
	_, err = install(goja.Undefined(), r.vm.ToValue(checkCode), r.vm.ToValue(checkJSON))
	return err
}

// throwNesting raises a RangeError in the script for a value or code nested
// too deeply, as Node raises one when its parser or JSON.stringify runs out
// of stack.
func (r *run) throwNesting(e *lang.NestingError) {
	if r.rangeError != nil {
		if obj, err := r.vm.New(r.rangeError, r.vm.ToValue(e.Error())); err == nil {
			panic(obj)
		}
	}
	r.typeError("%s", e.Error())
}
