package jsvm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Errors cross the boundary both ways. An error of the engine (budget
// exhausted, a stopped run) reaches the script as a JS Error it may catch;
// an error the script throws and does not catch reaches the engine as a
// *lang.Error that names the line that threw it and, when it began as an
// engine error, still wraps that error.

// An engineError is a Go error handed to the script, and where the script
// made the call that failed.
type engineError struct {
	err  error
	site []goja.StackFrame
}

// coded is implemented by engine errors that carry a machine-readable code,
// which the script sees as the error's code property.
type coded interface{ ErrorCode() string }

// engineError makes a JS Error out of err, remembering err for thrown.
func (r *run) engineError(err error, site []goja.StackFrame) goja.Value {
	obj, jerr := r.vm.New(r.builtins.Error, r.vm.ToValue(err.Error()))
	if jerr != nil {
		return r.vm.ToValue(err.Error())
	}
	var c coded
	if errors.As(err, &c) {
		_ = obj.Set("code", c.ErrorCode())
	}
	r.engineErrors[obj] = engineError{err, site}
	return obj
}

// throw raises err in the script, as an Error it may catch.
func (r *run) throw(err error) {
	panic(r.engineError(err, r.site()))
}

// typeError raises a TypeError in the script.
func (r *run) typeError(format string, args ...any) {
	panic(r.vm.NewTypeError("%s", fmt.Sprintf(format, args...)))
}

// site captures where the script is, for errors that surface later.
func (r *run) site() []goja.StackFrame {
	return r.vm.CaptureCallStack(maxBacktrace, nil)
}

// thrown turns a value the script threw into a *lang.Error.
func (r *run) thrown(v goja.Value) *lang.Error {
	e := &lang.Error{File: r.script.src.path, Message: r.describeThrown(v)}
	obj, _ := v.(*goja.Object)
	var frames []frame
	if ee, ok := r.engineErrors[obj]; obj != nil && ok {
		e.Err = ee.err
		frames = r.framesOf(ee.site)
	} else if obj != nil {
		frames = r.framesOfStack(obj)
	}
	if len(frames) == 0 {
		frames = r.framesOf(r.throwSiteOf(v))
	}
	r.locate(e, frames)
	return e
}

// describeThrown says what was thrown: "TypeError: x is not a function" for
// an Error, the value itself for anything else: a string as it is, other
// primitives as JavaScript writes them (undefined, NaN, 42n), objects as
// JSON.
func (r *run) describeThrown(v goja.Value) string {
	obj, isObj := v.(*goja.Object)
	switch {
	case isObj && obj.ClassName() == "Error":
		return r.safeString(v)
	case v == nil || goja.IsUndefined(v):
		return "uncaught exception: undefined"
	case !isObj:
		return "uncaught exception: " + r.safeString(v)
	}
	if s, err := r.toJSON(v); err == nil {
		return "uncaught exception: " + string(s)
	}
	return "uncaught exception: " + r.safeString(v)
}

// safeString converts v to a string, even if its toString throws.
func (r *run) safeString(v goja.Value) string {
	var s string
	if ex := r.vm.Try(func() { s = v.String() }); ex != nil {
		return "(a value that cannot be shown)"
	}
	return s
}

// A frame is one script-level call, at a position in the script.
type frame struct {
	fn        string
	line, col int
}

// maxBacktrace bounds the frames kept, so a stack overflow's ten thousand
// frames do not end up in an error message.
const maxBacktrace = 32

// framesOf keeps the frames that are in the script (not in native code or
// in the host's prelude), innermost first, at positions in the script.
func (r *run) framesOf(stack []goja.StackFrame) []frame {
	var frames []frame
	for _, f := range stack {
		if f.SrcName() != r.script.src.path {
			continue
		}
		p := f.Position()
		frames = append(frames, r.frameAt(f.FuncName(), p.Line, p.Column))
		if len(frames) == maxBacktrace {
			break
		}
	}
	return frames
}

func (r *run) frameAt(fn string, line, col int) frame {
	l, c := r.script.src.at(r.script.src.fromWrapped(line, col))
	return frame{fn, l, c}
}

// framesOfStack reads the frames of an Error from its stack property,
// which goja writes when the Error is made. That is the only place the
// frames survive once the error has rejected a promise. A line reads
// "\tat name (file:line:col(pc))" or "\tat file:line:col(pc)".
func (r *run) framesOfStack(obj *goja.Object) []frame {
	stack := obj.Get("stack")
	if stack == nil || !goja.IsString(stack) {
		return nil
	}
	path := r.script.src.path
	var frames []frame
	for line := range strings.SplitSeq(stack.String(), "\n") {
		at, ok := strings.CutPrefix(line, "\tat ")
		if !ok {
			continue
		}
		fn, loc := "", at
		if i := strings.LastIndex(at, " ("+path+":"); i >= 0 && strings.HasSuffix(at, ")") {
			fn, loc = at[:i], at[i+2:len(at)-1]
		}
		rest, ok := strings.CutPrefix(loc, path+":")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, '('); i >= 0 {
			rest = rest[:i]
		}
		ls, cs, _ := strings.Cut(rest, ":")
		l, err1 := strconv.Atoi(ls)
		c, err2 := strconv.Atoi(cs)
		if err1 != nil || err2 != nil {
			continue
		}
		frames = append(frames, r.frameAt(fn, l, c))
		if len(frames) == maxBacktrace {
			break
		}
	}
	return frames
}

// locate sets e's position to the innermost frame and its backtrace to all
// of them, innermost call last.
func (r *run) locate(e *lang.Error, frames []frame) {
	if len(frames) == 0 {
		return
	}
	e.Line, e.Column = frames[0].line, frames[0].col
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):\n")
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		if f.fn == "" {
			f.fn = "<anonymous>"
		}
		fmt.Fprintf(&b, "  %s:%d:%d: in %s\n", e.File, f.line, f.col, f.fn)
	}
	b.WriteString(e.Message)
	e.Backtrace = b.String()
}

// fatal turns an error that ended the run early into the error Run returns.
func (r *run) fatal(err error) error {
	var interrupted *goja.InterruptedError
	var overflow *goja.StackOverflowError
	var ex *goja.Exception
	var le *lang.Error
	var busy *busyError
	switch {
	case r.ctx.Err() != nil:
		return r.stopped()
	case errors.As(err, &interrupted) && errors.As(err, &busy):
		e := &lang.Error{File: r.script.src.path, Message: busy.Error(), Err: busy,
			Hint: "a workflow coordinates agents and should compute little; look for a loop that never ends, " +
				"or raise --js-busy-limit if it really needs that long"}
		r.locate(e, r.framesOf(interrupted.Stack()))
		return e
	case errors.As(err, &interrupted):
		return fmt.Errorf("workflow script interrupted: %w", err)
	case errors.As(err, &overflow):
		e := &lang.Error{File: r.script.src.path, Message: "RangeError: Maximum call stack size exceeded",
			Hint: "check for runaway recursion"}
		r.locate(e, r.framesOf(overflow.Stack()))
		return e
	case errors.As(err, &ex):
		return r.thrown(ex.Value())
	case errors.As(err, &le):
		return le
	}
	return fmt.Errorf("workflow script: %w", err)
}
