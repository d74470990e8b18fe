package jsvm

import "strings"

// TypeScript fails to parse as JavaScript. typeScript looks at the text
// where the parser stopped and names the TypeScript construct found there,
// or returns "" when the error looks like a plain JavaScript mistake.
func typeScript(text string, off int) string {
	before := strings.TrimRight(text[:off], " \t")
	word, prev := wordAt(text[off:]), lastWord(before)
	switch {
	case text[off] == ':' && before != "" && (prev != "" || strings.ContainsAny(before[len(before)-1:], ")]?")):
		// In JavaScript a colon follows a key, a label or a case; the parser
		// only stops at one after a name or a parameter list in TypeScript.
		return "a type annotation"
	case word == "as" || word == "satisfies":
		return "a type assertion (" + word + ")"
	case tsDeclarations[word] != "":
		return tsDeclarations[word]
	case tsDeclarations[prev] != "":
		return tsDeclarations[prev]
	case tsModifiers[prev]:
		return "an access modifier (" + prev + ")"
	case text[off] == '<' && prev != "":
		return "type parameters (<...>)"
	case text[off] == '!' && strings.HasPrefix(text[off+1:], "."):
		return "a non-null assertion (!)"
	}
	return ""
}

var (
	// tsDeclarations names the keywords that open a TypeScript declaration.
	tsDeclarations = map[string]string{
		"interface":  "an interface",
		"type":       "a type alias",
		"enum":       "an enum",
		"namespace":  "a namespace",
		"declare":    "a declare statement",
		"abstract":   "an abstract class",
		"implements": "an implements clause",
	}
	tsModifiers = map[string]bool{"public": true, "private": true, "protected": true, "readonly": true}
)

// wordAt returns the identifier at the start of s.
func wordAt(s string) string {
	n := 0
	for n < len(s) && isIdentByte(s[n]) {
		n++
	}
	return s[:n]
}

// lastWord returns the identifier that s ends with, blanks aside.
func lastWord(s string) string {
	s = strings.TrimRight(s, " \t")
	n := len(s)
	for n > 0 && isIdentByte(s[n-1]) {
		n--
	}
	return s[n:]
}
