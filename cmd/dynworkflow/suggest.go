package main

import (
	"slices"
	"strings"
)

// suggestions returns the candidates a mistyped word was probably meant
// to be, best first: those it is a prefix of, or that it is a prefix of,
// and those within a small edit distance (a third of the word's length,
// at least 1, at most 3). A transposition counts as one edit, so
// "--concurency" finds "--concurrency" and "rnu" finds "run".
func suggestions(word string, candidates []string) []string {
	if word == "" {
		return nil
	}
	type scored struct {
		name string
		d    int
	}
	limit := min(max(len([]rune(word))/3, 1), 3)
	lw := strings.ToLower(word)
	var found []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		switch {
		case lc == lw:
			continue
		case len(lw) >= 3 && (strings.HasPrefix(lc, lw) || strings.HasPrefix(lw, lc)):
			found = append(found, scored{c, 0})
		default:
			if d := editDistance(lw, lc); d <= limit {
				found = append(found, scored{c, d})
			}
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return a.d - b.d })
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, f.name)
	}
	return out
}

// didYouMean renders suggestions as "; did you mean X?" (or "X or Y"), or
// "" when there are none. At most three are named.
func didYouMean(word string, candidates []string) string {
	s := suggestions(word, candidates)
	if len(s) == 0 {
		return ""
	}
	if len(s) > 3 {
		s = s[:3]
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of two adjacent
// runes each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the one before the previous is needed for transpositions.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
