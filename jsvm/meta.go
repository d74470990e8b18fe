package jsvm

import (
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"

	"github.com/dynworkflow/dynworkflow/lang"
)

// The meta is read from the syntax tree, never by running the script: the
// engine shows it (name, phases) before the user agrees to run anything.
// This file only walks goja's tree into a lang.Literal; the rules, shared
// with the Starlark host, are lang.DecodeMeta's.

const (
	metaStart   = "export const meta = { name: ..., description: ... }"
	missingHint = "start the file with " + metaStart
)

// findMetaExport returns the offset of the export keyword that opens the
// script, when the script opens (after blanks and comments) with
// "export const meta". It returns -1 otherwise. Only that export is
// blanked before parsing; any other export then fails to parse and is
// reported as such.
func findMetaExport(text string) int {
	off := skipBlank(text, 0)
	rest := text[off:]
	if !hasWord(rest, "export") {
		return -1
	}
	next := skipBlank(rest, len("export"))
	if next == len("export") || !hasWord(rest[next:], "const") {
		return -1
	}
	name := skipBlank(rest, next+len("const"))
	if name == next+len("const") || !hasWord(rest[name:], "meta") {
		return -1
	}
	return off
}

// skipBlank returns the offset of the first byte at or after off that is
// neither white space nor inside a comment.
func skipBlank(text string, off int) int {
	for off < len(text) {
		switch {
		case strings.HasPrefix(text[off:], "//"):
			end := strings.IndexAny(text[off:], "\r\n")
			if end < 0 {
				return len(text)
			}
			off += end
		case strings.HasPrefix(text[off:], "/*"):
			end := strings.Index(text[off+2:], "*/")
			if end < 0 {
				return len(text)
			}
			off += end + 4
		case strings.HasPrefix(text[off:], "\uFEFF"):
			off += len("\uFEFF")
		case strings.ContainsRune(" \t\r\n\v\f", rune(text[off])):
			off++
		default:
			return off
		}
	}
	return off
}

// hasWord reports whether s starts with the identifier w, not merely with a
// longer identifier that begins with w.
func hasWord(s, w string) bool {
	return strings.HasPrefix(s, w) && (len(s) == len(w) || !isIdentByte(s[len(w)]))
}

func isIdentByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// metaLiteral finds the meta declaration, the body's first statement, and
// returns its initializer.
func metaLiteral(src *source, body []ast.Statement, exported bool) (*ast.ObjectLiteral, error) {
	var decl *ast.LexicalDeclaration
	if len(body) > 0 {
		decl, _ = body[0].(*ast.LexicalDeclaration)
	}
	if !exported || decl == nil || decl.Token != token.CONST || len(decl.List) == 0 {
		return nil, lang.Errorf(src.path, 1, 1, missingHint, "the script has no meta")
	}
	b := decl.List[0]
	if id, ok := b.Target.(*ast.Identifier); !ok || id.Name != "meta" || b.Initializer == nil {
		return nil, lang.Errorf(src.path, 1, 1, missingHint, "the script has no meta")
	}
	obj, ok := b.Initializer.(*ast.ObjectLiteral)
	if !ok {
		return nil, src.errorf(src.offset(b.Initializer.Idx0()), lang.LiteralHint+": "+metaStart, "meta must be an object literal")
	}
	return obj, nil
}

// readMeta evaluates the meta literal and checks its fields. It then
// replaces every chain of + in the literal's tree with its value: goja's
// compiler takes time quadratic in the length of such a chain, and the
// value is what the chain would give when the script runs.
func readMeta(src *source, obj *ast.ObjectLiteral) (lang.Meta, error) {
	r := metaReader{src: src}
	lit, err := r.eval(obj)
	if err != nil {
		return lang.Meta{}, err
	}
	if err := r.foldChains(obj); err != nil {
		return lang.Meta{}, err
	}
	// The hints of meta errors show JavaScript.
	return lang.DecodeMeta(lit, lang.Notation{
		Object: "an object",
		Phases: "write phases: [{ title: 'Review' }, ...]",
		Phase:  "write { title: 'Review' } or just 'Review'",
		Field:  "add %s: '...'",
		True:   "true", False: "false",
	})
}

// A metaReader turns the meta's syntax tree into a lang.Literal.
type metaReader struct {
	src *source
}

// pos returns the position of the byte offset off.
func (r metaReader) pos(off int) lang.Pos {
	line, col := r.src.at(off)
	return lang.Pos{File: r.src.path, Line: line, Column: col}
}

// lit returns the value v written at the byte offset off.
func (r metaReader) lit(off int, v any) lang.Literal {
	return lang.Literal{Pos: r.pos(off), Value: v}
}

// notLiteral rejects the construct at offset off.
func (r metaReader) notLiteral(off int, what string) error {
	return lang.NotLiteral(r.pos(off), what)
}

// eval turns a literal expression into a value, rejecting anything that
// would need the script to run.
func (r metaReader) eval(e ast.Expression) (lang.Literal, error) {
	at := r.src.offset(e.Idx0())
	switch e := e.(type) {
	case *ast.StringLiteral:
		return r.lit(at, e.Value.String()), nil
	case *ast.NumberLiteral:
		switch n := e.Value.(type) {
		case int64:
			return r.lit(at, float64(n)), nil
		case float64:
			return r.lit(at, n), nil
		}
		return lang.Literal{}, r.notLiteral(at, "a number that is too large")
	case *ast.BooleanLiteral:
		return r.lit(at, e.Value), nil
	case *ast.NullLiteral:
		return r.lit(at, nil), nil
	case *ast.Identifier:
		if e.Name == "undefined" {
			return r.lit(at, nil), nil
		}
		return lang.Literal{}, r.notLiteral(at, "a variable ("+e.Name.String()+")")
	case *ast.UnaryExpression:
		if e.Operator == token.MINUS || e.Operator == token.PLUS {
			v, err := r.eval(e.Operand)
			if n, ok := v.Value.(float64); err == nil && ok {
				if e.Operator == token.MINUS {
					n = -n
				}
				return r.lit(at, n), nil
			}
		}
		return lang.Literal{}, r.notLiteral(at, "an operator")
	case *ast.BinaryExpression:
		return r.concat(at, e)
	case *ast.TemplateLiteral:
		switch {
		case e.Tag != nil:
			return lang.Literal{}, r.notLiteral(at, "a tagged template")
		case len(e.Expressions) > 0:
			return lang.Literal{}, r.notLiteral(r.back(r.src.offset(e.Expressions[0].Idx0()), "${"), "template interpolation (${...})")
		case len(e.Elements) == 1 && e.Elements[0].Valid:
			return r.lit(at, e.Elements[0].Parsed.String()), nil
		}
		return lang.Literal{}, r.notLiteral(at, "an invalid template")
	case *ast.ArrayLiteral:
		list := make([]lang.Literal, 0, len(e.Value))
		for _, x := range e.Value {
			if x == nil {
				return lang.Literal{}, r.notLiteral(at, "an array with a hole")
			}
			v, err := r.eval(x)
			if err != nil {
				return lang.Literal{}, err
			}
			list = append(list, v)
		}
		return r.lit(at, list), nil
	case *ast.ObjectLiteral:
		return r.object(at, e)
	case *ast.SpreadElement:
		return lang.Literal{}, r.notLiteral(r.back(at, "..."), "a spread (...)")
	}
	return lang.Literal{}, r.notLiteral(at, describe(e))
}

func (r metaReader) object(at int, e *ast.ObjectLiteral) (lang.Literal, error) {
	fields := make([]lang.Field, 0, len(e.Value))
	for _, p := range e.Value {
		pat := r.src.offset(p.Idx0())
		switch p := p.(type) {
		case *ast.PropertyShort:
			return lang.Literal{}, r.notLiteral(pat, "a shorthand property ("+p.Name.Name.String()+" reads a variable)")
		case *ast.SpreadElement:
			return lang.Literal{}, r.notLiteral(r.back(pat, "..."), "a spread (...)")
		case *ast.PropertyKeyed:
			if p.Computed {
				return lang.Literal{}, r.notLiteral(r.back(pat, "["), "a computed key")
			}
			if p.Kind != ast.PropertyKindValue {
				return lang.Literal{}, r.notLiteral(pat, "a method")
			}
			var key string
			switch k := p.Key.(type) {
			case *ast.StringLiteral:
				key = k.Value.String()
			case *ast.NumberLiteral:
				key = k.Literal
			default:
				return lang.Literal{}, r.notLiteral(pat, "a computed key")
			}
			v, err := r.eval(p.Value)
			if err != nil {
				return lang.Literal{}, err
			}
			fields = append(fields, lang.Field{Key: key, Value: v})
		default:
			return lang.Literal{}, r.notLiteral(pat, describe(p))
		}
	}
	return r.lit(at, fields), nil
}

// concat folds a chain of +; any other operator is rejected. a + b + c
// parses as ((a + b) + c): the chain is walked down its left side without
// recursion, however long it is, and folded in one go.
func (r metaReader) concat(at int, e *ast.BinaryExpression) (lang.Literal, error) {
	var rights []ast.Expression
	var left ast.Expression = e
	for {
		b, ok := left.(*ast.BinaryExpression)
		if !ok {
			break
		}
		if b.Operator != token.PLUS {
			return lang.Literal{}, r.notLiteral(r.src.offset(b.Idx0()), "an operator ("+b.Operator.String()+")")
		}
		rights = append(rights, b.Right)
		left = b.Left
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

// foldChains replaces, in the values of an object or array literal that
// eval accepted, every + chain with the literal it evaluates to.
func (r metaReader) foldChains(e ast.Expression) error {
	fold := func(x *ast.Expression) error {
		b, ok := (*x).(*ast.BinaryExpression)
		if !ok {
			return r.foldChains(*x)
		}
		v, err := r.eval(b)
		if err != nil {
			return err
		}
		switch v := v.Value.(type) {
		case string:
			*x = &ast.StringLiteral{Idx: b.Idx0(), Literal: strconv.Quote(v), Value: unistring.NewFromString(v)}
		case float64:
			*x = &ast.NumberLiteral{Idx: b.Idx0(), Literal: strconv.FormatFloat(v, 'g', -1, 64), Value: v}
		}
		return nil
	}
	switch e := e.(type) {
	case *ast.ObjectLiteral:
		for _, p := range e.Value {
			if p, ok := p.(*ast.PropertyKeyed); ok {
				if err := fold(&p.Value); err != nil {
					return err
				}
			}
		}
	case *ast.ArrayLiteral:
		for i := range e.Value {
			if err := fold(&e.Value[i]); err != nil {
				return err
			}
		}
	case *ast.UnaryExpression:
		return fold(&e.Operand)
	}
	return nil
}

// back returns the offset of tok when it is the last thing before off,
// blanks aside, so that an error points at "..." or "[" rather than at the
// expression after it.
func (r metaReader) back(off int, tok string) int {
	i := strings.TrimRight(r.src.text[:off], " \t\r\n")
	if strings.HasSuffix(i, tok) {
		return len(i) - len(tok)
	}
	return off
}

// describe names a construct for an error message.
func describe(e ast.Node) string {
	switch e := e.(type) {
	case *ast.CallExpression:
		return "a function call"
	case *ast.NewExpression:
		return "a constructor call (new)"
	case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
		return "a function"
	case *ast.ClassLiteral:
		return "a class"
	case *ast.RegExpLiteral:
		return "a regular expression"
	case *ast.DotExpression, *ast.BracketExpression, *ast.OptionalChain:
		return "a property access"
	case *ast.ConditionalExpression:
		return "a conditional (?:)"
	case *ast.AwaitExpression:
		return "await"
	case *ast.AssignExpression:
		return "an assignment"
	case *ast.ThisExpression:
		return "this"
	case *ast.SequenceExpression:
		return "a comma expression"
	case *ast.UnaryExpression:
		return "an operator (" + e.Operator.String() + ")"
	}
	return "an expression"
}
