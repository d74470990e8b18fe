package star

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynworkflow/dynworkflow/lang"
	"github.com/dynworkflow/dynworkflow/lang/langtest"
)

const limitsMeta = `meta = {"name": "limits", "description": "limits"}
`

// As in JavaScript: a result's NaN and infinities become null, with one
// warning naming where; a child's args hold null for them without one.
func TestResultNonFiniteBecomesNull(t *testing.T) {
	for _, tt := range []struct{ body, want, note string }{
		{`return float("nan")`, "null", "NaN at result"},
		{`return {"left": float("inf")}`, `{"left":null}`, "Infinity at result.left"},
		{`return [1, 2, -float("inf")]`, "[1,2,null]", "-Infinity at result[2]"},
		{`return {"stats": {"per call": [float("inf"), float("nan")]}}`, `{"stats":{"per call":[null,null]}}`,
			`Infinity at result.stats["per call"][0] (and 1 more)`},
	} {
		env := langtest.NewEnv()
		s := load(t, New(), "r.workflow.star", limitsMeta+"def main(args):\n    "+tt.body+"\n")
		got, err := runScript(t, s, env)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s = %s, %v; want %s", tt.body, got, err, tt.want)
		}
		logs := env.Logs()
		if len(logs) != 1 || !strings.HasPrefix(logs[0], "warn / ") || !strings.Contains(logs[0], "held "+tt.note+",") {
			t.Errorf("%s: logs = %q, want one warning naming %q", tt.body, logs, tt.note)
		}
	}
	env := langtest.NewEnv()
	s := load(t, New(), "c.workflow.star", limitsMeta+"def main(args):\n    workflow(\"child\", {\"n\": float(\"nan\")})\n")
	if _, err := runScript(t, s, env); err != nil {
		t.Fatal(err)
	}
	if got := string(env.Calls()[0].Args); got != `{"n":null}` || len(env.Logs()) != 0 {
		t.Errorf("child args = %s, logs %q", got, env.Logs())
	}
}

// Values nested past the limit are refused, naming the limit and how to
// raise it, as in JavaScript.
func TestValueNestingLimit(t *testing.T) {
	const deep = "    o = \"leaf\"\n    for i in range(5000):\n        o = [o]\n"
	for _, tt := range []struct{ body, want string }{
		{deep + "    return o\n", "the workflow's result: nested more than 1000 levels deep"},
		{deep + "    workflow(\"child\", {\"deep\": o})\n", "workflow(): the args: nested more than 1000 levels deep"},
		{deep + "    agent(\"x\", schema = o)\n", "agent(): option schema: nested more than 1000 levels deep"},
		{"    o = []\n    o.append(o)\n    return o\n", "the workflow's result: nested more than 1000 levels deep"},
	} {
		s := load(t, New(), "d.workflow.star", limitsMeta+"def main(args):\n"+tt.body)
		_, err := runScript(t, s, langtest.NewEnv())
		if !errors.Is(err, lang.ErrTooDeep) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--max-nesting") {
			t.Errorf("%s: %v, want %q", tt.body, err, tt.want)
		}
	}
	h := NewWithConfig(Config{MaxNesting: 6000 - 1000})
	s := load(t, h, "d.workflow.star", limitsMeta+"def main(args):\n"+deep+"    return len(str(o))\n")
	if _, err := runScript(t, s, langtest.NewEnv()); err != nil {
		t.Errorf("5000 levels under a limit of 5000: %v", err)
	}
}

// Deep source is refused where it goes over, with the limit, before the
// parser sees it; past Starlark's own parser limit, its refusal says what
// it is.
func TestSourceNestingLimit(t *testing.T) {
	for _, tt := range []struct {
		limit  int
		expr   string
		col    int
		phrase string
	}{
		{100, strings.Repeat("[", 600000) + strings.Repeat("]", 600000), 12 + 100, "nests more than 100 levels deep here"},
		{0, strings.Repeat("[", 600000) + strings.Repeat("]", 600000), 12 + 1000, "nests more than 1000 levels deep here"},
		{0, strings.Repeat("[", 500) + strings.Repeat("]", 500), 0, "nests deeper than Starlark's parser takes"},
		{0, strings.Repeat("-", 600000) + "1", 0, "nests deeper than Starlark's parser takes"},
	} {
		_, err := NewWithConfig(Config{MaxNesting: tt.limit}).Load(lang.Source{Path: "n.workflow.star",
			Text: []byte(limitsMeta + "def main(args):\n    return " + tt.expr + "\n")})
		var le *lang.Error
		if !errors.As(err, &le) || !errors.Is(err, lang.ErrTooDeep) || le.Line != 3 || !strings.Contains(le.Message, tt.phrase) ||
			tt.col != 0 && le.Column != tt.col {
			t.Errorf("limit %d: %v", tt.limit, err)
		}
	}
	// Brackets in strings and comments are not nesting.
	src := limitsMeta + "# " + strings.Repeat("[", 5000) + "\ndef main(args):\n    return len('" + strings.Repeat("(", 5000) +
		"') + len(\"\"\"" + strings.Repeat("{", 5000) + "\n\"\"\")\n"
	if _, err := New().Load(lang.Source{Path: "s.workflow.star", Text: []byte(src)}); err != nil {
		t.Errorf("brackets in strings and comments: %v", err)
	}
}

// str, repr, print and the json module measure what they are given before
// Starlark's recursive Go code turns it into text: str() of a list nested
// a million levels deep overflowed the Go stack.
func TestTextOfDeepValues(t *testing.T) {
	const deep = "    o = []\n    for i in range(100000):\n        o = [o]\n"
	for _, call := range []string{"str(o)", "repr(o)", "print(o)", "json.encode(o)", `json.decode("[" * 100000 + "]" * 100000)`} {
		s := load(t, New(), "t.workflow.star", limitsMeta+"def main(args):\n"+deep+"    return len("+call+")\n")
		_, err := runScript(t, s, langtest.NewEnv())
		if !errors.Is(err, lang.ErrTooDeep) || !strings.Contains(err.Error(), "nested more than 1000 levels deep") {
			t.Errorf("%s: %v", call, err)
		}
	}
	s := load(t, New(), "t.workflow.star", limitsMeta+`def main(args):
    v = {"a": [1, (2, 3)], "b": None}
    return [str(v), repr("x"), json.encode(v), json.decode('{"k": [1]}'), json.indent('{"k":1}'), str(1)]
`)
	got, err := runScript(t, s, langtest.NewEnv())
	want := `["{\"a\": [1, (2, 3)], \"b\": None}","\"x\"","{\"a\":[1,[2,3]],\"b\":null}",{"k":[1]},"{\n\t\"k\": 1\n}","1"]`
	if err != nil || string(got) != want {
		t.Errorf("= %s, %v\nwant %s", got, err, want)
	}
}
