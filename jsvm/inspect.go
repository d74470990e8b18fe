package jsvm

import (
	"reflect"
	"slices"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// goja's ast package has no walker, and a hand-written one would have to
// name every node type. inspect walks the tree by reflection instead: every
// exported field of an ast struct that holds a node, a list of nodes or an
// ast struct is followed, so new node types are covered for free.

var astPackage = reflect.TypeFor[ast.Program]().PkgPath()

// inspect calls visit for every node of the tree under n, parents first,
// and stops as soon as visit returns false. It does not go into skip.
func inspect(n, skip ast.Node, visit func(ast.Node) bool) {
	walk(reflect.ValueOf(n), func(n ast.Node) (bool, bool) {
		if skip != nil && n == skip {
			return true, false
		}
		return visit(n), true
	})
}

// walk calls visit for every node under v; visit says whether to go on
// at all, and whether to go into the node's children.
func walk(v reflect.Value, visit func(ast.Node) (more, into bool)) bool {
	switch v.Kind() {
	case reflect.Interface:
		return v.IsNil() || walk(v.Elem(), visit)
	case reflect.Pointer:
		if v.IsNil() || v.Type().Elem().PkgPath() != astPackage {
			return true
		}
		if n, ok := v.Interface().(ast.Node); ok {
			more, into := visit(n)
			if !more {
				return false
			}
			if !into {
				return true
			}
		}
		return walk(v.Elem(), visit)
	case reflect.Struct:
		t := v.Type()
		if t.PkgPath() != astPackage {
			return true
		}
		for i := range t.NumField() {
			// DeclarationList repeats declarations found in the body.
			if f := t.Field(i); f.IsExported() && f.Name != "DeclarationList" && !walk(v.Field(i), visit) {
				return false
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if !walk(v.Index(i), visit) {
				return false
			}
		}
	}
	return true
}

// checkForbidden rejects constructs that parse but cannot work in a
// workflow: there is no module system, so require() would only fail later,
// in the middle of a run. And it spells out the Unicode property escapes
// of regular expression literals (\p{L} under the u flag), which goja
// compiles into a pattern that never matches where Node matches (see
// unicode_props.go); a property it does not know is an error here, at
// load time. It returns each spelled-out pattern with the pattern as
// written. The meta, a pure literal already checked, is not walked
// again: it can be the larger part of the tree.
func checkForbidden(src *source, prog *ast.Program, meta ast.Node) (written map[string]string, err error) {
	inspect(prog, meta, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpression:
			if id, ok := n.Callee.(*ast.Identifier); ok && id.Name == "require" {
				err = src.errorf(src.offset(id.Idx), importHint, "require() is not supported in workflow scripts")
				return false
			}
			if id, ok := n.Callee.(*ast.Identifier); ok && id.Name == "eval" {
				err = src.errorf(src.offset(id.Idx), "parse data with JSON.parse; for code, call (0, eval)(code) or new Function(code), which run in the global scope",
					"a direct eval(code) is not supported in workflow scripts: here it runs its code in the global scope, where in Node it sees the script's own variables")
				return false
			}
		case *ast.RegExpLiteral:
			pattern, terr := translateUnicodeProperties(n.Pattern, n.Flags)
			if terr != nil {
				err = src.errorf(src.offset(n.Idx), "spell the class out, as in [A-Za-z\\u00C0-\\u024F]", "%s", terr.Error())
				return false
			}
			if pattern != n.Pattern {
				if written == nil {
					written = map[string]string{}
				}
				written[pattern] = n.Pattern
				n.Pattern = pattern
			}
		}
		return true
	})
	return written, err
}

// readArgumentsFirst works around a goja bug that panics the process: an
// arrow function that reads the arguments of the function around it,
// when that function has not read them itself before, indexes past the
// end of goja's stack (function f() { return (() => arguments[0])() }).
// goja resolves arguments at its first use; when that use is inside the
// arrow, the binding is never moved where the arrow can reach it. Reading
// arguments first thing in the function's body, as this does, makes the
// first use the function's own, and the arrow then reads it as it should.
// The read has no effect of its own. Parameters' defaults get it too (see
// readArgumentsInDefaults); where goja still panics (an arrow deep in a
// destructuring pattern's default), the run fails with a message, and the
// process goes on.
func readArgumentsFirst(prog *ast.Program) {
	walk(reflect.ValueOf(prog), func(n ast.Node) (bool, bool) {
		if fn, ok := n.(*ast.FunctionLiteral); ok && fn.Body != nil && arrowReadsArguments(fn) {
			list := fn.Body.List
			at := 0
			for at < len(list) && isDirective(list[at]) {
				at++
			}
			read := &ast.ExpressionStatement{Expression: &ast.Identifier{Name: "arguments", Idx: fn.Body.LeftBrace + 1}}
			fn.Body.List = append(list[:at:at], append([]ast.Statement{read}, list[at:]...)...)
			readArgumentsInDefaults(fn)
		}
		return true, true
	})
}

// readArgumentsInDefaults does for a function's parameters what the read
// at the start of its body does for the body: the parameters' defaults run
// first, so the default that holds such an arrow, a = () => arguments[0],
// reads arguments before it: a = (arguments, () => arguments[0]).
func readArgumentsInDefaults(fn *ast.FunctionLiteral) {
	if fn.ParameterList == nil {
		return
	}
	for _, b := range fn.ParameterList.List {
		if b.Initializer == nil {
			continue
		}
		probe := &ast.FunctionLiteral{Body: &ast.BlockStatement{List: []ast.Statement{&ast.ExpressionStatement{Expression: b.Initializer}}}}
		if arrowReadsArguments(probe) {
			b.Initializer = &ast.SequenceExpression{Sequence: []ast.Expression{
				&ast.Identifier{Name: "arguments", Idx: b.Initializer.Idx0()}, b.Initializer}}
			return // the first read is the one that counts
		}
	}
}

// readArgumentsFirstInText is readArgumentsFirst for code made at run time
// (eval, new Function), which goja parses itself: the read goes into the
// text, where a function's body begins (after its directives). Text that
// does not parse is left as it is, for goja to report.
func readArgumentsFirstInText(text string) string {
	prog, err := parser.ParseFile(nil, "", text, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return text
	}
	var at []int
	walk(reflect.ValueOf(prog), func(n ast.Node) (bool, bool) {
		if fn, ok := n.(*ast.FunctionLiteral); ok && fn.Body != nil && arrowReadsArguments(fn) {
			off := int(fn.Body.LeftBrace) // the byte after {, as goja counts from 1
			for _, st := range fn.Body.List {
				if !isDirective(st) {
					break
				}
				off = int(st.Idx1()) - 1
			}
			at = append(at, off)
		}
		return true, true
	})
	if len(at) == 0 {
		return text
	}
	slices.Sort(at)
	var b strings.Builder
	last := 0
	for _, off := range at {
		off = min(max(off, last), len(text))
		b.WriteString(text[last:off])
		b.WriteString(";arguments;")
		last = off
	}
	b.WriteString(text[last:])
	return b.String()
}

// arrowReadsArguments reports whether an arrow function inside fn, and
// not inside another function in fn, names arguments.
func arrowReadsArguments(fn *ast.FunctionLiteral) bool {
	found := false
	var look func(n ast.Node, inArrow bool)
	look = func(n ast.Node, inArrow bool) {
		walk(reflect.ValueOf(n), func(m ast.Node) (bool, bool) {
			switch m := m.(type) {
			case *ast.FunctionLiteral:
				return true, m == n // another function has arguments of its own
			case *ast.ArrowFunctionLiteral:
				if m != n {
					look(m, true)
					return !found, false
				}
			case *ast.Identifier:
				if inArrow && m.Name == "arguments" {
					found = true
					return false, false
				}
			}
			return true, true
		})
	}
	look(fn, false)
	return found
}

// isDirective reports a "use strict"-like string statement.
func isDirective(st ast.Statement) bool {
	es, ok := st.(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	_, ok = es.Expression.(*ast.StringLiteral)
	return ok
}
