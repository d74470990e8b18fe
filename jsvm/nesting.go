package jsvm

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/lang"
)

// goja parses and compiles by recursive descent, one Go call (or several)
// per level of nesting, and a Go stack overflow is fatal: no recover
// catches it. A script of 600,000 nested [ took the whole process down,
// and so do 600,000 ! in a row, a = a = ..., new new ..., if (x) if (x)
// ..., or a.a.a... (a left-deep tree that the compiler walks). So before
// goja sees a script, sourceNesting measures how deeply it nests, in one
// pass over its tokens, and a script over the limit is refused where it
// goes over.
//
// The measure is an upper bound of the depth of goja's syntax tree, kept
// cheap: each open bracket, and each operator, keyword or member access
// within one expression, counts a level; a comma or a semicolon ends the
// run of operators at its bracket level, as does the end of a line that
// ends a statement. So `a + b * c` counts 2 and `[[1], [2]]` counts 2,
// while 10,000 statements in a row count 1 each. The tokenizer follows
// strings, template literals (with their ${...}), comments and regular
// expression literals, telling a regular expression from a division by
// what came before the slash, as JavaScript's grammar does: a bracket in a
// string or a pattern is not nesting.

// token classes: what the last significant token was. They decide whether
// a slash starts a regular expression and whether a brace opens a block.
const (
	tkStart     = iota // start of the text, or of a statement: ; { and a block's }
	tkOperand          // an operand ended: a name, a literal, ) ] or an expression's }
	tkOperator         // an operator, an open bracket, a comma: an operand comes next
	tkDot              // . or ?.: a property name comes next
	tkColon            // : outside a conditional: a label, a case, an object key
	tkParamsEnd        // the ) closing a function's parameters: its body comes next
)

// brackets on the nesting stack.
type bracket struct {
	open byte // ( [ { or $ for a template's ${
	// base is the depth just inside the bracket; ops counts the operators
	// since the last comma or semicolon at this level.
	base, ops int
	// ternary counts the ? still waiting for their :.
	ternary int
	// header marks the ( of if, while, for and with: a statement follows
	// its ). params marks a function's parameter list, decl a function or
	// class declared as a statement. block marks a { that opens a block.
	header, params, decl, block, body bool
}

type nestingScanner struct {
	text  string
	limit int
	stack []bracket
	cur   bracket // the innermost level; the script's own level at first
	prev  int     // the class of the last significant token
	// newline is set when a line ended since the last token.
	newline bool
	// function and class note the keyword, to mark the brackets that
	// follow it; functionDecl says it began a statement.
	function, class, functionDecl bool
	// headerNext marks the next ( as a control statement's header.
	headerNext bool
	// resetNext resets the operator run unless the next token continues
	// the statement a block ended (else, catch, finally, while).
	resetNext bool
}

// sourceNesting returns the offset in text where the nesting first goes
// over limit, or -1 when it never does.
func sourceNesting(text string, limit int) int {
	s := &nestingScanner{text: text, limit: limit, prev: tkStart, cur: bracket{block: true}}
	return s.scan()
}

func (s *nestingScanner) depth() int { return s.cur.base + s.cur.ops }

// op counts one operator at the current level; it reports whether the
// nesting is now over the limit.
func (s *nestingScanner) op() bool {
	s.cur.ops++
	return s.depth() > s.limit
}

// push opens a bracket; it reports whether the nesting is now over the
// limit.
func (s *nestingScanner) push(b bracket) bool {
	b.base = s.depth() + 1
	s.stack = append(s.stack, s.cur)
	s.cur = b
	return b.base > s.limit
}

// pop closes the innermost bracket and returns it.
func (s *nestingScanner) pop() bracket {
	b := s.cur
	if n := len(s.stack); n > 0 {
		s.cur = s.stack[n-1]
		s.stack = s.stack[:n-1]
	}
	return b
}

// endStatement ends the run of operators at the current level.
func (s *nestingScanner) endStatement() {
	s.cur.ops, s.cur.ternary = 0, 0
}

func (s *nestingScanner) scan() int {
	text := s.text
	i := 0
	if strings.HasPrefix(text, "#!") {
		i = lineEnd(text, 0)
	}
	for i < len(text) {
		c := text[i]
		// Blanks and line ends.
		if n := blank(text[i:]); n > 0 {
			if c == '\n' || c == '\r' || isLineSep(text[i:]) {
				s.newline = true
			}
			i += n
			continue
		}
		// Comments.
		if c == '/' && i+1 < len(text) && text[i+1] == '/' {
			i = lineEnd(text, i)
			continue
		}
		if c == '/' && i+1 < len(text) && text[i+1] == '*' {
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return -1 // unterminated: the parser says so
			}
			if strings.ContainsAny(text[i+2:i+2+end], "\n\r\u2028\u2029") {
				s.newline = true
			}
			i += 2 + end + 2
			continue
		}
		start := i
		s.beforeToken(c, text[i:])
		switch {
		case c == '\'' || c == '"':
			i = skipString(text, i, c)
			s.prev = tkOperand
		case c == '`':
			if off := s.template(&i); off >= 0 {
				return off
			}
		case c == '/':
			if s.prev == tkOperand || s.prev == tkDot {
				i = skipPunctuator(text, i)
				if s.op() {
					return start
				}
				s.prev = tkOperator
				break
			}
			end, over := s.regexp(i)
			if over {
				return start
			}
			i = end
			s.prev = tkOperand
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9':
			i = skipNumber(text, i)
			s.prev = tkOperand
		case isWordStart(text[i:]):
			end := skipWord(text, i)
			if s.word(text[i:end]) {
				return start
			}
			i = end
		default:
			end, over := s.punctuator(i)
			if over {
				return start
			}
			i = end
		}
		s.newline = false
	}
	return -1
}

// beforeToken applies automatic semicolon insertion as far as nesting
// cares: an operand followed by a line end ends the statement unless the
// next token can only continue it. And a block's } ends its statement
// unless else, catch, finally or (after do) while follows.
func (s *nestingScanner) beforeToken(c byte, rest string) {
	if s.resetNext {
		s.resetNext = false
		if !hasWord(rest, "else") && !hasWord(rest, "catch") && !hasWord(rest, "finally") && !hasWord(rest, "while") {
			s.endStatement()
		}
	}
	if s.newline && s.prev == tkOperand && !continuesLine(c, rest) {
		s.endStatement()
		s.prev = tkStart
	}
}

// continuesLine reports whether a token that starts a line continues the
// statement of the line before, which ended with an operand: a binary
// operator, a call, a member access do; a name, a literal, a { or a prefix
// operator cannot, so the line end ended the statement.
func continuesLine(c byte, rest string) bool {
	switch {
	case strings.HasPrefix(rest, "++"), strings.HasPrefix(rest, "--"), c == '!', c == '~':
		return false
	case strings.IndexByte("([`.,;?:=+-*/%&|^<>)]}", c) >= 0:
		return true
	}
	return hasWord(rest, "in") || hasWord(rest, "instanceof")
}

// word handles a name or a keyword; it reports whether the nesting went
// over the limit.
func (s *nestingScanner) word(w string) bool {
	if s.prev == tkDot {
		s.prev = tkOperand // a property name, whatever it spells
		return false
	}
	atStatement := s.prev == tkStart || s.prev == tkColon && s.cur.block
	switch w {
	case "if", "for", "while", "with", "switch":
		s.headerNext = true
		s.prev = tkOperator
		return s.op()
	case "do":
		s.prev = tkStart
		return s.op()
	case "else", "try", "finally":
		s.prev = tkStart
	case "catch":
		s.headerNext = true
		s.prev = tkOperator
	case "typeof", "void", "delete", "new", "await", "yield", "instanceof", "in", "of":
		s.prev = tkOperator
		return s.op()
	case "return", "throw", "case", "default", "let", "const", "var", "extends", "export", "import":
		s.prev = tkOperator
	case "function":
		s.function, s.functionDecl = true, atStatement
		s.prev = tkOperator
	case "class":
		s.class, s.functionDecl = true, atStatement
		s.prev = tkOperator
	default:
		s.prev = tkOperand
		if s.function || s.class {
			// The function's or the class's name: what follows is still
			// its parameters or its body.
			s.prev = tkOperator
		}
	}
	return false
}

// punctuator handles the punctuator at i; it returns where it ends and
// whether the nesting went over the limit.
func (s *nestingScanner) punctuator(i int) (int, bool) {
	text := s.text
	c := text[i]
	if c != '(' && c != '{' && c != '*' {
		s.function, s.class = false, false
	}
	switch c {
	case '(':
		b := bracket{open: '('}
		call := s.prev == tkOperand
		switch {
		case s.headerNext:
			b.header = true
		case s.function:
			b.params, b.decl = true, s.functionDecl
		}
		s.headerNext, s.function = false, false
		if call && s.op() {
			return i, true
		}
		s.prev = tkOperator
		return i + 1, s.push(b)
	case '[':
		if s.prev == tkOperand && s.op() {
			return i, true
		}
		s.prev = tkOperator
		return i + 1, s.push(bracket{open: '['})
	case '{':
		b := bracket{open: '{'}
		switch {
		case s.prev == tkParamsEnd:
			b.body, b.decl = true, s.functionDecl
			b.block = b.decl
		case s.class:
			b.body, b.decl = true, s.functionDecl
			b.block = b.decl
			s.class = false
		case s.prev == tkStart, s.prev == tkColon && s.cur.block:
			b.block = true
		}
		s.prev = tkStart
		return i + 1, s.push(b)
	case ')', ']', '}':
		if c == '}' && s.cur.open == '$' {
			// The end of a template's ${...}: the template goes on.
			s.pop()
			end, over := s.templateText(i + 1)
			return end, over
		}
		b := s.pop()
		switch {
		case c == ')' && b.header:
			s.prev = tkStart
		case c == ')' && b.params:
			s.prev = tkParamsEnd
			s.functionDecl = b.decl
		case c == '}' && (b.block || b.decl):
			s.prev = tkStart
			s.resetNext = true
		default:
			s.prev = tkOperand
		}
		return i + 1, false
	case ';':
		s.endStatement()
		s.prev = tkStart
		return i + 1, false
	case ',':
		s.cur.ops = 0
		s.prev = tkOperator
		return i + 1, false
	case '?':
		if strings.HasPrefix(text[i:], "?.") && !(i+2 < len(text) && text[i+2] >= '0' && text[i+2] <= '9') {
			s.prev = tkDot
			return i + 2, s.op()
		}
		end := skipPunctuator(text, i)
		if end == i+1 {
			s.cur.ternary++
		}
		s.prev = tkOperator
		return end, s.op()
	case ':':
		if s.cur.ternary > 0 {
			s.cur.ternary--
			s.prev = tkOperator
			return i + 1, s.op()
		}
		s.prev = tkColon
		return i + 1, false
	case '.':
		if strings.HasPrefix(text[i:], "...") {
			s.prev = tkOperator
			return i + 3, s.op()
		}
		s.prev = tkDot
		return i + 1, s.op()
	case '#':
		// A private name, #x.
		end := skipWord(text, i+1)
		s.prev = tkOperand
		return max(end, i+1), false
	}
	end := skipPunctuator(text, i)
	tok := text[i:end]
	switch {
	case tok == "++" || tok == "--":
		if s.prev == tkOperand {
			return end, false // postfix: the operand goes on
		}
	case tok == "=>":
		s.prev = tkParamsEnd // an arrow's body, block or expression, follows
		s.functionDecl = false
		return end, s.op()
	}
	s.prev = tkOperator
	return end, s.op()
}

// template scans a template literal from its opening backtick at *i.
func (s *nestingScanner) template(i *int) int {
	end, over := s.templateText(*i + 1)
	if over {
		return *i
	}
	*i = end
	return -1
}

// templateText scans template text from i up to its closing backtick, or
// up to a ${, whose expression the main loop then scans as code.
func (s *nestingScanner) templateText(i int) (int, bool) {
	text := s.text
	for ; i < len(text); i++ {
		switch {
		case text[i] == '\\':
			i++
		case text[i] == '`':
			s.prev = tkOperand
			return i + 1, false
		case text[i] == '$' && i+1 < len(text) && text[i+1] == '{':
			s.prev = tkOperator
			return i + 2, s.push(bracket{open: '$'})
		}
	}
	return i, false
}

// regexp skips the regular expression literal at i and its flags. The
// brackets of its pattern count too while it lasts, so that a slash taken
// for the start of a pattern can hide no nesting from the count.
func (s *nestingScanner) regexp(i int) (int, bool) {
	text := s.text
	inClass, local := false, 0
	for i++; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
			continue
		case '\n', '\r':
			return i, false // unterminated: the parser says so
		case '[', '(', '{':
			local++
			if s.depth()+local > s.limit {
				return i, true
			}
		case ']', ')', '}':
			local = max(0, local-1)
		}
		switch text[i] {
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if !inClass {
				return skipWord(text, i+1), false
			}
		}
	}
	return i, false
}

// blank returns the length of the blank or line end at the start of s.
func blank(s string) int {
	switch s[0] {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return 1
	}
	if s[0] < utf8.RuneSelf {
		return 0
	}
	r, n := utf8.DecodeRuneInString(s)
	switch r {
	case 0xa0, 0xfeff, 0x2028, 0x2029, 0x1680, 0x202f, 0x205f, 0x3000:
		return n
	}
	if r >= 0x2000 && r <= 0x200a {
		return n
	}
	return 0
}

func isLineSep(s string) bool {
	return strings.HasPrefix(s, "\u2028") || strings.HasPrefix(s, "\u2029")
}

// lineEnd returns the offset of the line end at or after i.
func lineEnd(text string, i int) int {
	if j := strings.IndexAny(text[i:], "\n\r\u2028\u2029"); j >= 0 {
		return i + j
	}
	return len(text)
}

// skipString returns the offset just past the string literal at i, or of
// the line end that cuts it short.
func skipString(text string, i int, quote byte) int {
	for i++; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
			if i+1 < len(text) && text[i] == '\r' && text[i+1] == '\n' {
				i++
			}
		case quote:
			return i + 1
		case '\n', '\r':
			return i
		}
	}
	return i
}

func skipNumber(text string, i int) int {
	start := i
	hex := strings.HasPrefix(text[i:], "0x") || strings.HasPrefix(text[i:], "0X")
	for i < len(text) {
		c := text[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '.':
			i++
		case (c == '+' || c == '-') && i > start && (text[i-1] == 'e' || text[i-1] == 'E') && !hex:
			i++
		default:
			return i
		}
	}
	return i
}

func isWordStart(s string) bool {
	c := s[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '\\' || c >= utf8.RuneSelf && blank(s) == 0
}

// skipWord returns the offset just past the name at i (or i, for none).
func skipWord(text string, i int) int {
	for i < len(text) {
		c := text[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '$':
			i++
		case c == '\\': // \uXXXX
			i += 2
		case c >= utf8.RuneSelf && blank(text[i:]) == 0:
			_, n := utf8.DecodeRuneInString(text[i:])
			i += n
		default:
			return min(i, len(text))
		}
	}
	return len(text)
}

// punctuators lists JavaScript's operators longest first, so that the
// first match is the token.
var punctuators = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "++", "--", "+=", "-=", "*=", "/=", "%=",
	"&=", "|=", "^=", "**", "<<", ">>",
}

// skipPunctuator returns the offset just past the operator at i.
func skipPunctuator(text string, i int) int {
	rest := text[i:]
	for _, p := range punctuators {
		if strings.HasPrefix(rest, p) {
			return i + len(p)
		}
	}
	if rest[0] >= utf8.RuneSelf {
		_, n := utf8.DecodeRuneInString(rest)
		return i + n
	}
	return i + 1
}

// nestingError is the error of a script whose nesting goes over limit at
// off.
func (s *source) nestingError(off, limit int) *lang.Error {
	e := s.errorf(off, fmt.Sprintf("flatten it, or raise the limit with --max-nesting, up to %d", lang.MaxNestingCeiling),
		"the script nests more than %d levels deep here (brackets, operators and statements inside one another), the limit of this runtime", limit)
	e.Err = &lang.NestingError{What: "the script", Limit: limit}
	return e
}
