package star

import (
	"go.starlark.net/syntax"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The meta is read from the syntax tree, never by running the script: the
// engine shows it (name, phases) before the user agrees to run anything.
// This file only walks Starlark's tree into a lang.Literal; the rules, shared
// with the JavaScript host, are lang.DecodeMeta's.

const (
	metaStart   = `meta = {"name": "...", "description": "..."}`
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
		return lang.Meta{}, r.pos(syntax.Start(rhs)).Errorf(lang.LiteralHint+": "+metaStart, "meta must be a dict literal")
	}
	lit, err := r.eval(rhs)
	if err != nil {
		return lang.Meta{}, err
	}
	// The hints of meta errors show Starlark.
	return lang.DecodeMeta(lit, lang.Notation{
		Object: "a dict",
		Phases: `write "phases": [{"title": "Review"}, ...]`,
		Phase:  `write {"title": "Review"} or just "Review"`,
		Field:  `add "%s": "..."`,
		True:   "True", False: "False",
	})
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

// A metaReader turns the meta's syntax tree into a lang.Literal.
type metaReader struct {
	path string
}

func (r metaReader) pos(at syntax.Position) lang.Pos {
	return lang.Pos{File: r.path, Line: int(at.Line), Column: int(at.Col)}
}

// lit returns the value v written at at.
func (r metaReader) lit(at syntax.Position, v any) lang.Literal {
	return lang.Literal{Pos: r.pos(at), Value: v}
}

// notLiteral rejects the construct at at.
func (r metaReader) notLiteral(at syntax.Position, what string) error {
	return lang.NotLiteral(r.pos(at), what)
}

// eval turns a literal expression into a value, rejecting anything that
// would need the script to run.
func (r metaReader) eval(e syntax.Expr) (lang.Literal, error) {
	at := syntax.Start(e)
	switch e := e.(type) {
	case *syntax.ParenExpr:
		return r.eval(e.X)
	case *syntax.Literal:
		switch v := e.Value.(type) {
		case string:
			if e.Token == syntax.BYTES {
				return lang.Literal{}, r.notLiteral(at, "a bytes literal")
			}
			return r.lit(at, v), nil
		case int64:
			return r.lit(at, float64(v)), nil
		case float64:
			return r.lit(at, v), nil
		}
		return lang.Literal{}, r.notLiteral(at, "a number that is too large")
	case *syntax.Ident:
		switch e.Name {
		case "None":
			return r.lit(at, nil), nil
		case "True", "False":
			return r.lit(at, e.Name == "True"), nil
		}
		return lang.Literal{}, r.notLiteral(at, "a variable ("+e.Name+")")
	case *syntax.UnaryExpr:
		if e.Op == syntax.MINUS || e.Op == syntax.PLUS {
			v, err := r.eval(e.X)
			if n, ok := v.Value.(float64); err == nil && ok {
				if e.Op == syntax.MINUS {
					n = -n
				}
				return r.lit(at, n), nil
			}
		}
		return lang.Literal{}, r.notLiteral(at, "an operator ("+e.Op.String()+")")
	case *syntax.BinaryExpr:
		return r.concat(at, e)
	case *syntax.ListExpr:
		return r.list(at, e.List)
	case *syntax.TupleExpr:
		return r.list(at, e.List)
	case *syntax.DictExpr:
		return r.dict(at, e)
	}
	return lang.Literal{}, r.notLiteral(at, describe(e))
}

func (r metaReader) list(at syntax.Position, elems []syntax.Expr) (lang.Literal, error) {
	list := make([]lang.Literal, 0, len(elems))
	for _, x := range elems {
		v, err := r.eval(x)
		if err != nil {
			return lang.Literal{}, err
		}
		list = append(list, v)
	}
	return r.lit(at, list), nil
}

func (r metaReader) dict(at syntax.Position, e *syntax.DictExpr) (lang.Literal, error) {
	fields := make([]lang.Field, 0, len(e.List))
	seen := make(map[string]bool, len(e.List))
	for _, x := range e.List {
		entry := x.(*syntax.DictEntry)
		kat := r.pos(syntax.Start(entry.Key))
		if id, ok := entry.Key.(*syntax.Ident); ok {
			return lang.Literal{}, kat.Errorf(`quote the key: "`+id.Name+`"`, "meta must be a pure literal: found a variable (%s) as a key", id.Name)
		}
		k, err := r.eval(entry.Key)
		if err != nil {
			return lang.Literal{}, err
		}
		key, ok := k.Value.(string)
		if !ok {
			return lang.Literal{}, kat.Errorf("", "meta keys must be strings")
		}
		// Starlark rejects a repeated key when it runs, so the meta must too.
		if seen[key] {
			return lang.Literal{}, kat.Errorf("", "meta has the key %q twice", key)
		}
		seen[key] = true
		v, err := r.eval(entry.Value)
		if err != nil {
			return lang.Literal{}, err
		}
		fields = append(fields, lang.Field{Key: key, Value: v})
	}
	return r.lit(at, fields), nil
}

// concat folds a chain of +; any other operator is rejected. a + b + c
// parses as ((a + b) + c): the chain is walked down its left side without
// recursion, however long it is, and folded in one go.
func (r metaReader) concat(at syntax.Position, e *syntax.BinaryExpr) (lang.Literal, error) {
	var rights []syntax.Expr
	var left syntax.Expr = e
	for {
		b, ok := left.(*syntax.BinaryExpr)
		if !ok {
			break
		}
		if b.Op != syntax.PLUS {
			return lang.Literal{}, r.notLiteral(syntax.Start(b), "an operator ("+b.Op.String()+")")
		}
		rights = append(rights, b.Y)
		left = b.X
	}
	operands := make([]lang.Literal, 0, len(rights)+1)
	v, err := r.eval(left)
	if err != nil {
		return lang.Literal{}, err
	}
	operands = append(operands, v)
	for i := len(rights) - 1; i >= 0; i-- {
		v, err := r.eval(rights[i])
		if err != nil {
			return lang.Literal{}, err
		}
		operands = append(operands, v)
	}
	return lang.Concat(r.pos(at), operands...)
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
