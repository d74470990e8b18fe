package jsvm

import (
	"errors"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/dynworkflow/dynworkflow/lang"
)

const (
	importHint = "inline the helper code or call workflow()"
	tsHint     = "remove the type annotations and declarations"
)

// parse parses the script as the body of an async function and returns the
// body's statements. blank is the offset of the meta's export keyword, or -1.
func parse(src *source, blank int) (*ast.Program, []ast.Statement, error) {
	n := 0
	if blank >= 0 {
		n = len("export")
	}
	// Source maps are off: a script must not make the parser read files.
	prog, err := parser.ParseFile(nil, src.path, src.wrapped(blank, n), 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, nil, syntaxError(src, err)
	}
	// The wrapper holds exactly one function, unless the script closed it
	// with a brace of its own.
	if len(prog.Body) == 1 {
		if body := wrapperBody(prog.Body[0]); body != nil && src.offset(body.RightBrace) == len(src.text)+1 {
			return prog, body.List, nil
		}
	}
	off := len(src.text)
	if len(prog.Body) == 0 {
		return nil, nil, src.errorf(off, "", "SyntaxError: the script is empty")
	}
	if body := wrapperBody(prog.Body[0]); body != nil {
		off = src.offset(body.RightBrace)
	}
	return nil, nil, src.errorf(off, "check that every { has its }", "SyntaxError: unexpected }: it closes a block that was never opened")
}

// wrapperBody returns the body of the async arrow function that wraps the
// script, if st is that function.
func wrapperBody(st ast.Statement) *ast.BlockStatement {
	if st, ok := st.(*ast.ExpressionStatement); ok {
		if fn, ok := st.Expression.(*ast.ArrowFunctionLiteral); ok {
			body, _ := fn.Body.(*ast.BlockStatement)
			return body
		}
	}
	return nil
}

// syntaxError turns a parse error into a positioned error that says what to
// do. goja stops at the first construct it cannot parse, so an import, a
// second export or TypeScript shows up as a plain syntax error at that
// construct; looking at the text there tells which it was.
func syntaxError(src *source, err error) error {
	var first *parser.Error
	var list parser.ErrorList
	switch {
	case errors.As(err, &list) && len(list) > 0:
		first = list[0]
	case errors.As(err, &first):
	default:
		return &lang.Error{File: src.path, Message: "SyntaxError: " + err.Error(), Static: true}
	}
	off := src.fromWrapped(first.Position.Line, first.Position.Column)
	if brace := strayBrace(src.text); brace >= 0 && brace < off {
		return src.errorf(brace, "check that every { has its }", "SyntaxError: unexpected }: it closes a block that was never opened")
	}
	rest := src.text[off:]
	switch {
	case off >= len(src.text):
		return src.errorf(off, "check for an unclosed (, [, {, string, template or comment",
			"SyntaxError: unexpected end of the script")
	case hasWord(rest, "import"):
		return src.errorf(off, importHint, "import is not supported in workflow scripts")
	case findMetaExport(rest) == 0:
		return src.errorf(off, "move it to the top of the file", "meta must be the first statement of the script")
	case hasWord(rest, "export") && off == skipBlank(src.text, 0):
		// The script opens with an export, but not with export const meta.
		return src.errorf(off, missingHint, "the script has no meta")
	case hasWord(rest, "export"):
		return src.errorf(off, "remove the export keyword; only meta is exported", "export is only allowed on meta")
	}
	if msg, hint, at := unsupported(first.Message, src.text, off); msg != "" {
		return src.errorf(at, hint, "%s", msg)
	}
	if what := typeScript(src.text, off); what != "" {
		return src.errorf(off, tsHint, "TypeScript syntax is not supported; workflow scripts are plain JavaScript: found %s", what)
	}
	hint := ""
	if strings.Contains(first.Message, "ILLEGAL") {
		hint = "check for an unterminated string or a character JavaScript does not allow"
	}
	return src.errorf(off, hint, "SyntaxError: %s", first.Message)
}

// compileError positions an error found while compiling the parsed script,
// such as a const declared twice.
func compileError(src *source, err error) error {
	var syn *goja.CompilerSyntaxError
	if errors.As(err, &syn) && syn.File != nil {
		off := syn.Offset - len(bodyPrefix)
		if msg, hint, at := unsupported(syn.Message, src.text, off); msg != "" {
			return src.errorf(at, hint, "%s", msg)
		}
		return src.errorf(off, "", "SyntaxError: %s", syn.Message)
	}
	var ref *goja.CompilerReferenceError
	if errors.As(err, &ref) && ref.File != nil {
		return src.errorf(ref.Offset-len(bodyPrefix), "", "ReferenceError: %s", ref.Message)
	}
	return &lang.Error{File: src.path, Message: err.Error(), Static: true}
}

const (
	asyncGeneratorMsg  = "async generators (async function*, async *method()) are not supported: goja, the JavaScript engine of this runtime, cannot run them"
	asyncGeneratorHint = "build an array, or use a plain function* generator, and await each item in a for...of loop"
	forAwaitMsg        = "for await...of is not supported: goja, the JavaScript engine of this runtime, cannot run it"
	forAwaitHint       = "loop with for (const p of promises) { const x = await p; ... }, or await Promise.all(promises) first"
)

// unsupported recognises, from the parser's message and the text at off,
// the syntax goja cannot run though Node can, and says so plainly: goja
// calls an async generator "not supported yet", and fails on for await
// and on an async generator method with a bare "Unexpected token"; and
// an await in a function that is not async, where await is a plain name,
// so that await agent(...) is two names in a row: "Unexpected identifier".
// at is where to point: off, or the await.
func unsupported(parserMsg, text string, off int) (msg, hint string, at int) {
	before := strings.TrimRight(text[:min(max(off, 0), len(text))], " \t\r\n")
	switch {
	case strings.Contains(parserMsg, "Async generators are not supported"),
		parserMsg == "Unexpected token *" && strings.HasSuffix(strings.TrimRight(before, " \t\r\n*"), "async"):
		return asyncGeneratorMsg, asyncGeneratorHint, off
	case parserMsg == "Unexpected token await" && strings.HasSuffix(before, "for"):
		return forAwaitMsg, forAwaitHint, off
	case strings.HasPrefix(parserMsg, "Unexpected") && endsWithWord(before, "await"):
		return awaitMsg, awaitHint, len(before) - len("await")
	}
	return "", "", off
}

const (
	awaitMsg  = "SyntaxError: await is only valid in async functions and at the top level of the script: the function around it is not async"
	awaitHint = "make that function async (async function name() {...}, async (x) => ...) and await its calls, or move the await to the top level"
)

// endsWithWord reports whether s ends with word as a whole word.
func endsWithWord(s, word string) bool {
	if !strings.HasSuffix(s, word) {
		return false
	}
	rest := s[:len(s)-len(word)]
	if rest == "" {
		return true
	}
	c := rest[len(rest)-1]
	return !(c == '_' || c == '$' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}
