package simulate

import (
	"regexp/syntax"
	"unicode/utf8"
)

// patternTries is how many strings are drawn for a pattern before giving up
// on it and writing a plain string; the engine's validation then decides.
const patternTries = 4

// patternBudget is the length past which repetitions in a pattern are taken
// the fewest times, so that nested stars cannot grow strings without end.
const patternBudget = 64

// matchPattern appends a string that the schema's pattern matches and that
// fits its length bounds, reporting whether it found one. When it finds none,
// what it appended is to be discarded.
func (w *writer) matchPattern(dst []byte, n *node) ([]byte, bool) {
	text := len(dst)
	for range patternTries {
		dst = w.appendMatch(dst[:text], n.patternRE, text)
		length := utf8.RuneCount(dst[text:])
		if length >= n.minLength && (n.maxLength < 0 || length <= n.maxLength) && n.pattern.Match(dst[text:]) {
			return dst, true
		}
	}
	return dst, false
}

// appendMatch appends a string matched by re, drawing among alternatives,
// repetition counts and the characters of classes. It prefers printable
// ASCII, which is what a reader of a simulated answer expects. The string
// begins at dst[text].
func (w *writer) appendMatch(dst []byte, re *syntax.Regexp, text int) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			dst = utf8.AppendRune(dst, r)
		}
	case syntax.OpCharClass:
		dst = utf8.AppendRune(dst, w.classRune(re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		dst = append(dst, 'a'+byte(w.intn(26)))
	case syntax.OpCapture:
		dst = w.appendMatch(dst, re.Sub[0], text)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			dst = w.appendMatch(dst, sub, text)
		}
	case syntax.OpAlternate:
		dst = w.appendMatch(dst, re.Sub[w.intn(len(re.Sub))], text)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		least, most := repetitions(re)
		times := least
		if len(dst)-text < patternBudget {
			times += w.intn(most - least + 1)
		}
		for range times {
			dst = w.appendMatch(dst, re.Sub[0], text)
		}
	}
	// Anchors, word boundaries and empty matches add nothing.
	return dst
}

// repetitions returns the fewest and most times to repeat re's operand; an
// unbounded repetition is taken at most two more times than it must be.
func repetitions(re *syntax.Regexp) (least, most int) {
	switch re.Op {
	case syntax.OpStar:
		return 0, 2
	case syntax.OpPlus:
		return 1, 3
	case syntax.OpQuest:
		return 0, 1
	}
	if re.Max < 0 {
		return re.Min, re.Min + 2
	}
	return re.Min, min(re.Max, re.Min+2)
}

// classRune draws a rune from a character class, given as pairs of
// inclusive bounds. It draws among the class's printable ASCII characters
// when there are any, and otherwise takes the class's first character.
func (w *writer) classRune(ranges []rune) rune {
	const first, last = '!', '~' // printable ASCII, without the space
	printable := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		if lo, hi := max(ranges[i], first), min(ranges[i+1], last); lo <= hi {
			printable += int(hi-lo) + 1
		}
	}
	if printable == 0 {
		if len(ranges) == 0 {
			return 'a'
		}
		return ranges[0]
	}
	pick := rune(w.intn(printable))
	for i := 0; i+1 < len(ranges); i += 2 {
		if lo, hi := max(ranges[i], first), min(ranges[i+1], last); lo <= hi {
			if pick <= hi-lo {
				return lo + pick
			}
			pick -= hi - lo + 1
		}
	}
	return ranges[0]
}
