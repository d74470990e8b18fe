package jsvm

import (
	"errors"

	"github.com/dop251/goja"
)

// regexpSource replaces the RegExp constructor with one that spells out
// Unicode property escapes before goja compiles the pattern (see
// unicode_props.go); literals are spelled out at load time, and their
// source and toString() show the pattern as written, through the
// script's table of them (written). Anything else about RegExp stays
// goja's: the instances, the prototype, subclassing. The Go functions are
// handed over through globals the prelude deletes.
const regexpSource = `(function (RealRegExp, translate, written) {
	"use strict";
	delete globalThis.` + translateRegExpName + `;
	delete globalThis.` + writtenRegExpName + `;
	const sourceOf = Object.getOwnPropertyDescriptor(RealRegExp.prototype, "source").get;
	Object.defineProperty(RealRegExp.prototype, "source", {
		get() {
			const s = sourceOf.call(this);
			const w = written(s);
			return w === undefined ? s : w;
		},
		configurable: true, enumerable: false,
	});
	// goja's toString reads the compiled pattern of a regular expression
	// it made itself; the spec's reads source.
	Object.defineProperty(RealRegExp.prototype, "toString", {
		value: function toString() {
			if (this === null || (typeof this !== "object" && typeof this !== "function")) {
				throw new TypeError("RegExp.prototype.toString requires that 'this' be an Object");
			}
			return "/" + String(this.source) + "/" + String(this.flags);
		},
		writable: true, configurable: true, enumerable: false,
	});
	function RegExp(pattern, flags) {
		const isRegExp = pattern instanceof RealRegExp;
		if (new.target === undefined && isRegExp && flags === undefined && pattern.constructor === RegExp) {
			return pattern;
		}
		const source = isRegExp ? pattern.source : pattern === undefined ? "" : String(pattern);
		const f = flags === undefined ? (isRegExp ? pattern.flags : "") : String(flags);
		const p = source.includes("\\p{") || source.includes("\\P{") ? translate(source, f) : source;
		const re = Reflect.construct(RealRegExp, [p, f], new.target === undefined ? RegExp : new.target);
		if (p !== source) {
			// source and toString() show the pattern as written.
			Object.defineProperty(re, "source", { value: source, configurable: true });
		}
		return re;
	}
	Object.setPrototypeOf(RegExp, RealRegExp);
	Object.defineProperty(RegExp, "length", { value: 2 });
	Object.defineProperty(RegExp, "prototype", { value: RealRegExp.prototype });
	Object.defineProperty(RealRegExp.prototype, "constructor", { value: RegExp, writable: true, configurable: true, enumerable: false });
	Object.defineProperty(RegExp, Symbol.species, { get() { return this; }, configurable: true });
	Object.defineProperty(globalThis, "RegExp", { value: RegExp, writable: true, configurable: true, enumerable: false });
})(RegExp, globalThis.` + translateRegExpName + `, globalThis.` + writtenRegExpName + `);
`

// translateRegExpName is the global the translation goes through.
const translateRegExpName = "__dynworkflow_translate_regexp"

// writtenRegExpName is the global the literals' patterns go through.
const writtenRegExpName = "__dynworkflow_written_regexp"

// installRegExpTranslation gives the prelude the translation, and the
// patterns of the script's literals as written.
func (r *run) installRegExpTranslation() error {
	err := r.vm.Set(translateRegExpName, func(pattern, flags string) string {
		out, err := translateUnicodeProperties(pattern, flags)
		if err != nil {
			panic(r.syntaxError(err.Error()))
		}
		return out
	})
	if err != nil {
		return err
	}
	return r.vm.Set(writtenRegExpName, func(pattern string) goja.Value {
		if w, ok := r.script.written[pattern]; ok {
			return r.vm.ToValue(w)
		}
		return goja.Undefined()
	})
}

// syntaxError is a SyntaxError of the script's realm, to throw.
func (r *run) syntaxError(message string) goja.Value {
	ctor, ok := goja.AssertConstructor(r.vm.Get("SyntaxError"))
	if !ok {
		return r.vm.NewGoError(errors.New(message))
	}
	obj, err := ctor(nil, r.vm.ToValue(message))
	if err != nil {
		return r.vm.NewGoError(errors.New(message))
	}
	return obj
}
