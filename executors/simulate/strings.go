package simulate

import (
	"unicode/utf8"
)

// formatExample returns the string written for a format. A model asked for
// a date gives a date; these are plausible fixed ones. uuid is missing
// because it is drawn, so that ids differ.
func formatExample(format string) (string, bool) {
	switch format {
	case "date-time":
		return "2024-01-15T09:30:00Z", true
	case "date":
		return "2024-01-15", true
	case "time":
		return "09:30:00Z", true
	case "duration":
		return "P1DT2H", true
	case "email", "idn-email":
		return "simulated@example.com", true
	case "hostname", "idn-hostname":
		return "example.com", true
	case "ipv4":
		return "192.0.2.1", true
	case "ipv6":
		return "2001:db8::1", true
	case "uri", "iri", "uri-reference", "iri-reference":
		return "https://example.com/simulated", true
	case "uri-template":
		return "https://example.com/{id}", true
	case "json-pointer":
		return "/simulated", true
	case "relative-json-pointer":
		return "0/simulated", true
	case "regex":
		return "^simulated$", true
	}
	return "", false
}

const hexDigits = "0123456789abcdef"

// string appends a string: a format's example, a match of the pattern, or
// the name of what it is a value of with a drawn suffix, such as
// "title-3fa2b1", so that answers to different prompts differ.
//
// The characters are written straight after the opening quote, and escaped
// afterwards in the rare case they need it, so that no string needs a
// buffer of its own.
func (w *writer) string(dst []byte, n *node, name string) []byte {
	quote := len(dst)
	dst = append(dst, '"')
	text := len(dst)
	switch example, isFormat := formatExample(n.format); {
	case isFormat:
		dst = append(dst, example...)
	case n.format == "uuid":
		dst = w.uuid(dst)
	case n.pattern != nil:
		var ok bool
		if dst, ok = w.matchPattern(dst, n); ok {
			return closeQuote(dst, quote)
		}
		dst = w.named(dst[:text], name)
	default:
		dst = w.named(dst, name)
	}
	dst = w.fitLength(dst, text, n)
	return closeQuote(dst, quote)
}

// closeQuote ends the string opened by the quote at dst[quote], escaping
// its characters if they need it. Only then does it allocate.
func closeQuote(dst []byte, quote int) []byte {
	text := dst[quote+1:]
	for _, c := range text {
		if c < 0x20 || c == '"' || c == '\\' {
			return appendQuoted(dst[:quote], string(text))
		}
	}
	if !utf8.Valid(text) {
		return appendQuoted(dst[:quote], string(text))
	}
	return append(dst, '"')
}

// named appends name and a drawn suffix.
func (w *writer) named(dst []byte, name string) []byte {
	dst = append(dst, name...)
	dst = append(dst, '-')
	return w.appendHex(dst, 6)
}

// appendHex appends count drawn hex digits.
func (w *writer) appendHex(dst []byte, count int) []byte {
	for range count {
		dst = append(dst, hexDigits[w.intn(16)])
	}
	return dst
}

// uuid appends a drawn version 4 UUID.
func (w *writer) uuid(dst []byte) []byte {
	for i, group := range [...]int{8, 4, 4, 4, 12} {
		if i > 0 {
			dst = append(dst, '-')
		}
		start := len(dst)
		dst = w.appendHex(dst, group)
		switch i {
		case 2:
			dst[start] = '4' // the version
		case 3:
			dst[start] = "89ab"[w.intn(4)] // the variant
		}
	}
	return dst
}

// fitLength pads or cuts the text that begins at dst[text] to the schema's
// length bounds, which count characters, not bytes.
func (w *writer) fitLength(dst []byte, text int, n *node) []byte {
	length := utf8.RuneCount(dst[text:])
	for ; length < n.minLength; length++ {
		dst = append(dst, hexDigits[w.intn(16)])
	}
	if n.maxLength >= 0 && length > n.maxLength {
		cut := text
		for range n.maxLength {
			_, size := utf8.DecodeRune(dst[cut:])
			cut += size
		}
		dst = dst[:cut]
	}
	return dst
}
