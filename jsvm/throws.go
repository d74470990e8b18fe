package jsvm

import (
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
)

// An Error records where it was made, in its stack property; any other
// value a script throws (throw 42, throw 'oops', throw { code: 7 }) carries
// no position, and once it has rejected the body's promise nothing tells
// where it came from. So every throw statement is compiled as
// throw __dynworkflow_thrown__(value): the host function notes the value
// and the call stack, and returns the value unchanged. An uncaught value
// is then located by its last throw.

// thrownName is the global the throw statements call.
const thrownName = "__dynworkflow_thrown__"

// maxThrowSites bounds the throws remembered: the uncaught one is nearly
// always the last.
const maxThrowSites = 16

// throwSite is a value the script threw, and where.
type throwSite struct {
	value goja.Value
	stack []goja.StackFrame
}

// noteThrows rewrites every throw statement of prog, but those of skip, to
// pass its value through the host's thrownName function.
func noteThrows(prog *ast.Program, skip ast.Node) {
	inspect(prog, skip, func(n ast.Node) bool {
		if t, ok := n.(*ast.ThrowStatement); ok && t.Argument != nil {
			arg := t.Argument
			t.Argument = &ast.CallExpression{
				Callee:           &ast.Identifier{Name: thrownName, Idx: arg.Idx0()},
				LeftParenthesis:  arg.Idx0(),
				ArgumentList:     []ast.Expression{arg},
				RightParenthesis: arg.Idx1(),
			}
		}
		return true
	})
}

// thrown is the host side of thrownName.
func (r *run) noteThrown(call goja.FunctionCall) goja.Value {
	v := call.Argument(0)
	if len(r.throws) == maxThrowSites {
		r.throws = append(r.throws[:0], r.throws[1:]...)
	}
	r.throws = append(r.throws, throwSite{value: v, stack: r.site()})
	return v
}

// throwSiteOf returns where v was last thrown, if it was.
func (r *run) throwSiteOf(v goja.Value) []goja.StackFrame {
	for i := len(r.throws) - 1; i >= 0; i-- {
		if r.throws[i].value.SameAs(v) {
			return r.throws[i].stack
		}
	}
	return nil
}
