package main

import "testing"

// What a terminal shows: columns, not bytes or code points, and a
// character is never cut in half.
func TestCutWidthCountsColumns(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		width    int
		want     string
		columns  int // of in
	}{
		{"ASCII that fits", "review the diff", 15, "review the diff", 15},
		{"ASCII cut", "review the diff", 10, "review th…", 15},
		{"no room", "review", 0, "", 6},
		{"room for the ellipsis only", "review", 1, "…", 6},
		{"Latin with accents that fits", "café crème", 10, "café crème", 10},
		{"decomposed accent stays with its letter", "cafe\u0301s", 4, "caf…", 5},
		{"CJK is two columns", "日本語のテスト", 14, "日本語のテスト", 14},
		{"CJK cut on a character", "日本語のテスト", 6, "日本…", 14},
		{"CJK cut where a wide one would overflow", "日本語のテスト", 7, "日本語…", 14},
		{"arrow and ellipsis are one column", "a → b … c", 9, "a → b … c", 9},
		{"an emoji sequence is one character of two columns", "👩‍💻 codes", 8, "👩‍💻 codes", 8},
		{"an emoji sequence is not split", "👩‍💻👩‍💻👩‍💻", 5, "👩‍💻👩‍💻…", 6},
		{"flags are one character", "🇫🇷🇩🇪", 3, "🇫🇷…", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textWidth(tc.in); got != tc.columns {
				t.Errorf("textWidth(%q) = %d, want %d", tc.in, got, tc.columns)
			}
			got := cutWidth(tc.in, tc.width)
			if got != tc.want {
				t.Errorf("cutWidth(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
			}
			if w := textWidth(got); w > max(tc.width, 0) {
				t.Errorf("cutWidth(%q, %d) takes %d columns", tc.in, tc.width, w)
			}
		})
	}
}

// The first text with a character outside Latin used to cost a 2.2 MB
// table built in 9 ms (go-runewidth); measuring must not make memory or
// time jump.
func BenchmarkTextWidth(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"ascii", "parallel task 481 - codex - 12.3s"},
		{"latin", "parallel task 481 · codex · 12.3s"},
		{"cjk", "レビュー → 完了 · codex · 12.3s"},
	} {
		s := tc.s
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_ = cutWidth(s, 20)
			}
		})
	}
}
