package jsvm

// intlSource gives scripts the parts of Intl that real workflow scripts use
// to format numbers, dates, lists and relative times for prompts and
// reports, and to sort and split text, which goja lacks. The
// locale-aware work is done in Go (intl_host.go): collation and plural
// rules from golang.org/x/text, dates in time zones from Go's zone
// database, segmentation by UAX #29. Numbers, lists and relative times
// are formatted here, in en-US and the other English locales. Every
// locale or option outside what is supported is a RangeError that names
// it, never a different format: testdata/dialect holds these to Node's
// answers. Also WeakRef and FinalizationRegistry, which goja lacks: a
// WeakRef here holds its target strongly and a registry never calls back,
// both of which the language allows. Intl.DateTimeFormat().format()
// without a date throws: it would read the clock.
//
// NumberFormat supports style decimal, percent and currency (with
// currencyDisplay symbol or code), notation standard and compact (short),
// minimumIntegerDigits, minimum/maximumFractionDigits,
// minimum/maximumSignificantDigits, useGrouping and signDisplay.
const intlSource = `(function () {
	"use strict";
	const define = (obj, name, value) =>
		Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
	// Building the classes costs a fresh VM more than everything else it
	// sets up, and most runs never format a number: each global is made
	// on first use.
	const host = globalThis.` + intlName + `;
	delete globalThis.` + intlName + `;
	const localeOf = (locales) => {
		if (locales === undefined) return "";
		const first = Array.isArray(locales) ? locales[0] : locales;
		return first === undefined ? "" : String(first);
	};
	const english = (what, locales) => {
		const l = localeOf(locales);
		if (l !== "" && !/^en(-|$)/i.test(l)) {
			throw new RangeError(what + ": the locale " + JSON.stringify(l) + " is not supported in workflow scripts; " +
				"numbers, lists and relative times format in English locales (en, en-US, en-GB, ...)");
		}
		return l === "" ? "en-US" : l;
	};
	const refuse = (what) => {
		throw new RangeError(what + " is not supported in workflow scripts; format the value yourself, or pass it formatted in args");
	};
	const lazy = (name, make) => Object.defineProperty(globalThis, name, {
		configurable: true, enumerable: false,
		get() { const v = make(); define(globalThis, name, v); return v; },
		set(v) { define(globalThis, name, v); },
	});
	let numbers;
	const formatNumber = (value, options, locales) => (numbers || (numbers = makeNumbers())).format(numbers.resolve(options, locales), value);

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
		const resolve = (options, locales) => {
			const locale = english("Intl.NumberFormat", locales);
			const o = options === undefined ? {} : Object(options);
			const style = o.style === undefined ? "decimal" : String(o.style);
			if (style !== "decimal" && style !== "percent" && style !== "currency" && style !== "unit") {
				throw new RangeError("Value " + style + " out of range for Intl.NumberFormat options property style");
			}
			if (style === "unit") refuse("Intl.NumberFormat style \"unit\"");
			const notation = o.notation === undefined ? "standard" : String(o.notation);
			if (notation !== "standard" && notation !== "compact") refuse("Intl.NumberFormat notation " + JSON.stringify(notation));
			if (notation === "compact" && o.compactDisplay !== undefined && String(o.compactDisplay) !== "short") {
				refuse("Intl.NumberFormat compactDisplay " + JSON.stringify(String(o.compactDisplay)));
			}
			for (const k of ["roundingMode", "roundingPriority", "roundingIncrement", "trailingZeroDisplay", "currencySign", "numberingSystem"]) {
				if (o[k] !== undefined) refuse("the Intl.NumberFormat option " + k);
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
			const sig = (v, name) => v === undefined ? undefined : int(v, 1, 1, 21, name);
			let minimumSignificantDigits = sig(o.minimumSignificantDigits, "minimumSignificantDigits");
			let maximumSignificantDigits = sig(o.maximumSignificantDigits, "maximumSignificantDigits");
			if (minimumSignificantDigits !== undefined || maximumSignificantDigits !== undefined) {
				minimumSignificantDigits = minimumSignificantDigits ?? 1;
				maximumSignificantDigits = maximumSignificantDigits ?? 21;
				if (maximumSignificantDigits < minimumSignificantDigits) throw new RangeError("maximumSignificantDigits value is out of range.");
			}
			return {
				locale, numberingSystem: "latn", style, currency, notation,
				minimumSignificantDigits, maximumSignificantDigits,
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
			let suffix = "";
			const digits = (x, minFrac, maxFrac) => {
				// toFixed turns to exponent notation from 1e21 up.
				const fixed = x < 1e21 ? x.toFixed(maxFrac) : BigInt(x).toString();
				let [int, frac = ""] = fixed.split(".");
				while (frac.length > minFrac && frac.endsWith("0")) frac = frac.slice(0, -1);
				while (int.length < opts.minimumIntegerDigits) int = "0" + int;
				return (opts.useGrouping ? group(int) : int) + (frac ? "." + frac : "");
			};
			const significant = (x, minSig, maxSig) => {
				if (x === 0) return digits(0, Math.max(0, minSig - 1), Math.max(0, minSig - 1));
				const rounded = Number(x.toPrecision(maxSig));
				const intDigits = Math.floor(Math.log10(rounded)) + 1;
				return digits(rounded, Math.max(0, minSig - intDigits), Math.max(0, maxSig - intDigits));
			};
			if (x === Infinity) {
				body = "∞";
			} else if (opts.notation === "compact") {
				const units = ["", "K", "M", "B", "T"];
				let k = x < 1000 ? 0 : Math.min(4, Math.floor(Math.floor(Math.log10(x)) / 3));
				let scaled = x / 10 ** (3 * k);
				const round = (v) => opts.maximumSignificantDigits !== undefined
					? Number(v.toPrecision(opts.maximumSignificantDigits))
					: v < 100 ? Number(v.toPrecision(2)) : Math.round(v);
				if (round(scaled) >= 1000 && k < 4) {
					k++;
					scaled = x / 10 ** (3 * k);
				}
				suffix = units[k];
				body = opts.maximumSignificantDigits !== undefined
					? significant(scaled, opts.minimumSignificantDigits, opts.maximumSignificantDigits)
					: scaled < 100 ? significant(scaled, 1, 2) : digits(scaled, 0, 0);
			} else if (opts.maximumSignificantDigits !== undefined) {
				body = significant(x, opts.minimumSignificantDigits, opts.maximumSignificantDigits);
			} else {
				body = digits(x, opts.minimumFractionDigits, opts.maximumFractionDigits);
			}
			body += suffix;
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
			constructor(locales, options) { this.#opts = resolve(options, locales); }
			format(value) { return format(this.#opts, value); }
			formatToParts(value) { return [{ type: "literal", value: format(this.#opts, value) }]; }
			resolvedOptions() { return Object.assign({}, this.#opts); }
			static supportedLocalesOf(locales) { return [].concat(locales === undefined ? [] : locales).filter(l => /^en(-|$)/i.test(String(l))); }
		}
		define(NumberFormat.prototype, Symbol.toStringTag, "Intl.NumberFormat");
		const options = (o) => (o === undefined ? {} : Object(o));
		const plain = (o) => {
			// Only the own enumerable data of an options bag reaches Go.
			const out = {};
			for (const k of Object.keys(options(o))) {
				const v = o[k];
				if (v !== undefined) out[k] = typeof v === "boolean" || typeof v === "number" ? v : String(v);
			}
			return out;
		};

		class DateTimeFormat {
			#locale; #opts;
			constructor(locales, opts) {
				this.#locale = localeOf(locales);
				this.#opts = plain(opts);
				host.date(0, this.#locale, this.#opts, "date", "Intl.DateTimeFormat"); // refuse now what format would
			}
			format(date) {
				if (date === undefined) {
					throw new Error("Intl.DateTimeFormat().format() without a date reads the clock, which is unavailable in workflow scripts: pass timestamps in args");
				}
				return host.date(Number(date), this.#locale, this.#opts, "date", "Intl.DateTimeFormat");
			}
			formatToParts() { refuse("Intl.DateTimeFormat.prototype.formatToParts"); }
			formatRange() { refuse("Intl.DateTimeFormat.prototype.formatRange"); }
			resolvedOptions() {
				return Object.assign({ locale: this.#locale || "en-US", calendar: "gregory", numberingSystem: "latn",
					timeZone: this.#opts.timeZone ?? "UTC" }, this.#opts);
			}
			static supportedLocalesOf(l) { return [].concat(l === undefined ? [] : l).filter((x) => /^(en|en-US|en-GB|sv|sv-SE)$/i.test(String(x))); }
		}
		define(DateTimeFormat.prototype, Symbol.toStringTag, "Intl.DateTimeFormat");

		class Collator {
			#c;
			constructor(locales, opts) {
				this.#c = collator(localeOf(locales), opts);
				const compare = this.#c.compare;
				Object.defineProperty(this, "compare", { value: (a, b) => compare(String(a), String(b)), configurable: true });
			}
			resolvedOptions() { return Object.assign({}, this.#c.resolved); }
			static supportedLocalesOf(l) { return [].concat(l === undefined ? [] : l).map(String); }
		}
		define(Collator.prototype, Symbol.toStringTag, "Intl.Collator");

		class PluralRules {
			#locale; #type;
			constructor(locales, opts) {
				const o = options(opts);
				this.#locale = localeOf(locales);
				this.#type = o.type === undefined ? "cardinal" : String(o.type);
				for (const k of ["minimumFractionDigits", "maximumFractionDigits", "minimumSignificantDigits", "maximumSignificantDigits", "minimumIntegerDigits"]) {
					if (o[k] !== undefined) refuse("the Intl.PluralRules option " + k);
				}
				host.plural(this.#locale, this.#type, 1);
			}
			select(n) { return host.plural(this.#locale, this.#type, Number(n)); }
			selectRange() { refuse("Intl.PluralRules.prototype.selectRange"); }
			resolvedOptions() { return { locale: this.#locale || "en-US", type: this.#type }; }
			static supportedLocalesOf(l) { return [].concat(l === undefined ? [] : l).map(String); }
		}
		define(PluralRules.prototype, Symbol.toStringTag, "Intl.PluralRules");

		class ListFormat {
			#type;
			constructor(locales, opts) {
				english("Intl.ListFormat", locales);
				const o = options(opts);
				this.#type = o.type === undefined ? "conjunction" : String(o.type);
				const style = o.style === undefined ? "long" : String(o.style);
				if (!["conjunction", "disjunction", "unit"].includes(this.#type)) {
					throw new RangeError("Value " + this.#type + " out of range for Intl.ListFormat options property type");
				}
				if (style !== "long") refuse("Intl.ListFormat style " + JSON.stringify(style));
			}
			format(list) {
				const items = Array.from(list, (x) => {
					if (typeof x !== "string") throw new TypeError("Iterable yielded " + String(x) + " which is not a string");
					return x;
				});
				if (items.length < 2) return items.join("");
				const word = this.#type === "conjunction" ? " and " : this.#type === "disjunction" ? " or " : ", ";
				if (items.length === 2) return items[0] + word + items[1];
				const last = this.#type === "unit" ? ", " : "," + word;
				return items.slice(0, -1).join(", ") + last + items[items.length - 1];
			}
			formatToParts() { refuse("Intl.ListFormat.prototype.formatToParts"); }
			static supportedLocalesOf(l) { return [].concat(l === undefined ? [] : l).filter((x) => /^en(-|$)/i.test(String(x))); }
		}
		define(ListFormat.prototype, Symbol.toStringTag, "Intl.ListFormat");

		const relativeUnits = ["year", "quarter", "month", "week", "day", "hour", "minute", "second"];
		const relativeWords = {
			day: ["yesterday", "today", "tomorrow"], week: ["last week", "this week", "next week"],
			month: ["last month", "this month", "next month"], quarter: ["last quarter", "this quarter", "next quarter"],
			year: ["last year", "this year", "next year"], hour: [undefined, "this hour", undefined],
			minute: [undefined, "this minute", undefined], second: [undefined, "now", undefined],
		};
		class RelativeTimeFormat {
			#numeric;
			constructor(locales, opts) {
				english("Intl.RelativeTimeFormat", locales);
				const o = options(opts);
				this.#numeric = o.numeric === undefined ? "always" : String(o.numeric);
				const style = o.style === undefined ? "long" : String(o.style);
				if (this.#numeric !== "always" && this.#numeric !== "auto") {
					throw new RangeError("Value " + this.#numeric + " out of range for Intl.RelativeTimeFormat options property numeric");
				}
				if (style !== "long") refuse("Intl.RelativeTimeFormat style " + JSON.stringify(style));
			}
			format(value, unit) {
				const v = Number(value);
				if (!Number.isFinite(v)) throw new RangeError("Invalid number value");
				let u = String(unit);
				if (u.endsWith("s")) u = u.slice(0, -1);
				if (!relativeUnits.includes(u)) throw new RangeError("Invalid unit argument for format() '" + String(unit) + "'");
				if (this.#numeric === "auto" && (v === -1 || v === 0 || v === 1) && !Object.is(v, -0)) {
					const w = relativeWords[u][v + 1];
					if (w !== undefined) return w;
				}
				const abs = Math.abs(v);
				const n = formatNumber(abs, undefined, "en-US") + " " + u + (abs === 1 ? "" : "s");
				return v < 0 || Object.is(v, -0) ? n + " ago" : "in " + n;
			}
			formatToParts() { refuse("Intl.RelativeTimeFormat.prototype.formatToParts"); }
			static supportedLocalesOf(l) { return [].concat(l === undefined ? [] : l).filter((x) => /^en(-|$)/i.test(String(x))); }
		}
		define(RelativeTimeFormat.prototype, Symbol.toStringTag, "Intl.RelativeTimeFormat");

		class Segmenter {
			#granularity;
			constructor(locales, opts) {
				localeOf(locales);
				const o = options(opts);
				this.#granularity = o.granularity === undefined ? "grapheme" : String(o.granularity);
				host.segment("", this.#granularity);
			}
			segment(input) {
				const text = String(input);
				const word = this.#granularity === "word";
				const all = host.segment(text, this.#granularity).map(([segment, index, wordLike]) =>
					word ? { segment, index, input: text, isWordLike: wordLike } : { segment, index, input: text });
				return {
					[Symbol.iterator]() { return all[Symbol.iterator](); },
					containing(i = 0) {
						const n = Number(i);
						return all.find((s) => n >= s.index && n < s.index + s.segment.length);
					},
				};
			}
			resolvedOptions() { return { locale: "en-US", granularity: this.#granularity }; }
			static supportedLocalesOf(l) { return [].concat(l === undefined ? [] : l).map(String); }
		}
		define(Segmenter.prototype, Symbol.toStringTag, "Intl.Segmenter");

		const Intl = {};
		define(Intl, "NumberFormat", NumberFormat);
		define(Intl, "DateTimeFormat", DateTimeFormat);
		define(Intl, "Collator", Collator);
		define(Intl, "PluralRules", PluralRules);
		define(Intl, "ListFormat", ListFormat);
		define(Intl, "RelativeTimeFormat", RelativeTimeFormat);
		define(Intl, "Segmenter", Segmenter);
		for (const name of ["DisplayNames", "Locale"]) {
			define(Intl, name, function () { refuse("Intl." + name); });
		}
		define(Intl, "getCanonicalLocales", (l) => [].concat(l === undefined ? [] : l).map(String));
		define(Intl, "supportedValuesOf", () => refuse("Intl.supportedValuesOf"));
		define(Intl, Symbol.toStringTag, "Intl");
		return Intl;
	});
	define(Number.prototype, "toLocaleString", function toLocaleString(locales, options) {
		return formatNumber(Number.prototype.valueOf.call(this), options, locales);
	});

	// Collators are cached by locale and options: a sort calls
	// localeCompare for every comparison.
	const collators = new Map();
	const collator = (locale, opts) => {
		const o = {};
		const given = opts === undefined ? {} : Object(opts);
		for (const k of Object.keys(given)) if (given[k] !== undefined) o[k] = given[k];
		const key = locale + "\u0000" + JSON.stringify(o);
		let c = collators.get(key);
		if (c === undefined) {
			c = host.collator(locale, o);
			collators.set(key, c);
		}
		return c;
	};
	define(String.prototype, "localeCompare", function localeCompare(that, locales, options) {
		if (this === undefined || this === null) throw new TypeError("String.prototype.localeCompare called on null or undefined");
		return collator(localeOf(locales), options).compare(String(this), String(that));
	});

	const dateMethod = (name, defaults) => define(Date.prototype, name, {
		[name](locales, options) {
			const t = Date.prototype.getTime.call(this);
			const o = {};
			const given = options === undefined ? {} : Object(options);
			for (const k of Object.keys(given)) {
				const v = given[k];
				if (v !== undefined) o[k] = typeof v === "boolean" || typeof v === "number" ? v : String(v);
			}
			return host.date(t, localeOf(locales), o, defaults, "Date.prototype." + name);
		},
	}[name]);
	dateMethod("toLocaleString", "all");
	dateMethod("toLocaleDateString", "date");
	dateMethod("toLocaleTimeString", "time");

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
