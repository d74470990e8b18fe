package star

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	starjson "go.starlark.net/lib/json"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Starlark turns values into text by recursion in its Go code, one call
// per level and without a limit: str() of a list nested a million levels
// deep, built in a loop, overflowed the Go stack, and json.encode of one
// 300,000 levels deep ran for minutes (each level searches the levels
// above it for a cycle). guarded wraps the builtins that do so, str, repr,
// print and the json module, with a measure of their arguments, made
// level by level without recursion: past the nesting limit they fail with
// the limit's error. The % operator and str.format cannot be wrapped; a
// value that deep reaches them only by being built for the purpose.

// guardedBuiltins are str, repr, print and json, each checking the
// nesting of what it is given.
func (r *run) guardedBuiltins() starlark.StringDict {
	limit := r.script.maxNesting
	guard := func(name string, real starlark.Callable) *starlark.Builtin {
		return starlark.NewBuiltin(name, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			for _, a := range args {
				if err := checkNesting(name+"()", a, limit); err != nil {
					return nil, err
				}
			}
			for _, kv := range kwargs {
				if err := checkNesting(name+"()", kv[1], limit); err != nil {
					return nil, err
				}
			}
			return starlark.Call(th, real, args, kwargs)
		})
	}
	members := starlark.StringDict{}
	for name, fn := range starjson.Module.Members {
		if c, ok := fn.(starlark.Callable); ok {
			fn = guard("json."+name, c)
		}
		members[name] = fn
	}
	out := starlark.StringDict{"json": &starlarkstruct.Module{Name: "json", Members: members}}
	for _, name := range []string{"str", "repr", "print"} {
		out[name] = guard(name, starlark.Universe[name].(starlark.Callable))
	}
	return out
}

// checkNesting returns a *lang.NestingError when v, or the JSON text v
// holds, nests deeper than limit. It walks one level at a time.
func checkNesting(what string, v starlark.Value, limit int) error {
	if s, ok := v.(starlark.String); ok {
		if what == "json.decode()" || what == "json.indent()" {
			return lang.CheckJSONNesting(what+": the text", []byte(s), limit)
		}
		return nil
	}
	level := []starlark.Value{v}
	for depth := 0; len(level) > 0; depth++ {
		if depth > limit {
			return &lang.NestingError{What: what + ": the value", Limit: limit}
		}
		var next []starlark.Value
		for _, x := range level {
			switch x := x.(type) {
			case *starlark.List:
				for i := range x.Len() {
					next = append(next, x.Index(i))
				}
			case starlark.Tuple:
				next = append(next, x...)
			case *starlark.Dict:
				for _, kv := range x.Items() {
					next = append(next, kv[0], kv[1])
				}
			case *starlark.Set:
				it := x.Iterate()
				var e starlark.Value
				for it.Next(&e) {
					next = append(next, e)
				}
				it.Done()
			}
		}
		level = next
	}
	return nil
}
