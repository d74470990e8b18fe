package star

import (
	"go.starlark.net/resolve"
	"go.starlark.net/syntax"

	"github.com/dynworkflow/dynworkflow/lang"
)

// agentCalls finds the calls of the predeclared agent() in a resolved
// file and the keyword arguments they write out, for the registry to check
// before the script runs (lang.CheckStaticCalls). A value is written out
// when it is a literal, or a global the file assigns once, at its top
// level, to a dict literal, and only ever passes as the value of a keyword
// argument of agent() or of a dict entry (schema = FINDINGS): anything
// else only running the script can tell, and is left to the call.
func agentCalls(path string, f *syntax.File) []lang.StaticCall {
	dicts := map[*resolve.Binding]*syntax.DictExpr{}
	for _, stmt := range f.Stmts {
		a, ok := stmt.(*syntax.AssignStmt)
		if !ok || a.Op != syntax.EQ {
			continue
		}
		id, ok := a.LHS.(*syntax.Ident)
		if b := binding(id); ok && b != nil && b.Scope == resolve.Global {
			if d, ok := unparen(a.RHS).(*syntax.DictExpr); ok {
				dicts[b] = d
			}
		}
	}

	var calls []*syntax.CallExpr
	uses := map[*resolve.Binding]int{}    // occurrences of each global
	asValue := map[*resolve.Binding]int{} // ... as a keyword's or entry's value
	value := func(e syntax.Expr) {
		if id, ok := unparen(e).(*syntax.Ident); ok {
			if b := binding(id); b != nil {
				asValue[b]++
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Ident:
			if b := binding(n); b != nil {
				uses[b]++
			}
		case *syntax.DictEntry:
			value(n.Value)
		case *syntax.CallExpr:
			if isAgent(n.Fn) {
				calls = append(calls, n)
				for _, arg := range n.Args {
					if kw, ok := arg.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
						value(kw.Y)
					}
				}
			}
		}
		return true
	})
	fixed := func(id *syntax.Ident) *syntax.DictExpr {
		b := binding(id)
		// The assignment itself is one occurrence of the name.
		if d, ok := dicts[b]; ok && uses[b] == asValue[b]+1 {
			return d
		}
		return nil
	}

	r := metaReader{path: path}
	out := make([]lang.StaticCall, 0, len(calls))
	for _, c := range calls {
		call := lang.StaticCall{Pos: r.pos(syntax.Start(c))}
		for _, arg := range c.Args {
			kw, ok := arg.(*syntax.BinaryExpr)
			if !ok || kw.Op != syntax.EQ {
				continue // the prompt, or **opts
			}
			key, ok := kw.X.(*syntax.Ident)
			if !ok {
				continue
			}
			o := lang.StaticOption{Key: key.Name, KeyPos: r.pos(key.NamePos), ValuePos: r.pos(syntax.Start(kw.Y))}
			var v syntax.Expr = kw.Y
			if id, ok := unparen(v).(*syntax.Ident); ok && binding(id) != nil && binding(id).Scope != resolve.Universal {
				if d := fixed(id); d != nil {
					// What is wrong is in the assignment: point there.
					v, o.ValuePos = d, r.pos(syntax.Start(d))
				} else {
					v = nil
				}
			}
			if v != nil {
				if lit, err := r.eval(v); err == nil {
					o.Value = lit.JSON()
				}
			}
			call.Options = append(call.Options, o)
		}
		out = append(out, call)
	}
	return out
}

// isAgent reports whether fn names the predeclared agent(), not a global
// or local of the script's that took its name.
func isAgent(fn syntax.Expr) bool {
	id, ok := fn.(*syntax.Ident)
	if !ok || id.Name != "agent" {
		return false
	}
	b := binding(id)
	return b != nil && b.Scope == resolve.Predeclared
}

// binding is what the resolver bound id to, or nil.
func binding(id *syntax.Ident) *resolve.Binding {
	if id == nil {
		return nil
	}
	b, _ := id.Binding.(*resolve.Binding)
	return b
}
