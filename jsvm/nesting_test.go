package jsvm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/lang"
)

// nestingOf is how deeply text nests, as sourceNesting measures it.
func nestingOf(text string) int {
	lo, hi := 0, 1<<22
	for lo < hi {
		mid := (lo + hi) / 2
		if sourceNesting(text, mid) < 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// deepConstructs make source that nests n levels, each in one of the ways
// that took the process down with a stack overflow in goja's parser or
// compiler at a few hundred thousand levels.
var deepConstructs = map[string]func(n int) string{
	"arrays":      func(n int) string { return "return " + strings.Repeat("[", n) + strings.Repeat("]", n) },
	"parens":      func(n int) string { return "return " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) },
	"objects":     func(n int) string { return "return " + strings.Repeat("{a:", n) + "1" + strings.Repeat("}", n) },
	"blocks":      func(n int) string { return strings.Repeat("{", n) + strings.Repeat("}", n) + "\nreturn 1" },
	"templates":   func(n int) string { return "return " + strings.Repeat("`${", n) + "1" + strings.Repeat("}`", n) },
	"not":         func(n int) string { return "return " + strings.Repeat("!", n) + "true" },
	"minus":       func(n int) string { return "return " + strings.Repeat("- ", n) + "1" },
	"typeof":      func(n int) string { return "return " + strings.Repeat("typeof ", n) + "1" },
	"new":         func(n int) string { return "return " + strings.Repeat("new ", n) + "Object" },
	"assignments": func(n int) string { return "let a\nreturn " + strings.Repeat("a = ", n) + "1" },
	"conditional": func(n int) string { return "return " + strings.Repeat("false ? 1 : ", n) + "2" },
	"arrows":      func(n int) string { return "return (" + strings.Repeat("x => ", n) + "1)" },
	"sums":        func(n int) string { return "const a = 1\nreturn " + strings.Repeat("a + ", n) + "a" },
	"members":     func(n int) string { return "const a = {}\na.a = a\nreturn a" + strings.Repeat(".a", n) + " === a" },
	"calls":       func(n int) string { return "const f = () => f\nreturn f" + strings.Repeat("()", n) + " === f" },
	"ifs":         func(n int) string { return "let x = 1\n" + strings.Repeat("if (x) ", n) + "x++\nreturn x" },
	"elseifs": func(n int) string {
		return "let x = 0\nif (x) {} " + strings.Repeat("else if (x) {} ", n) + "\nreturn 1"
	},
	"regexp groups": func(n int) string { return "return /" + strings.Repeat("(", n) + strings.Repeat(")", n) + "/.test('')" },
}

// Every construct at 600,000 levels (a 1.2 MB script) is refused before
// goja parses it, where it goes over the limit, naming the limit and how to
// raise it; at a nesting just within the highest limit, goja parses and
// compiles each without trouble.
func TestSourceNestingLimit(t *testing.T) {
	for name, make := range deepConstructs {
		t.Run(name, func(t *testing.T) {
			src := "export const meta = { name: 'deep', description: 'deep' }\n" + make(600000) + "\n"
			_, err := New().Load(lang.Source{Path: "deep.workflow.js", Text: []byte(src)})
			var le *lang.Error
			if !errors.As(err, &le) || !errors.Is(err, lang.ErrTooDeep) || le.Line < 2 || le.Column == 0 ||
				!strings.Contains(le.Message, "nests more than 1000 levels deep here") || !strings.Contains(le.Hint, "--max-nesting") {
				t.Fatalf("Load = %v", err)
			}
			n := lang.MaxNestingCeiling
			for nestingOf(make(n)) > lang.MaxNestingCeiling-10 {
				n = n * 9 / 10
			}
			src = "export const meta = { name: 'deep', description: 'deep' }\n" + make(n) + "\n"
			_, err = NewWithConfig(Config{MaxNesting: lang.MaxNestingCeiling}).Load(lang.Source{Path: "deep.workflow.js", Text: []byte(src)})
			if errors.Is(err, lang.ErrTooDeep) {
				t.Errorf("%d levels, within the limit, refused: %v", n, err)
			}
		})
	}
}

// The measure counts what nests, and only that: brackets in strings,
// templates, comments and regular expressions do not count, nor do
// statements one after another, nor operators separated by commas.
func TestSourceNestingMeasure(t *testing.T) {
	flat := strings.Repeat("[", 5000)
	for _, tt := range []struct {
		src  string
		want int
	}{
		{"const a = '" + flat + "', b = \"" + flat + "\"", 1},
		{"const a = `" + flat + "${ [1] }" + flat + "`", 3},
		{"// " + flat + "\n/* " + flat + " */ const a = 1", 1},
		{"const r = /[[]" + strings.Repeat("\\[", 5000) + "/g", 3}, // a pattern's brackets count while it lasts
		{strings.Repeat("x = a + b\n", 10000), 2},
		{strings.Repeat("f(a, b);", 10000), 2},
		{"f(" + strings.Repeat("a + b, ", 10000) + "c)", 3},
		{"const o = {" + strings.Repeat("k: [1, 2], ", 10000) + "}", 3},
		{"const x = a\n/ 2 / [1]", 4}, // a division that continues the line before
		// A regular expression after a control statement's ): its ( do not
		// stay open.
		{"if (x) /[(((((]/.test(y); [[[[[[[[[[1]]]]]]]]]]", 10},
		{"const f = function () {} / [[[1]]]", 5}, // a division after a function's body
		{strings.Repeat("if (a) { b() }\n", 1000), 4},
		{"if (a) {} " + strings.Repeat("else if (a) {} ", 100), 102},
	} {
		if got := nestingOf(tt.src); got != tt.want {
			t.Errorf("nesting of %.60q = %d, want %d", tt.src, got, tt.want)
		}
	}
}

// Real scripts nest a few dozen levels: the examples and this package's
// test scripts stay far below the limit.
func TestSourceNestingOfRealScripts(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.js")
	more, _ := filepath.Glob("testdata/*.js")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := nestingOf(string(b)); n > 60 {
			t.Errorf("%s nests %d levels", f, n)
		}
	}
}
