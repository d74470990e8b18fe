package jsvm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/lang"
)

const okMeta = "export const meta = { name: 'n', description: 'd' }\n"

func load(src string) (lang.Script, error) {
	return New().Load(lang.Source{Path: "t.workflow.js", Text: []byte(src)})
}

func TestLoadMeta(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want lang.Meta
	}{
		{"plain", okMeta, lang.Meta{Name: "n", Description: "d"}},
		{"comments before", "// comments before meta are fine\n\n  /* so is this */ " + okMeta, lang.Meta{Name: "n", Description: "d"}},
		{"quoted keys and trailing commas", `/* a block comment */
// a line comment
export const meta = {
  "name": 'review',
  'description': "Review things",
  whenToUse: 'when asked',
  phases: [{ "title": 'Review', detail: 'd', model: 'haiku', }, 'Verify',],
}
`, lang.Meta{Name: "review", Description: "Review things", WhenToUse: "when asked",
			Phases: []lang.Phase{{Title: "Review", Detail: "d", Model: "haiku"}, {Title: "Verify"}}}},
		{"string concatenation", "export const meta = { name: 'a' + 'b', description: 'one, ' +\n  'two, ' + `three` }\n",
			lang.Meta{Name: "ab", Description: "one, two, three"}},
		{"template without interpolation", "export const meta = { name: `n`, description: `multi\nline` }\n",
			lang.Meta{Name: "n", Description: "multi\nline"}},
		{"unknown keys of every literal kind", `export const meta = { name: 'n', description: 'd',
  version: -1.5, count: +2, sum: 1 + 2, on: true, off: false, none: null, gone: undefined, list: [1, 'x', [], {}], 7: 'seven' }
`, lang.Meta{Name: "n", Description: "d"}},
		{"null optional fields", "export const meta = { name: 'n', description: 'd', whenToUse: null, phases: null }\n",
			lang.Meta{Name: "n", Description: "d"}},
		{"later key wins", "export const meta = { name: 'a', name: 'b', description: 'd' }\n", lang.Meta{Name: "b", Description: "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := load(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Meta(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("meta = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // "line:col: message" as a prefix of the error after the file name
	}{
		// Meta that is not a pure literal.
		{"call", "export const meta = {\n  name: 'n',\n  description: make('x'),\n}\n",
			"3:16: meta must be a pure literal: found a function call (meta is read without running the script; write the value out)"},
		{"variable", "export const meta = {\n  name: 'n',\n  description: DESC,\n}\n", "3:16: meta must be a pure literal: found a variable (DESC)"},
		{"spread", "export const meta = {\n  ...base,\n  name: 'n',\n}\n", "2:3: meta must be a pure literal: found a spread (...)"},
		{"array spread", "export const meta = { name: 'n', description: 'd', phases: [ ...ps ] }\n", "1:62: meta must be a pure literal: found a spread (...)"},
		{"computed key", "export const meta = {\n  [k]: 1,\n}\n", "2:3: meta must be a pure literal: found a computed key"},
		{"method", "export const meta = {\n  go() {},\n}\n", "2:3: meta must be a pure literal: found a method"},
		{"getter", "export const meta = {\n  get name() { return 'n' },\n}\n", "2:7: meta must be a pure literal: found a method"},
		{"shorthand", "export const meta = {\n  name,\n}\n", "2:3: meta must be a pure literal: found a shorthand property (name reads a variable)"},
		{"interpolation", "export const meta = {\n  name: 'n',\n  description: `x ${y}`,\n}\n", "3:19: meta must be a pure literal: found template interpolation (${...})"},
		{"function", "export const meta = {\n  name: 'n',\n  description: () => 'x',\n}\n", "3:16: meta must be a pure literal: found a function"},
		{"new", "export const meta = {\n  name: 'n',\n  description: new Date(0),\n}\n", "3:16: meta must be a pure literal: found a constructor call (new)"},
		{"mixed concatenation", "export const meta = {\n  name: 'n',\n  description: 'v' + 2,\n}\n", "3:16: meta must be a pure literal: found + between values that are not both strings"},
		{"property access", "export const meta = {\n  name: 'n',\n  description: x.y,\n}\n", "3:16: meta must be a pure literal: found a property access"},
		{"characters not bytes", "export const meta = { name: 'héé', description: f() }\n", "1:49: meta must be a pure literal: found a function call"},

		// Meta that is a literal but not a valid meta.
		{"no name", "export const meta = { description: 'd' }\n", "1:21: meta.name must be a non-empty string"},
		{"empty name", "export const meta = { name: ' ', description: 'd' }\n", "1:29: meta.name must be a non-empty string"},
		{"name not string", "export const meta = { name: 1, description: 'd' }\n", "1:29: meta.name must be a non-empty string"},
		{"no description", "export const meta = { name: 'n' }\n", "1:21: meta.description must be a non-empty string"},
		{"whenToUse not string", "export const meta = { name: 'n', description: 'd', whenToUse: [] }\n", "1:63: meta.whenToUse must be a string"},
		{"phases not list", "export const meta = { name: 'n', description: 'd', phases: 'x' }\n", "1:60: meta.phases must be a list"},
		{"phase without title", "export const meta = { name: 'n', description: 'd', phases: [{ detail: 'x' }] }\n", "1:61: meta.phases[0].title must be a non-empty string"},
		{"phase of wrong kind", "export const meta = { name: 'n', description: 'd', phases: ['a', 3] }\n", "1:66: meta.phases[1] must be an object or a string"},
		{"no meta", "const x = 1\n", "1:1: the script has no meta (start the file with export const meta = { name: ..., description: ... })"},
		{"empty file", "", "1:1: the script has no meta"},
		{"meta not exported", "const meta = { name: 'n', description: 'd' }\n", "1:1: the script has no meta"},
		{"meta with let", "export let meta = { name: 'n', description: 'd' }\n", "1:1: the script has no meta"},
		{"meta not an object", "export const meta = 'review'\n", "1:21: meta must be an object literal"},
		{"meta not first", "const x = 1\nexport const meta = { name: 'n', description: 'd' }\n", "2:1: meta must be the first statement of the script (move it to the top of the file)"},

		// Modules.
		{"import", okMeta + "import fs from 'fs'\n", "2:1: import is not supported in workflow scripts (inline the helper code or call workflow())"},
		{"dynamic import", okMeta + "const m = await import('x')\n", "2:17: import is not supported in workflow scripts"},
		{"require", okMeta + "const fs = require('fs')\n", "2:12: require() is not supported in workflow scripts (inline the helper code or call workflow())"},
		{"require in a function", okMeta + "function f() {\n  return [1].map(() => require('x'))\n}\n", "3:24: require() is not supported"},
		{"second export", okMeta + "export const x = 1\n", "2:1: export is only allowed on meta (remove the export keyword; only meta is exported)"},
		{"export default", okMeta + "export default 1\n", "2:1: export is only allowed on meta"},
		{"export on line 1", "export const meta = { name: 'n', description: 'd' }; export const x = 1\n", "1:54: export is only allowed on meta"},

		// TypeScript.
		{"ts annotation", okMeta + "const x: number = 1\n", "2:8: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a type annotation"},
		{"ts parameter", okMeta + "function f(a: string) {}\n", "2:13: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a type annotation"},
		{"ts return type", okMeta + "function f(a): string {}\n", "2:14: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a type annotation"},
		{"ts arrow parameter", okMeta + "const f = (a: number) => a\n", "2:13: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a type annotation"},
		{"ts interface", okMeta + "interface Foo { a: string }\n", "2:11: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found an interface"},
		{"ts type alias", okMeta + "type Foo = { a: string }\n", "2:6: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a type alias"},
		{"ts enum", okMeta + "enum E { A, B }\n", "2:1: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found an enum"},
		{"ts as", okMeta + "const y = x as string\n", "2:13: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a type assertion (as)"},
		{"ts generics", okMeta + "function f<T>(a) {}\n", "2:11: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found type parameters (<...>)"},
		{"ts non-null", okMeta + "const q = a!.b\n", "2:12: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a non-null assertion (!)"},
		{"ts modifier", okMeta + "class A { private x = 1 }\n", "2:19: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found an access modifier (private)"},

		// What goja cannot run, though Node can.
		{"async generator", okMeta + "async function* pages() {\n  yield 1\n}\n", "2:1: async generators (async function*, async *method()) are not supported: goja, the JavaScript engine of this runtime, cannot run them (build an array"},
		{"async generator expression", okMeta + "const g = async function* () { yield 1 }\n", "2:11: async generators (async function*, async *method()) are not supported"},
		{"async generator method", okMeta + "const o = {\n  async *items() { yield 1 },\n}\n", "3:10: async generators (async function*, async *method()) are not supported"},
		{"async generator in a class", okMeta + "class Feed { async *items() { yield 1 } }\n", "2:14: async generators (async function*, async *method()) are not supported"},
		{"unknown unicode property", okMeta + "const words = text.match(/\\p{Nope}+/gu)\n", `2:26: Invalid regular expression: /\p{Nope}+/gu: Invalid property name "Nope"`},
		{"emoji property", okMeta + "const e = /\\p{Emoji}/u\n", `2:11: Invalid regular expression: /\p{Emoji}/u: \p{Emoji} is not supported: this runtime has no emoji property tables`},
		{"await in a function that is not async", okMeta + "function review(file) {\n  const r = await agent('review ' + file)\n  return r\n}\n",
			"3:13: SyntaxError: await is only valid in async functions and at the top level of the script: the function around it is not async (make that function async"},
		{"await in an arrow that is not async", okMeta + "const xs = [1].map(x => { return await agent('x' + x) })\n",
			"2:34: SyntaxError: await is only valid in async functions"},
		{"await of a member in a callback", okMeta + "items.forEach(function (i) { await agent.call(null, i) })\n",
			"2:30: SyntaxError: await is only valid in async functions"},
		{"for await", okMeta + "for await (const x of feed()) log(x)\n", "2:5: for await...of is not supported: goja, the JavaScript engine of this runtime, cannot run it (loop with for (const p of promises)"},

		// Plain syntax errors.
		{"unterminated string", okMeta + "const s = 'abc\n", "2:11: SyntaxError: Unexpected token ILLEGAL"},
		{"unexpected end", okMeta + "foo(\n", "3:1: SyntaxError: unexpected end of the script"},
		{"unexpected end without newline", okMeta + "foo(", "2:5: SyntaxError: unexpected end of the script"},
		{"stray brace", okMeta + "foo()\n}\nbar()\n", "3:1: SyntaxError: unexpected }"},
		{"bad token", okMeta + "const x = 1 +* 2\n", "2:14: SyntaxError: Unexpected token *"},
		{"error on line 1", "export const meta = { name: 'n', description: 'd' }; const x = ;\n", "1:64: SyntaxError: Unexpected token ;"},
		{"duplicate declaration", okMeta + "let a = 1\nlet a = 2\n", "3:5: SyntaxError: Identifier 'a' has already been declared"},

		// Hidden characters.
		{"control character", okMeta + "const a = 'x\x07'\n", "2:13: the script contains the control character U+0007"},
		{"bidi override", okMeta + "const a = 'é\u202e'\n", "2:13: the script contains the bidirectional control character U+202E"},
		{"not utf-8", okMeta + "const a = '\xff'\n", "2:12: the script is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(tt.src)
			var le *lang.Error
			if !errors.As(err, &le) {
				t.Fatalf("error = %v (%T), want a *lang.Error", err, err)
			}
			if !le.Static || !errors.Is(err, lang.ErrBadScript) {
				t.Errorf("error is not static: %+v", le)
			}
			got := strings.TrimPrefix(err.Error(), "t.workflow.js:")
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("error =\n  %s\nwant prefix\n  %s", got, tt.want)
			}
			if pos := fmt.Sprintf("%d:%d:", le.Line, le.Column); !strings.HasPrefix(tt.want, pos) {
				t.Errorf("position = %s, want it in %s", pos, tt.want)
			}
		})
	}
}

func TestLoadScript(t *testing.T) {
	src := okMeta + "return 1\n"
	s, err := load(src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != "t.workflow.js" || string(s.Text()) != src || !reflect.DeepEqual(s.Files(), []string{"t.workflow.js"}) {
		t.Errorf("path %q, text %q, files %q", s.Path(), s.Text(), s.Files())
	}
	if sum := sha256.Sum256([]byte(src)); s.Hash() != hex.EncodeToString(sum[:]) {
		t.Errorf("hash %q, want the hex sha256 of the source", s.Hash())
	}
	s2, _ := load(src + " ")
	if s2.Hash() == s.Hash() {
		t.Error("an edited script kept its hash")
	}
	h := New()
	if h.Language() != "javascript" || !reflect.DeepEqual(h.Extensions(), []string{".workflow.js", ".js", ".mjs"}) {
		t.Errorf("language %q, extensions %q", h.Language(), h.Extensions())
	}
	reg := lang.NewRegistry(h)
	if got, ok := reg.HostFor("x/review.workflow.js"); !ok || got != h {
		t.Error("the registry does not pick the host for .workflow.js")
	}
}

// strayBrace must not mistake the braces of strings, templates, comments
// and regular expressions for code.
func TestStrayBraceIgnoresNonCode(t *testing.T) {
	valid := []string{
		"const a = '}'; const b = \"}\"",
		"// }\n/* } */ const c = 1",
		"const t = `}${ {a: 1}.a }}` + `${`${'}'}`}`",
		"const r = /}/g.test(x); const d = a / b / c",
		"if (x) { y({ z: [1, 2] }) }",
		"const s = 'it\\'s }'",
	}
	for _, src := range valid {
		if off := strayBrace(src); off >= 0 {
			t.Errorf("strayBrace(%q) = %d, want -1", src, off)
		}
		if _, err := load(okMeta + src + "\n"); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
	if off := strayBrace("if (x) { y() } }"); off != 15 {
		t.Errorf("strayBrace found the stray } at %d, want 15", off)
	}
}

// Columns count characters, on long lines too, where the position of a
// character far along the line is read from marks.
func TestSourceColumnsOnLongLines(t *testing.T) {
	line := strings.Repeat("aé€😀", 300) // 1, 2, 3 and 4 bytes
	text := "x\n" + line + "\n" + strings.Repeat("b", 2000)
	s := newSource("t.js", text)
	for off := 0; off < len(text); off++ {
		if !utf8.RuneStart(text[off]) {
			continue
		}
		gotLine, gotCol := s.at(off)
		start := strings.LastIndexByte(text[:off], '\n') + 1
		wantLine := strings.Count(text[:off], "\n") + 1
		wantCol := utf8.RuneCountInString(text[start:off]) + 1
		if gotLine != wantLine || gotCol != wantCol {
			t.Fatalf("at(%d) = %d:%d, want %d:%d", off, gotLine, gotCol, wantLine, wantCol)
		}
	}
}
