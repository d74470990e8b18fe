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
// the parser sees a byte. Code also gets the workaround of
// readArgumentsFirst, for the goja bug that the script's own text gets it
// for: there it gave wrong answers (an arrow read the wrong arguments).
//
// The eval that stands in for the real one calls it indirectly, so the
// code runs in the global scope, as (0, eval)(code) and globalThis.eval(code)
// do in Node too; a direct eval(code), which would see the script's local
// variables in Node, is refused when the script loads (see checkForbidden)
// rather than run in another scope.
const guardsSource = `(function (checked) {
	"use strict";
	const define = (obj, name, value) =>
		Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
	const realEval = globalThis.eval;
	define(globalThis, "eval", { eval(code) {
		return typeof code === "string" ? realEval(checked("eval()", code)) : code;
	} }.eval);
	const guard = (Real, what, head) => {
		// As goja's own constructor does: the function's text, evaluated.
		const Guarded = function (...args) {
			const texts = args.map(String);
			const body = texts.length > 0 ? texts.pop() : "";
			const fn = realEval(checked(what, head + "(" + texts.join(",") + "\n) {\n" + body + "\n})"));
			Object.setPrototypeOf(fn, (new.target === undefined ? Guarded : new.target).prototype);
			return fn;
		};
		Object.setPrototypeOf(Guarded, Object.getPrototypeOf(Real));
		Object.defineProperty(Guarded, "prototype", { value: Real.prototype });
		Object.defineProperty(Guarded, "name", { value: Real.name });
		Object.defineProperty(Guarded, "length", { value: 1 });
		define(Real.prototype, "constructor", Guarded);
		return Guarded;
	};
	define(globalThis, "Function", guard(Function, "new Function()", "(function anonymous"));
	guard(Object.getPrototypeOf(async function () {}).constructor, "new AsyncFunction()", "(async function anonymous");
	guard(Object.getPrototypeOf(function* () {}).constructor, "new GeneratorFunction()", "(function* anonymous");
	const realParse = JSON.parse;
	define(JSON, "parse", { parse(text, reviver) {
		const s = checked("JSON.parse()", String(text), true);
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
	// checked returns the text to parse, or throws when it nests too deeply.
	checked := func(what, text string, isJSON bool) string {
		if isJSON {
			if lang.JSONNesting([]byte(text), limit) > limit {
				r.throwNesting(&lang.NestingError{What: what + ": the text", Limit: limit})
			}
			return text
		}
		if sourceNesting(text, limit) >= 0 {
			r.throwNesting(&lang.NestingError{What: what + ": the code", Limit: limit})
		}
		return readArgumentsFirstInText(text)
	}
	_, err = install(goja.Undefined(), r.vm.ToValue(checked))
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
