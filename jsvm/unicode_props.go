//lint:file-ignore ST1005 these errors become JavaScript exceptions, whose messages are Node's

package jsvm

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// goja compiles a Unicode property escape (\p{L}, \P{Script=Greek}, under
// the u or v flag) into a pattern that matches the text "p{L}", where Node
// matches the property: new RegExp('[^\\p{L}\\p{N}]+', 'gu') turned every
// slug into "-". Before a pattern reaches goja, each escape is spelled out
// as the code point ranges of the property, from Go's unicode tables:
// inside a class as ranges, outside one as a class of them. A name the
// tables do not have is a SyntaxError that names it, as in Node for a name
// it does not know. The pattern's source shows the ranges.

// translateUnicodeProperties spells out the property escapes of pattern;
// flags decide whether there are any (without u or v, \p is a "p").
func translateUnicodeProperties(pattern, flags string) (string, error) {
	if !strings.ContainsAny(flags, "uv") || !strings.Contains(pattern, `\p{`) && !strings.Contains(pattern, `\P{`) {
		return pattern, nil
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			next := pattern[i+1]
			if (next == 'p' || next == 'P') && i+2 < len(pattern) && pattern[i+2] == '{' {
				end := strings.IndexByte(pattern[i+3:], '}')
				if end < 0 {
					return "", fmt.Errorf("Invalid regular expression: /%s/%s: Invalid property name", pattern, flags)
				}
				name := pattern[i+3 : i+3+end]
				table, err := unicodeProperty(name)
				if err != nil {
					return "", fmt.Errorf("Invalid regular expression: /%s/%s: %w", pattern, flags, err)
				}
				negated := next == 'P'
				switch {
				case inClass && negated:
					writeRanges(&b, complement(table))
				case inClass:
					writeRanges(&b, table)
				case negated:
					b.WriteString("[^")
					writeRanges(&b, table)
					b.WriteByte(']')
				default:
					b.WriteByte('[')
					writeRanges(&b, table)
					b.WriteByte(']')
				}
				i += 3 + end
				continue
			}
			b.WriteByte(c)
			b.WriteByte(next)
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// span is a range of code points, both ends included.
type span struct{ lo, hi rune }

func writeRanges(b *strings.Builder, spans []span) {
	for _, s := range spans {
		fmt.Fprintf(b, `\u{%X}`, s.lo)
		if s.hi != s.lo {
			fmt.Fprintf(b, `-\u{%X}`, s.hi)
		}
	}
}

// spansOf flattens range tables into sorted, merged spans.
func spansOf(tables ...*unicode.RangeTable) []span {
	var out []span
	for _, t := range tables {
		for _, r := range t.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				if r.Stride == 1 {
					out = append(out, span{rune(r.Lo), rune(r.Hi)})
					break
				}
				out = append(out, span{c, c})
			}
		}
		for _, r := range t.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				if r.Stride == 1 {
					out = append(out, span{rune(r.Lo), rune(r.Hi)})
					break
				}
				out = append(out, span{c, c})
			}
		}
	}
	return merge(out)
}

func merge(spans []span) []span {
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && s.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	return out
}

func complement(spans []span) []span {
	var out []span
	next := rune(0)
	for _, s := range spans {
		if s.lo > next {
			out = append(out, span{next, s.lo - 1})
		}
		next = s.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, span{next, unicode.MaxRune})
	}
	return out
}

// categoryNames are the long names of the general categories, and the
// groups JavaScript accepts beside Go's.
var categoryNames = map[string]string{
	"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
	"Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn",
	"Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd", "digit": "Nd",
	"Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
	"Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
	"Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
	"Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl",
	"Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs",
	"Private_Use": "Co", "Unassigned": "Cn",
}

// unicodeProperty returns the code points of the property name of a \p{}
// escape: a general category (short or long, with or without gc= or
// General_Category=), a script (Script= or sc=), or a binary property.
func unicodeProperty(name string) ([]span, error) {
	key, value, hasValue := strings.Cut(name, "=")
	if hasValue {
		switch key {
		case "General_Category", "gc":
			if s, ok := category(value); ok {
				return s, nil
			}
			return nil, fmt.Errorf("Invalid property name (no general category %q)", value)
		case "Script", "sc":
			if t, ok := unicode.Scripts[value]; ok {
				return spansOf(t), nil
			}
			return nil, fmt.Errorf("Invalid property name (no script %q in this runtime's tables; scripts go by their long names, as Script=Greek)", value)
		case "Script_Extensions", "scx":
			return nil, fmt.Errorf("\\p{%s} is not supported: this runtime has no Script_Extensions tables; use Script=%s, which leaves out characters shared between scripts", name, value)
		}
		return nil, fmt.Errorf("Invalid property name %q", name)
	}
	if s, ok := category(name); ok {
		return s, nil
	}
	switch name {
	case "Any":
		return []span{{0, unicode.MaxRune}}, nil
	case "ASCII":
		return []span{{0, 0x7F}}, nil
	case "Assigned":
		return spansOf(categoryTables()...), nil
	case "Alphabetic", "Alpha":
		return spansOf(unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl, unicode.Other_Alphabetic), nil
	case "Lowercase", "Lower":
		return spansOf(unicode.Ll, unicode.Other_Lowercase), nil
	case "Uppercase", "Upper":
		return spansOf(unicode.Lu, unicode.Other_Uppercase), nil
	case "White_Space", "space":
		return spansOf(unicode.White_Space), nil
	}
	if t, ok := unicode.Properties[name]; ok {
		return spansOf(t), nil
	}
	if strings.HasPrefix(name, "Emoji") || strings.HasPrefix(name, "Extended_Pictographic") {
		return nil, fmt.Errorf("\\p{%s} is not supported: this runtime has no emoji property tables; spell the ranges out, as in [\\u{1F300}-\\u{1FAFF}]", name)
	}
	return nil, fmt.Errorf("Invalid property name %q", name)
}

// categoryTables are every assigned general category.
func categoryTables() []*unicode.RangeTable {
	var out []*unicode.RangeTable
	for name, t := range unicode.Categories {
		if len(name) == 2 {
			out = append(out, t)
		}
	}
	return out
}

// category returns a general category by its short or long name.
func category(name string) ([]span, bool) {
	if short, ok := categoryNames[name]; ok {
		name = short
	}
	switch name {
	case "LC":
		return spansOf(unicode.Lu, unicode.Ll, unicode.Lt), true
	case "Cn":
		return complement(spansOf(categoryTables()...)), true
	case "C":
		return merge(append(spansOf(unicode.C), complement(spansOf(categoryTables()...))...)), true
	}
	if t, ok := unicode.Categories[name]; ok {
		return spansOf(t), true
	}
	return nil, false
}
