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
const guardsSource = `(function (checked, limit, tooDeep) {
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
	// Joining nested arrays recurses in goja's Go code, once per level,
	// with no stack limit of its own: String() of an array nested two
	// million levels deep overflowed the Go stack. Each level goes through
	// join (toString calls it), or toLocaleString: they count how deeply
	// they are inside one another.
	let joins = 0;
	for (const name of ["join", "toLocaleString"]) {
		const real = Array.prototype[name];
		const guarded = { [name](...args) {
			if (joins >= limit) tooDeep("Array.prototype." + name + "()");
			joins++;
			try {
				return Reflect.apply(real, this, args);
			} finally {
				joins--;
			}
		} }[name];
		Object.defineProperty(guarded, "length", { value: real.length });
		define(Array.prototype, name, guarded);
	}
	// flat recurses once per level it flattens: deeper than the limit, the
	// array is measured first, level by level, without recursion.
	const realFlat = Array.prototype.flat;
	define(Array.prototype, "flat", { flat(...args) {
		const want = args.length === 0 || args[0] === undefined ? 1 : Number(args[0]);
		if (want > limit && Array.isArray(this)) {
			let level = [this];
			for (let depth = 1; level.length > 0; depth++) {
				if (depth > limit) tooDeep("Array.prototype.flat()");
				const next = [];
				for (const a of level) {
					for (let i = 0; i < a.length; i++) {
						if (Array.isArray(a[i])) next.push(a[i]);
					}
				}
				level = next;
			}
		}
		return Reflect.apply(realFlat, this, args);
	} }.flat);
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
	r.rangeErrorCtor, _ = r.vm.Get("RangeError").(*goja.Object)
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
	tooDeep := func(what string) { r.throwNesting(&lang.NestingError{What: what + ": the array", Limit: limit}) }
	_, err = install(goja.Undefined(), r.vm.ToValue(checked), r.vm.ToValue(limit), r.vm.ToValue(tooDeep))
	return err
}

// throwNesting raises a RangeError in the script for a value or code nested
// too deeply, as Node raises one when its parser or JSON.stringify runs out
// of stack.
func (r *run) throwNesting(e *lang.NestingError) {
	panic(r.rangeError(e.Error()))
}
