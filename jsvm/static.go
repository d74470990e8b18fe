package jsvm

import (
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"

	"github.com/dynworkflow/dynworkflow/lang"
)

// agentCalls finds the agent() calls of the script whose second argument
// is an object literal, and what that literal writes out, for the registry
// to check before the script runs (lang.CheckStaticCalls). A value is
// written out when it is a literal, or a name that only a top-level
// const declares, to an object literal, and that the script only ever
// reads as the value of a property (schema: FINDINGS): anything else (a
// variable, a call, a name declared twice, a const the script could
// mutate) only running the script can tell, and is left to the call.
// A script that declares agent itself is not checked at all.
func agentCalls(src *source, prog *ast.Program, body []ast.Statement, meta ast.Node) []lang.StaticCall {
	consts := map[unistring.String]*ast.ObjectLiteral{}
	for _, st := range body {
		d, ok := st.(*ast.LexicalDeclaration)
		if !ok || d.Token != token.CONST {
			continue
		}
		for _, b := range d.List {
			id, ok := b.Target.(*ast.Identifier)
			obj, isObj := b.Initializer.(*ast.ObjectLiteral)
			if ok && isObj {
				consts[id.Name] = obj
			}
		}
	}

	var calls []*ast.CallExpression
	names := map[unistring.String]int{} // how often each name occurs
	asValue := map[*ast.Identifier]bool{}
	shadowed := false
	inspect(prog, meta, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpression:
			if id, ok := n.Callee.(*ast.Identifier); ok && id.Name == "agent" && len(n.ArgumentList) == 2 {
				if _, ok := n.ArgumentList[1].(*ast.ObjectLiteral); ok {
					calls = append(calls, n)
				}
			}
		case *ast.Identifier:
			names[n.Name]++
		case *ast.PropertyShort:
			names[n.Name.Name]++
		case *ast.PropertyKeyed:
			if id, ok := n.Value.(*ast.Identifier); ok && !n.Computed {
				asValue[id] = true
			}
		case *ast.Binding:
			if id, ok := n.Target.(*ast.Identifier); ok && id.Name == "agent" {
				shadowed = true
			}
		case *ast.FunctionLiteral:
			if n.Name != nil && n.Name.Name == "agent" {
				shadowed = true
			}
		}
		return true
	})
	if shadowed || len(calls) == 0 {
		return nil
	}
	// reads counts, per const, the reads as a property's value.
	reads := map[unistring.String]int{}
	for id := range asValue {
		if _, ok := consts[id.Name]; ok {
			reads[id.Name]++
		}
	}
	fixed := func(name unistring.String) *ast.ObjectLiteral {
		// The declaration itself is one occurrence of the name.
		if obj, ok := consts[name]; ok && names[name] == reads[name]+1 {
			return obj
		}
		return nil
	}

	r := metaReader{src: src}
	out := make([]lang.StaticCall, 0, len(calls))
	for _, c := range calls {
		call := lang.StaticCall{Pos: r.pos(src.offset(c.Idx0()))}
		for _, p := range c.ArgumentList[1].(*ast.ObjectLiteral).Value {
			kv, ok := p.(*ast.PropertyKeyed)
			if !ok || kv.Computed || kv.Kind != ast.PropertyKindValue {
				continue // a spread, a shorthand, a computed key, a method
			}
			key, ok := kv.Key.(*ast.StringLiteral)
			if !ok {
				continue
			}
			o := lang.StaticOption{Key: key.Value.String(), KeyPos: r.pos(src.offset(kv.Key.Idx0())), ValuePos: r.pos(src.offset(kv.Value.Idx0()))}
			value := kv.Value
			if id, ok := value.(*ast.Identifier); ok && id.Name != "undefined" {
				if obj := fixed(id.Name); obj != nil {
					// What is wrong is in the declaration: point there.
					value, o.ValuePos = obj, r.pos(src.offset(obj.Idx0()))
				} else {
					value = nil
				}
			}
			if value != nil {
				if lit, err := r.eval(value); err == nil {
					o.Value = lit.JSON()
				}
			}
			call.Options = append(call.Options, o)
		}
		out = append(out, call)
	}
	return out
}
