package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// Every host reads the meta from its syntax tree, never by running the
// script: the engine shows it (name, phases) before the user agrees to run
// anything. Each host walks its own tree into a Literal; the rules for what
// a meta may hold, and the messages for what it must not, live here so that
// they are the same in every language.

// LiteralHint is the hint of every error that rejects a meta for needing
// the script to run.
const LiteralHint = "meta is read without running the script; write the value out"

// A Pos is a position in a script: 1-based line and column.
type Pos struct {
	File   string
	Line   int
	Column int
}

// Errorf returns a static (load-time) error at p.
func (p Pos) Errorf(hint, format string, args ...any) *Error {
	return Errorf(p.File, p.Line, p.Column, hint, format, args...)
}

// A Literal is a value of the meta as written, with its position.
type Literal struct {
	Pos   Pos
	Value any // string, float64, bool, nil, []Literal or []Field
}

// A Field is one key and value of an object literal (a dict in Starlark).
type Field struct {
	Key   string
	Value Literal
}

// get returns the value of key in an object literal, reporting false when
// it is missing or null. Should a key repeat, the last one wins, as in
// JavaScript; Starlark rejects repeated keys before this is reached.
func (l Literal) get(key string) (Literal, bool) {
	fields, _ := l.Value.([]Field)
	var v Literal
	found := false
	for _, f := range fields {
		if f.Key == key {
			v, found = f.Value, true
		}
	}
	return v, found && v.Value != nil
}

// NotLiteral rejects the construct at p, which only running the script
// could evaluate; what names it, as in "a function call".
func NotLiteral(p Pos, what string) *Error {
	return p.Errorf(LiteralHint, "meta must be a pure literal: found %s", what)
}

// Concat folds x + y + ... at p, which real scripts use to split a long
// description over lines. Numbers add too, since both languages allow it.
// Hosts hand it a whole chain of + at once: folding it pair by pair copied
// the string so far at every step, quadratic in the chain's length.
func Concat(p Pos, operands ...Literal) (Literal, error) {
	if len(operands) == 0 {
		return Literal{}, NotLiteral(p, "an empty +")
	}
	switch operands[0].Value.(type) {
	case string:
		n := 0
		for _, o := range operands {
			s, ok := o.Value.(string)
			if !ok {
				return Literal{}, NotLiteral(p, "+ between values that are not both strings")
			}
			n += len(s)
		}
		var b strings.Builder
		b.Grow(n)
		for _, o := range operands {
			b.WriteString(o.Value.(string))
		}
		return Literal{p, b.String()}, nil
	case float64:
		sum := 0.0
		for _, o := range operands {
			f, ok := o.Value.(float64)
			if !ok {
				return Literal{}, NotLiteral(p, "+ between values that are not both strings")
			}
			sum += f
		}
		return Literal{p, sum}, nil
	}
	return Literal{}, NotLiteral(p, "+ between values that are not both strings")
}

// A Notation is how a language writes the meta. The rules are the same
// everywhere, but a hint shows code the user can paste, so it must be in
// the script's own language.
type Notation struct {
	Object string // what the language calls {...}: "an object" or "a dict"
	Phases string // hint for phases that are not a list
	Phase  string // hint for a phase that is neither an object nor a string
	Field  string // hint for a missing required field; %s is the key
	// True and False are how the language writes the booleans.
	True, False string
}

// DecodeMeta checks the evaluated meta m against Meta. Unknown keys are
// ignored; each error is at the position of the value at fault.
func DecodeMeta(m Literal, n Notation) (Meta, error) {
	var meta Meta
	var err error
	if meta.Name, err = n.text(m, "name", "meta.name", true); err != nil {
		return meta, err
	}
	if meta.Description, err = n.text(m, "description", "meta.description", true); err != nil {
		return meta, err
	}
	if meta.WhenToUse, err = n.text(m, "whenToUse", "meta.whenToUse", false); err != nil {
		return meta, err
	}
	if meta.Model, err = n.text(m, "model", "meta.model", false); err != nil {
		return meta, err
	}
	if v, ok := m.get("strict"); ok {
		if meta.Strict, ok = v.Value.(bool); !ok {
			return meta, v.Pos.Errorf("", "meta.strict must be %s or %s", n.True, n.False)
		}
	}
	if v, ok := m.get("maxCost"); ok {
		usd, isNum := v.Value.(float64)
		if !isNum || usd < 0 {
			return meta, v.Pos.Errorf("", "meta.maxCost must be a number of dollars, 0 or more")
		}
		meta.MaxCost = usd
	}
	phases, ok := m.get("phases")
	if !ok {
		return meta, nil
	}
	list, ok := phases.Value.([]Literal)
	if !ok {
		return meta, phases.Pos.Errorf(n.Phases, "meta.phases must be a list")
	}
	for i, p := range list {
		name := "meta.phases[" + strconv.Itoa(i) + "]"
		if title, ok := p.Value.(string); ok {
			if strings.TrimSpace(title) == "" {
				return meta, p.Pos.Errorf("", "%s must be a non-empty title", name)
			}
			meta.Phases = append(meta.Phases, Phase{Title: title})
			continue
		}
		if _, ok := p.Value.([]Field); !ok {
			return meta, p.Pos.Errorf(n.Phase, "%s must be %s or a string", name, n.Object)
		}
		var ph Phase
		if ph.Title, err = n.text(p, "title", name+".title", true); err != nil {
			return meta, err
		}
		if ph.Detail, err = n.text(p, "detail", name+".detail", false); err != nil {
			return meta, err
		}
		if ph.Model, err = n.text(p, "model", name+".model", false); err != nil {
			return meta, err
		}
		meta.Phases = append(meta.Phases, ph)
	}
	return meta, nil
}

// text reads the string field key of obj. A required field must be a
// non-empty string; an optional one may be missing or null.
func (n Notation) text(obj Literal, key, name string, required bool) (string, error) {
	v, ok := obj.get(key)
	if !ok {
		if required {
			return "", obj.Pos.Errorf(fmt.Sprintf(n.Field, key), "%s must be a non-empty string", name)
		}
		return "", nil
	}
	s, ok := v.Value.(string)
	switch {
	case !ok && required, ok && required && strings.TrimSpace(s) == "":
		return "", v.Pos.Errorf("", "%s must be a non-empty string", name)
	case !ok:
		return "", v.Pos.Errorf("", "%s must be a string", name)
	}
	return s, nil
}
