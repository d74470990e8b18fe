package jsvm

// intlSource gives scripts the parts of Intl that real workflow scripts use
// to format numbers for prompts and reports, which goja lacks: a minimal
// Intl.NumberFormat, Number.prototype.toLocaleString and the Date
// toLocale*String methods, all in en-US whatever locale is asked for (the
// Node runtime formats in the host's locale, en-US on most machines). Also
// WeakRef and FinalizationRegistry, which goja lacks: a WeakRef here holds
// its target strongly and a registry never calls back, both of which the
// language allows. Intl.DateTimeFormat is left out on purpose: without a
// date it reads the clock.
//
// NumberFormat supports style decimal, percent and currency (with
// currencyDisplay symbol or code), minimumIntegerDigits,
// minimum/maximumFractionDigits, useGrouping, and signDisplay; other
// options are accepted and ignored.
const intlSource = `(function () {
	"use strict";
	const define = (obj, name, value) =>
		Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
	// Building the classes costs a fresh VM more than everything else it
	// sets up, and most runs never format a number: each global is made
	// on first use.
	const lazy = (name, make) => Object.defineProperty(globalThis, name, {
		configurable: true, enumerable: false,
		get() { const v = make(); define(globalThis, name, v); return v; },
		set(v) { define(globalThis, name, v); },
	});
	let numbers;
	const formatNumber = (value, options) => (numbers || (numbers = makeNumbers())).format(numbers.resolve(options), value);

	function makeNumbers() {
		const symbols = { USD: "$", EUR: "€", GBP: "£", JPY: "¥", CNY: "CN¥", INR: "₹", KRW: "₩", CAD: "CA$", AUD: "A$" };
		const zeroDecimals = { JPY: true, KRW: true };
		const group = (digits) => {
			let out = "";
			for (let i = 0; i < digits.length; i++) {
				if (i > 0 && (digits.length - i) % 3 === 0) out += ",";
				out += digits[i];
			}
			return out;
		};
		const resolve = (options) => {
			const o = options === undefined ? {} : Object(options);
			const style = o.style === undefined ? "decimal" : String(o.style);
			if (style !== "decimal" && style !== "percent" && style !== "currency" && style !== "unit") {
				throw new RangeError("Value " + style + " out of range for Intl.NumberFormat options property style");
			}
			const currency = o.currency === undefined ? undefined : String(o.currency).toUpperCase();
			if (style === "currency" && currency === undefined) {
				throw new TypeError("Currency code is required with currency style.");
			}
			const defMin = style === "currency" ? (zeroDecimals[currency] ? 0 : 2) : 0;
			const defMax = style === "currency" ? defMin : style === "percent" ? 0 : 3;
			const int = (v, d, lo, hi, name) => {
				if (v === undefined) return d;
				const n = Math.floor(Number(v));
				if (!(n >= lo && n <= hi)) throw new RangeError(name + " value is out of range.");
				return n;
			};
			const minimumFractionDigits = int(o.minimumFractionDigits, defMin, 0, 100, "minimumFractionDigits");
			const maximumFractionDigits = int(o.maximumFractionDigits, Math.max(defMax, minimumFractionDigits), 0, 100, "maximumFractionDigits");
			if (maximumFractionDigits < minimumFractionDigits) throw new RangeError("maximumFractionDigits value is out of range.");
			return {
				locale: "en-US", numberingSystem: "latn", style, currency,
				currencyDisplay: o.currencyDisplay === undefined ? "symbol" : String(o.currencyDisplay),
				minimumIntegerDigits: int(o.minimumIntegerDigits, 1, 1, 21, "minimumIntegerDigits"),
				minimumFractionDigits, maximumFractionDigits,
				useGrouping: o.useGrouping === undefined ? true : o.useGrouping !== false && o.useGrouping !== "false",
				signDisplay: o.signDisplay === undefined ? "auto" : String(o.signDisplay),
				unit: o.unit === undefined ? undefined : String(o.unit),
			};
		};
		const format = (opts, value) => {
			let x = Number(value);
			if (Number.isNaN(x)) return "NaN";
			const negative = x < 0 || Object.is(x, -0);
			x = Math.abs(x);
			if (opts.style === "percent") x *= 100;
			let body;
			if (x === Infinity) {
				body = "∞";
			} else {
				// toFixed turns to exponent notation from 1e21 up.
				const fixed = x < 1e21 ? x.toFixed(opts.maximumFractionDigits) : BigInt(x).toString();
				let [int, frac = ""] = fixed.split(".");
				while (frac.length > opts.minimumFractionDigits && frac.endsWith("0")) frac = frac.slice(0, -1);
				while (int.length < opts.minimumIntegerDigits) int = "0" + int;
				body = (opts.useGrouping ? group(int) : int) + (frac ? "." + frac : "");
			}
			const zero = !/[1-9]/.test(body);
			let sign = "";
			switch (opts.signDisplay) {
			case "never": break;
			case "always": sign = negative ? "-" : "+"; break;
			case "exceptZero": sign = zero ? "" : negative ? "-" : "+"; break;
			case "negative": sign = negative && !zero ? "-" : ""; break;
			default: sign = negative ? "-" : "";
			}
			if (opts.style === "percent") return sign + body + "%";
			if (opts.style === "unit" && opts.unit) return sign + body + " " + opts.unit;
			if (opts.style === "currency") {
				const code = opts.currency;
				if (opts.currencyDisplay === "code" || !symbols[code]) return sign + code + "\u00a0" + body;
				return sign + symbols[code] + body;
			}
			return sign + body;
		};
		return { resolve, format };
	}

	lazy("Intl", () => {
		if (!numbers) numbers = makeNumbers();
		const { resolve, format } = numbers;
		class NumberFormat {
			#opts;
			constructor(locales, options) { this.#opts = resolve(options); }
			format(value) { return format(this.#opts, value); }
			formatToParts(value) { return [{ type: "literal", value: format(this.#opts, value) }]; }
			resolvedOptions() { return Object.assign({}, this.#opts); }
			static supportedLocalesOf(locales) { return [].concat(locales === undefined ? [] : locales).filter(l => /^en(-|$)/i.test(String(l))); }
		}
		define(NumberFormat.prototype, Symbol.toStringTag, "Intl.NumberFormat");
		const Intl = {};
		define(Intl, "NumberFormat", NumberFormat);
		define(Intl, "getCanonicalLocales", (l) => [].concat(l === undefined ? [] : l).map(String));
		define(Intl, Symbol.toStringTag, "Intl");
		return Intl;
	});
	define(Number.prototype, "toLocaleString", function toLocaleString(locales, options) {
		return formatNumber(Number.prototype.valueOf.call(this), options);
	});

	const pad = (n) => (n < 10 ? "0" : "") + n;
	const datePart = (d) => (d.getMonth() + 1) + "/" + d.getDate() + "/" + d.getFullYear();
	const timePart = (d) => {
		const h = d.getHours() % 12 === 0 ? 12 : d.getHours() % 12;
		return h + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + (d.getHours() < 12 ? " AM" : " PM");
	};
	const valid = (d) => !Number.isNaN(d.getTime());
	define(Date.prototype, "toLocaleString", function toLocaleString() {
		return valid(this) ? datePart(this) + ", " + timePart(this) : "Invalid Date";
	});
	define(Date.prototype, "toLocaleDateString", function toLocaleDateString() {
		return valid(this) ? datePart(this) : "Invalid Date";
	});
	define(Date.prototype, "toLocaleTimeString", function toLocaleTimeString() {
		return valid(this) ? timePart(this) : "Invalid Date";
	});

	if (typeof globalThis.WeakRef === "undefined") {
		lazy("WeakRef", () => {
			class WeakRef {
				#target;
				constructor(target) {
					if (target === null || (typeof target !== "object" && typeof target !== "function")) {
						throw new TypeError("WeakRef: target must be an object");
					}
					this.#target = target;
				}
				deref() { return this.#target; }
			}
			define(WeakRef.prototype, Symbol.toStringTag, "WeakRef");
			return WeakRef;
		});
	}
	if (typeof globalThis.FinalizationRegistry === "undefined") {
		lazy("FinalizationRegistry", () => {
			class FinalizationRegistry {
				constructor(callback) {
					if (typeof callback !== "function") throw new TypeError("FinalizationRegistry: cleanup must be callable");
				}
				register() {}
				unregister() { return false; }
			}
			define(FinalizationRegistry.prototype, Symbol.toStringTag, "FinalizationRegistry");
			return FinalizationRegistry;
		});
	}
})();
`
