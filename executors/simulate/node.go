package simulate

import (
	"regexp"
	"regexp/syntax"
)

// A schema is compiled once into a graph of nodes that says what to generate,
// so that generating a value only walks the graph. Compiling resolves local
// $refs, merges allOf, picks the first branch of anyOf and oneOf, and decides
// each node's type.

// kind is the JSON type a node generates.
type kind uint8

const (
	kindAny kind = iota // the schema allows anything; we write null
	kindNull
	kindBoolean
	kindInteger
	kindNumber
	kindString
	kindObject
	kindArray
)

// types is a set of JSON Schema type names, one bit per kind.
type types uint8

func (t types) has(k kind) bool { return t&(1<<k) != 0 }

// kindNamed returns the kind of a JSON Schema type name.
func kindNamed(name string) (kind, bool) {
	switch name {
	case "null":
		return kindNull, true
	case "boolean":
		return kindBoolean, true
	case "integer":
		return kindInteger, true
	case "number":
		return kindNumber, true
	case "string":
		return kindString, true
	case "object":
		return kindObject, true
	case "array":
		return kindArray, true
	}
	return kindAny, false
}

// node is one compiled schema.
type node struct {
	// never is set by the schema false, which no value satisfies.
	never bool
	// narrowed is set when anyOf or oneOf offered branches that were not
	// taken, so that the other keywords do not tell all the schema allows.
	narrowed bool
	kind     kind
	// typed holds the types the schema's "type" allows, or zero when it
	// has no "type"; an invalid answer picks a type outside it.
	typed types
	// choices are the encoded values of enum, or of const.
	choices [][]byte

	// Objects.
	props    []property
	required int   // how many of props are required
	extra    *node // the schema of additional properties, or nil
	closed   bool  // additionalProperties is false
	minProps int
	maxProps int // -1 when unbounded

	// Arrays.
	prefix      []*node // positional item schemas
	items       *node   // the schema of other items, or nil
	itemsClosed bool    // no items beyond prefix are allowed
	minItems    int
	maxItems    int // -1 when unbounded
	unique      bool

	// Numbers.
	minimum, maximum       float64
	hasMinimum, hasMaximum bool
	exclusiveMinimum       bool
	exclusiveMaximum       bool
	multipleOf             float64

	// Strings.
	minLength int
	maxLength int // -1 when unbounded
	format    string
	pattern   *regexp.Regexp
	patternRE *syntax.Regexp // the parsed pattern, to build matching strings
}

// property is one property of an object node.
type property struct {
	name     string
	key      []byte // the quoted name and a colon, ready to write
	schema   *node
	required bool
}

// addProperty adds a property to an object node.
func (n *node) addProperty(name string, schema *node, required bool) {
	key := append(appendQuoted(nil, name), ':')
	n.props = append(n.props, property{name: name, key: key, schema: schema, required: required})
	if required {
		n.required++
	}
}

// hasProperty reports whether an object node lists the property name.
func (n *node) hasProperty(name string) bool {
	for _, p := range n.props {
		if p.name == name {
			return true
		}
	}
	return false
}

// extraSchema is the schema of properties the object schema does not list.
func (n *node) extraSchema() *node {
	if n.extra != nil {
		return n.extra
	}
	return &node{kind: kindString, maxProps: -1, maxItems: -1, maxLength: -1}
}
