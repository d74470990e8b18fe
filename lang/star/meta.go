package star

import (
	"strconv"
	"strings"

	"go.starlark.net/syntax"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The meta is read from the syntax tree, never by running the script: the
// engine shows it (name, phases) before the user agrees to run anything.
// The rules follow the JavaScript host's: a pure literal, with string +
// concatenation and phases as bare strings allowed, and errors at the line
// and column of what is wrong.

const (
	metaStart   = `meta = {"name": "...", "description": "..."}`
	literalHint = "meta is read without running the script; write the value out"
	missingHint = "declare it at the top level: " + metaStart
)

// readMeta finds the top-level meta assignment of f and decodes it.
func readMeta(path string, f *syntax.File) (lang.Meta, error) {
	var rhs syntax.Expr
	for _, stmt := range f.Stmts {
		if a, ok := stmt.(*syntax.AssignStmt); ok && a.Op == syntax.EQ {
			if id, ok := a.LHS.(*syntax.Ident); ok && id.Name == "meta" {
				rhs = a.RHS
				break
			}
		}
	}
	if rhs == nil {
		return lang.Meta{}, lang.Errorf(path, 1, 1, missingHint, "the script has no meta")
	}
	r := metaReader{path: path}
	if _, ok := unparen(rhs).(*syntax.DictExpr); !ok {
		return lang.Meta{}, r.errorf(syntax.Start(rhs), literalHint+": "+metaStart, "meta must be a dict literal")
	}
	lit, err := r.eval(rhs)
	if err != nil {
		return lang.Meta{}, err
	}
	return r.decode(lit)
}

// checkMain makes sure the file defines main at the top level, so that a
// script without an entry point fails when it is loaded, not when it runs.
func checkMain(path string, f *syntax.File) error {
	for _, stmt := range f.Stmts {
		switch s := stmt.(type) {
		case *syntax.DefStmt:
			if s.Name.Name == "main" {
				return nil
			}
		case *syntax.AssignStmt:
			if id, ok := s.LHS.(*syntax.Ident); ok && id.Name == "main" {
				return nil
			}
		}
	}
	return lang.Errorf(path, 1, 1, "add def main(args): and return the workflow's result from it", "the script has no main function")
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// A literal is a value of the meta as written, with its position.
type literal struct {
	at    syntax.Position
	value any // string, float64, bool, nil, []literal or []field
}

type field struct {
	key   string
	value literal
}

func (l literal) get(key string) (literal, bool) {
	fields, _ := l.value.([]field)
	for _, f := range fields {
		if f.key == key {
			return f.value, f.value.value != nil
		}
	}
	return literal{}, false
}

type metaReader struct {
	path string
}

func (r metaReader) errorf(at syntax.Position, hint, format string, args ...any) error {
	return lang.Errorf(r.path, int(at.Line), int(at.Col), hint, format, args...)
}

// notLiteral rejects the construct at at.
func (r metaReader) notLiteral(at syntax.Position, what string) error {
	return r.errorf(at, literalHint, "meta must be a pure literal: found %s", what)
}

// eval turns a literal expression into a value, rejecting anything that
// would need the script to run.
func (r metaReader) eval(e syntax.Expr) (literal, error) {
	at := syntax.Start(e)
	switch e := e.(type) {
	case *syntax.ParenExpr:
		return r.eval(e.X)
	case *syntax.Literal:
		switch v := e.Value.(type) {
		case string:
			if e.Token == syntax.BYTES {
				return literal{}, r.notLiteral(at, "a bytes literal")
			}
			return literal{at, v}, nil
		case int64:
			return literal{at, float64(v)}, nil
		case float64:
			return literal{at, v}, nil
		}
		return literal{}, r.notLiteral(at, "a number that is too large")
	case *syntax.Ident:
		switch e.Name {
		case "None":
			return literal{at, nil}, nil
		case "True", "False":
			return literal{at, e.Name == "True"}, nil
		}
		return literal{}, r.notLiteral(at, "a variable ("+e.Name+")")
	case *syntax.UnaryExpr:
		if e.Op == syntax.MINUS || e.Op == syntax.PLUS {
			v, err := r.eval(e.X)
			if n, ok := v.value.(float64); err == nil && ok {
				if e.Op == syntax.MINUS {
					n = -n
				}
				return literal{at, n}, nil
			}
		}
		return literal{}, r.notLiteral(at, "an operator ("+e.Op.String()+")")
	case *syntax.BinaryExpr:
		return r.concat(at, e)
	case *syntax.ListExpr:
		return r.list(at, e.List)
	case *syntax.TupleExpr:
		return r.list(at, e.List)
	case *syntax.DictExpr:
		return r.dict(at, e)
	}
	return literal{}, r.notLiteral(at, describe(e))
}

func (r metaReader) list(at syntax.Position, elems []syntax.Expr) (literal, error) {
	list := make([]literal, 0, len(elems))
	for _, x := range elems {
		v, err := r.eval(x)
		if err != nil {
			return literal{}, err
		}
		list = append(list, v)
	}
	return literal{at, list}, nil
}

func (r metaReader) dict(at syntax.Position, e *syntax.DictExpr) (literal, error) {
	fields := make([]field, 0, len(e.List))
	for _, x := range e.List {
		entry := x.(*syntax.DictEntry)
		kat := syntax.Start(entry.Key)
		if id, ok := entry.Key.(*syntax.Ident); ok {
			return literal{}, r.errorf(kat, `quote the key: "`+id.Name+`"`, "meta must be a pure literal: found a variable (%s) as a key", id.Name)
		}
		k, err := r.eval(entry.Key)
		if err != nil {
			return literal{}, err
		}
		key, ok := k.value.(string)
		if !ok {
			return literal{}, r.errorf(kat, "", "meta keys must be strings")
		}
		for _, f := range fields {
			if f.key == key {
				return literal{}, r.errorf(kat, "", "meta has the key %q twice", key)
			}
		}
		v, err := r.eval(entry.Value)
		if err != nil {
			return literal{}, err
		}
		fields = append(fields, field{key, v})
	}
	return literal{at, fields}, nil
}

// concat folds "a" + "b", which real scripts use to split a long
// description over lines.
func (r metaReader) concat(at syntax.Position, e *syntax.BinaryExpr) (literal, error) {
	if e.Op != syntax.PLUS {
		return literal{}, r.notLiteral(at, "an operator ("+e.Op.String()+")")
	}
	left, err := r.eval(e.X)
	if err != nil {
		return literal{}, err
	}
	right, err := r.eval(e.Y)
	if err != nil {
		return literal{}, err
	}
	if a, ok := left.value.(string); ok {
		if b, ok := right.value.(string); ok {
			return literal{at, a + b}, nil
		}
	}
	if a, ok := left.value.(float64); ok {
		if b, ok := right.value.(float64); ok {
			return literal{at, a + b}, nil
		}
	}
	return literal{}, r.notLiteral(at, "+ between values that are not both strings")
}

// describe names a construct for an error message.
func describe(e syntax.Expr) string {
	switch e.(type) {
	case *syntax.CallExpr:
		return "a function call"
	case *syntax.DotExpr:
		return "an attribute access"
	case *syntax.IndexExpr, *syntax.SliceExpr:
		return "an index or slice"
	case *syntax.LambdaExpr:
		return "a function"
	case *syntax.CondExpr:
		return "a conditional (if/else)"
	case *syntax.Comprehension:
		return "a comprehension"
	}
	return "an expression"
}

// decode checks the evaluated meta against lang.Meta.
func (r metaReader) decode(m literal) (lang.Meta, error) {
	var meta lang.Meta
	var err error
	if meta.Name, err = r.text(m, "name", "meta.name", true); err != nil {
		return meta, err
	}
	if meta.Description, err = r.text(m, "description", "meta.description", true); err != nil {
		return meta, err
	}
	if meta.WhenToUse, err = r.text(m, "whenToUse", "meta.whenToUse", false); err != nil {
		return meta, err
	}
	phases, ok := m.get("phases")
	if !ok {
		return meta, nil
	}
	list, ok := phases.value.([]literal)
	if !ok {
		return meta, r.errorf(phases.at, `write "phases": [{"title": "Review"}, ...]`, "meta.phases must be a list")
	}
	for i, p := range list {
		name := "meta.phases[" + strconv.Itoa(i) + "]"
		if title, ok := p.value.(string); ok {
			if strings.TrimSpace(title) == "" {
				return meta, r.errorf(p.at, "", "%s must be a non-empty title", name)
			}
			meta.Phases = append(meta.Phases, lang.Phase{Title: title})
			continue
		}
		if _, ok := p.value.([]field); !ok {
			return meta, r.errorf(p.at, `write {"title": "Review"} or just "Review"`, "%s must be a dict or a string", name)
		}
		var ph lang.Phase
		if ph.Title, err = r.text(p, "title", name+".title", true); err != nil {
			return meta, err
		}
		if ph.Detail, err = r.text(p, "detail", name+".detail", false); err != nil {
			return meta, err
		}
		if ph.Model, err = r.text(p, "model", name+".model", false); err != nil {
			return meta, err
		}
		meta.Phases = append(meta.Phases, ph)
	}
	return meta, nil
}

// text reads the string field key of obj. A required field must be a
// non-empty string; an optional one may be missing or None.
func (r metaReader) text(obj literal, key, name string, required bool) (string, error) {
	v, ok := obj.get(key)
	if !ok {
		if required {
			return "", r.errorf(obj.at, `add "`+key+`": "..."`, "%s must be a non-empty string", name)
		}
		return "", nil
	}
	s, ok := v.value.(string)
	switch {
	case !ok && required, ok && required && strings.TrimSpace(s) == "":
		return "", r.errorf(v.at, "", "%s must be a non-empty string", name)
	case !ok:
		return "", r.errorf(v.at, "", "%s must be a string", name)
	}
	return s, nil
}
