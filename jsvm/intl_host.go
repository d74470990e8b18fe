//lint:file-ignore ST1005 these errors become JavaScript exceptions, whose messages are Node's

package jsvm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones by name on a machine without a zoneinfo
	"unicode"
	"unicode/utf16"

	"github.com/clipperhouse/uax29/v2/graphemes"
	"github.com/clipperhouse/uax29/v2/sentences"
	"github.com/clipperhouse/uax29/v2/words"
	"github.com/dop251/goja"
	"golang.org/x/text/collate"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// The locale-aware parts of Intl that scripts use, in Go: collation and
// plural rules from golang.org/x/text (CLDR data), dates in time zones
// from Go's zone database, text segmentation by UAX #29 (clipperhouse
// uax29). Each supports the locales and options real scripts use and
// answers as Node does for them (testdata/dialect holds it to Node's
// answers); anything else is refused with an error naming the locale or
// option, never formatted some other way. intl.go builds the JavaScript
// objects over these.

// intlName is the global the prelude takes these from, and deletes.
const intlName = "__dynworkflow_intl"

// intlRefusal is an unsupported locale or option: a RangeError.
type intlRefusal struct{ msg string }

func (e *intlRefusal) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &intlRefusal{msg: fmt.Sprintf(format, args...) + " (workflow scripts support the locales and options of Node's Intl that scripts commonly use; format the value yourself, or pass it formatted in args)"}
}

// installIntl hands the prelude the Go side of Intl.
func (r *run) installIntl() error {
	host := r.vm.NewObject()
	wrap := func(f func(call goja.FunctionCall) (any, error)) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			v, err := f(call)
			if err != nil {
				if _, ok := err.(*intlRefusal); ok {
					panic(r.rangeError(err.Error()))
				}
				panic(r.vm.NewTypeError(err.Error()))
			}
			return r.vm.ToValue(v)
		}
	}
	set := func(name string, f func(call goja.FunctionCall) (any, error)) {
		_ = host.Set(name, wrap(f))
	}
	set("date", func(c goja.FunctionCall) (any, error) {
		opts, _ := c.Argument(2).Export().(map[string]any)
		return formatDate(c.Argument(0).ToFloat(), c.Argument(1).String(), opts, c.Argument(3).String(), c.Argument(4).String())
	})
	set("collator", func(c goja.FunctionCall) (any, error) {
		opts, _ := c.Argument(1).Export().(map[string]any)
		compare, resolved, err := newCollator(c.Argument(0).String(), opts)
		if err != nil {
			return nil, err
		}
		return map[string]any{"compare": compare, "resolved": resolved}, nil
	})
	set("plural", func(c goja.FunctionCall) (any, error) {
		return pluralForm(c.Argument(0).String(), c.Argument(1).String(), c.Argument(2).ToFloat())
	})
	set("segment", func(c goja.FunctionCall) (any, error) {
		return segment(c.Argument(0).String(), c.Argument(1).String())
	})
	return r.vm.Set(intlName, host)
}

// rangeError is a RangeError of the script's realm, to throw: the one
// there was before the script ran, if the guards read it.
func (r *run) rangeError(message string) goja.Value {
	ctor := r.rangeErrorCtor
	if ctor == nil {
		ctor, _ = r.vm.Get("RangeError").(*goja.Object)
	}
	if ctor == nil {
		return r.vm.NewTypeError(message)
	}
	if ctor, ok := goja.AssertConstructor(ctor); ok {
		if obj, err := ctor(nil, r.vm.ToValue(message)); err == nil {
			return obj
		}
	}
	return r.vm.NewTypeError(message)
}

// locale picks the locale of a locales argument, as intl.go passes it:
// "" for none (en-US, the Node runtime's usual default).
func locale(tag string) (language.Tag, error) {
	if tag == "" || tag == "undefined" {
		return language.AmericanEnglish, nil
	}
	t, err := language.Parse(tag)
	if err != nil {
		return language.Und, fmt.Errorf("Incorrect locale information provided")
	}
	return t, nil
}

// --- dates ---

// dateLocales are the locales dates are formatted in, by their patterns.
var dateLocales = map[string]bool{"en-US": true, "en": true, "en-GB": true, "sv-SE": true, "sv": true}

var dateOptionNames = map[string]bool{
	"weekday": true, "year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true,
	"hour12": true, "hourCycle": true, "timeZone": true, "dateStyle": true, "timeStyle": true,
	"localeMatcher": true, "formatMatcher": true, "calendar": true, "numberingSystem": true,
}

// formatDate formats the time ms (milliseconds since the epoch) as
// toLocaleString (defaults "all"), toLocaleDateString ("date") or
// toLocaleTimeString ("time") do; fn names the method in errors.
func formatDate(ms float64, tag string, opts map[string]any, defaults, fn string) (string, error) {
	if math.IsNaN(ms) {
		return "Invalid Date", nil
	}
	lt, err := locale(tag)
	if err != nil {
		return "", err
	}
	name := lt.String()
	if !dateLocales[name] {
		return "", refuse("%s: the locale %q is not supported in workflow scripts; dates format in en-US, en-GB and sv-SE", fn, name)
	}
	if name == "en" {
		name = "en-US"
	} else if name == "sv" {
		name = "sv-SE"
	}
	o := map[string]string{}
	var hour12 *bool
	for k, v := range opts {
		if v == nil {
			continue
		}
		if !dateOptionNames[k] {
			return "", refuse("%s: the option %s is not supported in workflow scripts", fn, k)
		}
		if k == "hour12" {
			b, _ := v.(bool)
			hour12 = &b
			continue
		}
		o[k] = fmt.Sprint(v)
	}
	if c := o["calendar"]; c != "" && c != "gregory" {
		return "", refuse("%s: the calendar %q is not supported in workflow scripts", fn, c)
	}
	if n := o["numberingSystem"]; n != "" && n != "latn" {
		return "", refuse("%s: the numbering system %q is not supported in workflow scripts", fn, n)
	}
	loc := time.Local
	if tz := o["timeZone"]; tz != "" {
		if loc, err = time.LoadLocation(tz); err != nil || strings.EqualFold(tz, "local") {
			return "", &intlRefusal{msg: "Invalid time zone specified: " + tz}
		}
	}
	t := time.UnixMilli(int64(ms)).In(loc)
	fields := []string{"weekday", "year", "month", "day", "hour", "minute", "second"}
	any := false
	for _, f := range fields {
		if o[f] != "" {
			any = true
		}
	}
	if o["dateStyle"] != "" || o["timeStyle"] != "" {
		if any {
			return "", &intlRefusal{msg: "Can't set option " + firstSet(o, fields) + " when dateStyle or timeStyle is used"}
		}
		if name != "en-US" {
			return "", refuse("%s: dateStyle and timeStyle are supported in en-US only", fn)
		}
		return styled(t, o["dateStyle"], o["timeStyle"], fn)
	}
	if !any {
		if defaults != "time" {
			o["year"], o["month"], o["day"] = "numeric", "numeric", "numeric"
		}
		if defaults != "date" {
			o["hour"], o["minute"], o["second"] = "numeric", "numeric", "numeric"
		}
	} else if name != "en-US" {
		return "", refuse("%s: options other than timeZone are supported in en-US only", fn)
	}
	h12 := name == "en-US"
	if hour12 != nil {
		h12 = *hour12
	} else if hc := o["hourCycle"]; hc != "" {
		switch hc {
		case "h12":
			h12 = true
		case "h23":
			h12 = false
		default:
			return "", refuse("%s: the hourCycle %q is not supported in workflow scripts", fn, hc)
		}
	}
	switch name {
	case "sv-SE":
		return join(t.Format("2006-01-02"), clock(t, o, false), " "), nil
	case "en-GB":
		return join(t.Format("02/01/2006"), clock(t, o, h12), ", "), nil
	}
	date, err := usDate(t, o, fn)
	if err != nil {
		return "", err
	}
	clk := clock(t, o, h12)
	if o["minute"] != "" && o["hour"] == "" || o["second"] != "" && o["minute"] == "" {
		return "", refuse("%s: minute or second without hour is not supported in workflow scripts", fn)
	}
	sep := ", "
	if o["month"] == "long" && o["day"] != "" && o["year"] != "" {
		sep = " at "
	}
	return join(date, clk, sep), nil
}

func firstSet(o map[string]string, fields []string) string {
	for _, f := range fields {
		if o[f] != "" {
			return f
		}
	}
	return ""
}

func join(a, b, sep string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + sep + b
}

// clock is the time of day: h:mm:ss AM or HH:mm:ss, the fields asked for.
func clock(t time.Time, o map[string]string, h12 bool) string {
	if o["hour"] == "" {
		return ""
	}
	h := t.Hour()
	var s string
	if h12 {
		h12h := h % 12
		if h12h == 0 {
			h12h = 12
		}
		s = strconv.Itoa(h12h)
		if o["hour"] == "2-digit" {
			s = fmt.Sprintf("%02d", h12h)
		}
	} else {
		s = fmt.Sprintf("%02d", h)
	}
	if o["minute"] != "" {
		s += fmt.Sprintf(":%02d", t.Minute())
		if o["second"] != "" {
			s += fmt.Sprintf(":%02d", t.Second())
		}
	}
	if h12 {
		if h < 12 {
			s += " AM"
		} else {
			s += " PM"
		}
	}
	return s
}

// usDate is the date part in en-US.
func usDate(t time.Time, o map[string]string, fn string) (string, error) {
	weekday := ""
	switch o["weekday"] {
	case "long":
		weekday = t.Weekday().String()
	case "short":
		weekday = t.Weekday().String()[:3]
	case "":
	default:
		return "", refuse("%s: weekday %q is not supported in workflow scripts", fn, o["weekday"])
	}
	year := ""
	switch o["year"] {
	case "numeric":
		year = strconv.Itoa(t.Year())
	case "2-digit":
		year = fmt.Sprintf("%02d", t.Year()%100)
	}
	day := ""
	switch o["day"] {
	case "numeric":
		day = strconv.Itoa(t.Day())
	case "2-digit":
		day = fmt.Sprintf("%02d", t.Day())
	}
	var date string
	switch m := o["month"]; m {
	case "numeric", "2-digit":
		month := strconv.Itoa(int(t.Month()))
		if m == "2-digit" {
			month = fmt.Sprintf("%02d", int(t.Month()))
		}
		parts := []string{month}
		for _, p := range []string{day, year} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		date = strings.Join(parts, "/")
	case "long", "short":
		month := t.Month().String()
		if m == "short" {
			month = month[:3]
		}
		date = month
		if day != "" {
			date += " " + day
		}
		if year != "" {
			if day != "" {
				date += ","
			}
			date += " " + year
		}
	case "":
		switch {
		case day != "" && year != "":
			return "", refuse("%s: day and year without month is not supported in workflow scripts", fn)
		default:
			date = day + year
		}
	default:
		return "", refuse("%s: month %q is not supported in workflow scripts", fn, m)
	}
	return join(weekday, date, ", "), nil
}

// styled formats dateStyle and timeStyle in en-US.
func styled(t time.Time, dateStyle, timeStyle, fn string) (string, error) {
	var date, clk string
	switch dateStyle {
	case "full":
		date, _ = usDate(t, map[string]string{"weekday": "long", "month": "long", "day": "numeric", "year": "numeric"}, fn)
	case "long":
		date, _ = usDate(t, map[string]string{"month": "long", "day": "numeric", "year": "numeric"}, fn)
	case "medium":
		date, _ = usDate(t, map[string]string{"month": "short", "day": "numeric", "year": "numeric"}, fn)
	case "short":
		date, _ = usDate(t, map[string]string{"month": "numeric", "day": "numeric", "year": "2-digit"}, fn)
	case "":
	default:
		return "", &intlRefusal{msg: "Value " + dateStyle + " out of range for Intl.DateTimeFormat options property dateStyle"}
	}
	switch timeStyle {
	case "medium":
		clk = clock(t, map[string]string{"hour": "numeric", "minute": "2-digit", "second": "2-digit"}, true)
	case "short":
		clk = clock(t, map[string]string{"hour": "numeric", "minute": "2-digit"}, true)
	case "full", "long":
		return "", refuse("%s: timeStyle %q (with the time zone's name) is not supported in workflow scripts", fn, timeStyle)
	case "":
	default:
		return "", &intlRefusal{msg: "Value " + timeStyle + " out of range for Intl.DateTimeFormat options property timeStyle"}
	}
	sep := ", "
	if dateStyle == "full" || dateStyle == "long" {
		sep = " at "
	}
	return join(date, clk, sep), nil
}

// --- collation ---

// newCollator is Intl.Collator(locale, options) over x/text's collate:
// its compare function and resolved options.
func newCollator(tag string, opts map[string]any) (func(a, b string) int, map[string]any, error) {
	lt, err := locale(tag)
	if err != nil {
		return nil, nil, err
	}
	sensitivity, numeric := "variant", false
	var copts []collate.Option
	for k, v := range opts {
		if v == nil {
			continue
		}
		switch k {
		case "numeric":
			numeric, _ = v.(bool)
		case "sensitivity":
			sensitivity = fmt.Sprint(v)
		case "usage":
			if v != "sort" {
				return nil, nil, refuse("Intl.Collator: usage %q is not supported in workflow scripts", v)
			}
		case "localeMatcher":
		case "ignorePunctuation":
			if v != false {
				return nil, nil, refuse("Intl.Collator: ignorePunctuation is not supported in workflow scripts")
			}
		case "caseFirst":
			if v != "false" {
				return nil, nil, refuse("Intl.Collator: caseFirst %q is not supported in workflow scripts", v)
			}
		default:
			return nil, nil, refuse("Intl.Collator: the option %s is not supported in workflow scripts", k)
		}
	}
	if numeric {
		copts = append(copts, collate.Numeric)
	}
	resolved := map[string]any{"locale": lt.String(), "usage": "sort", "sensitivity": sensitivity, "ignorePunctuation": false,
		"collation": "default", "numeric": numeric, "caseFirst": "false"}
	full := collate.New(lt, copts...)
	base := collate.New(lt, append(copts, collate.IgnoreCase, collate.IgnoreDiacritics, collate.IgnoreWidth)...)
	switch sensitivity {
	case "base":
		return base.CompareString, resolved, nil
	case "accent":
		accent := collate.New(lt, append(copts, collate.IgnoreCase, collate.IgnoreWidth)...)
		return accent.CompareString, resolved, nil
	case "case":
		// Letters and case count, accents do not: x/text cannot ignore
		// the secondary level alone, so the letters decide first, then
		// the strings without their accents.
		return func(a, b string) int {
			if c := base.CompareString(a, b); c != 0 {
				return c
			}
			return full.CompareString(stripMarks(a), stripMarks(b))
		}, resolved, nil
	case "variant":
		return full.CompareString, resolved, nil
	}
	return nil, nil, &intlRefusal{msg: "Value " + sensitivity + " out of range for Intl.Collator options property sensitivity"}
}

// stripMarks removes the combining marks of s, decomposed.
func stripMarks(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// --- plural rules ---

// pluralForm is Intl.PluralRules(locale, {type}).select(n), by CLDR's
// rules in x/text.
func pluralForm(tag, kind string, n float64) (string, error) {
	lt, err := locale(tag)
	if err != nil {
		return "", err
	}
	rules := plural.Cardinal
	switch kind {
	case "", "undefined", "cardinal":
	case "ordinal":
		rules = plural.Ordinal
	default:
		return "", &intlRefusal{msg: "Value " + kind + " out of range for Intl.PluralRules options property type"}
	}
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return "other", nil
	}
	// The operands of the number as JavaScript prints it.
	s := strconv.FormatFloat(math.Abs(n), 'f', -1, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	i, _ := strconv.Atoi(intPart)
	if len(intPart) > 9 {
		i = 1_000_000_000 + i%1_000_000_000 // keeps the rules' modulo tests
	}
	v := len(frac)
	f, _ := strconv.Atoi(frac)
	trimmed := strings.TrimRight(frac, "0")
	w := len(trimmed)
	tt, _ := strconv.Atoi(trimmed)
	switch rules.MatchPlural(lt, i, v, w, f, tt) {
	case plural.Zero:
		return "zero", nil
	case plural.One:
		return "one", nil
	case plural.Two:
		return "two", nil
	case plural.Few:
		return "few", nil
	case plural.Many:
		return "many", nil
	}
	return "other", nil
}

// --- segmentation ---

// segment splits s as Intl.Segmenter does, by UAX #29: each segment as
// [text, index in UTF-16 code units, isWordLike (words only)].
func segment(s, granularity string) ([][]any, error) {
	var out [][]any
	units := 0
	add := func(seg string) {
		row := []any{seg, units}
		if granularity == "word" {
			row = append(row, wordLike(seg))
		}
		out = append(out, row)
		units += len(utf16.Encode([]rune(seg)))
	}
	switch granularity {
	case "grapheme", "", "undefined":
		for it := graphemes.FromString(s); it.Next(); {
			add(it.Value())
		}
	case "word":
		for it := words.FromString(s); it.Next(); {
			add(it.Value())
		}
	case "sentence":
		for it := sentences.FromString(s); it.Next(); {
			add(it.Value())
		}
	default:
		return nil, &intlRefusal{msg: "Value " + granularity + " out of range for Intl.Segmenter options property granularity"}
	}
	return out, nil
}

// wordLike reports whether a word segment is a word (letters, digits or
// ideographs) rather than spaces or punctuation.
func wordLike(seg string) bool {
	for _, r := range seg {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Nl, r) {
			return true
		}
	}
	return false
}
