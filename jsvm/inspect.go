package jsvm

import (
	"reflect"

	"github.com/dop251/goja/ast"
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
// load time. The meta, a pure literal already checked, is not walked
// again: it can be the larger part of the tree.
func checkForbidden(src *source, prog *ast.Program, meta ast.Node) error {
	var err error
	inspect(prog, meta, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpression:
			if id, ok := n.Callee.(*ast.Identifier); ok && id.Name == "require" {
				err = src.errorf(src.offset(id.Idx), importHint, "require() is not supported in workflow scripts")
				return false
			}
		case *ast.RegExpLiteral:
			pattern, terr := translateUnicodeProperties(n.Pattern, n.Flags)
			if terr != nil {
				err = src.errorf(src.offset(n.Idx), "spell the class out, as in [A-Za-z\\u00C0-\\u024F]", "%s", terr.Error())
				return false
			}
			n.Pattern = pattern
		}
		return true
	})
	return err
}
