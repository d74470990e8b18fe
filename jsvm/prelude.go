package jsvm

// preludeSource runs in every fresh VM before the script. It takes away
// the clock and the random generator: a resumed run executes the script again
// from the top and takes agent results from the journal, which only works
// if the script makes the same calls in the same order each time. Rather
// than return a fake but plausible value, these throw and say why.
//
// new Date(x), Date.UTC, Date.parse and instanceof Date keep working: they
// read no clock. Run also gives goja fixed time and random sources, a second
// line of defence for anything that reaches them another way.
const preludeSource = `(function (RealDate) {
	"use strict";
	const why = " is unavailable in workflow scripts: a resumed run re-executes the script and must make the same calls; ";
	const clockHint = "pass timestamps in args or stamp results after the run";
	const unavailable = (what, hint) => new Error(what + why + hint);
	const define = (obj, name, value) =>
		Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });

	function Date(...args) {
		if (new.target === undefined) {
			throw unavailable("Date()", clockHint);
		}
		if (args.length === 0) {
			throw unavailable("new Date() without an argument", clockHint);
		}
		return Reflect.construct(RealDate, args, new.target);
	}
	Object.defineProperty(Date, "length", { value: 7 });
	Date.prototype = RealDate.prototype;
	define(RealDate.prototype, "constructor", Date);
	define(Date, "UTC", RealDate.UTC);
	define(Date, "parse", RealDate.parse);
	define(Date, "now", function now() { throw unavailable("Date.now()", clockHint); });
	define(Math, "random", function random() { throw unavailable("Math.random()", "vary by index, or pass a seed in args"); });
	define(globalThis, "Date", Date);
})(Date); // passed in: inside, the name Date is the replacement, hoisted
`
