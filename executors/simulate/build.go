package simulate

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
)

// Building turns a flattened schema, one without $ref, allOf, anyOf or
// oneOf, into a node.

// build compiles a flattened schema.
func (c *compiler) build(o *object) (*node, error) {
	n := &node{maxProps: -1, maxItems: -1, maxLength: -1}

	if v, ok := o.values["const"]; ok {
		n.choices = [][]byte{appendJSON(nil, v)}
	} else if list, ok := o.get("enum").([]any); ok && len(list) > 0 {
		for _, v := range list {
			n.choices = append(n.choices, appendJSON(nil, v))
		}
	}

	switch t := o.get("type").(type) {
	case string:
		k, ok := kindNamed(t)
		if !ok {
			return nil, fmt.Errorf("unknown type %q", t)
		}
		n.kind, n.typed = k, 1<<k
	case []any:
		// A model answering a nullable type gives a value, not null, so
		// the first non-null type is the one to generate.
		n.kind = kindAny
		for _, v := range t {
			name, _ := v.(string)
			k, ok := kindNamed(name)
			if !ok {
				return nil, fmt.Errorf("unknown type %s in the type list", appendJSON(nil, v))
			}
			n.typed |= 1 << k
			if n.kind == kindAny || n.kind == kindNull && k != kindNull {
				n.kind = k
			}
		}
	case nil:
		n.kind = inferKind(o)
	default:
		return nil, fmt.Errorf("type must be a string or a list of strings, not %s", describe(t))
	}
	if n.typed.has(kindNumber) {
		n.typed |= 1 << kindInteger // every integer is a number
	}

	var err error
	switch n.kind {
	case kindObject:
		err = c.buildObject(n, o)
	case kindArray:
		err = c.buildArray(n, o)
	case kindInteger, kindNumber:
		buildNumber(n, o)
	case kindString:
		buildString(n, o)
	}
	return n, err
}

// inferKind guesses the type of a schema without "type" from its keywords.
func inferKind(o *object) kind {
	for _, k := range o.keys {
		switch k {
		case "properties", "required", "additionalProperties", "minProperties", "maxProperties", "patternProperties":
			return kindObject
		case "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains":
			return kindArray
		case "minLength", "maxLength", "pattern", "format":
			return kindString
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			return kindNumber
		}
	}
	return kindAny
}

// buildObject reads the keywords of an object schema.
func (c *compiler) buildObject(n *node, o *object) error {
	required := map[string]bool{}
	if list, ok := o.get("required").([]any); ok {
		for _, name := range list {
			if s, ok := name.(string); ok {
				required[s] = true
			}
		}
	}
	switch extra := o.get("additionalProperties").(type) {
	case bool:
		n.closed = !extra
	case *object:
		x, err := c.compile(extra)
		if err != nil {
			return fmt.Errorf("additionalProperties: %v", err)
		}
		n.extra = x
	}
	if props, ok := o.get("properties").(*object); ok {
		for _, name := range props.keys {
			schema, err := c.compile(props.get(name))
			if err != nil {
				return fmt.Errorf("property %q: %v", name, err)
			}
			n.addProperty(name, schema, required[name])
		}
	}
	// Required names without a schema of their own follow the schema of
	// additional properties, or are strings.
	if list, ok := o.get("required").([]any); ok {
		for _, name := range list {
			s, _ := name.(string)
			if s != "" && !n.hasProperty(s) {
				n.addProperty(s, n.extraSchema(), true)
			}
		}
	}
	n.minProps = intKeyword(o, "minProperties", 0)
	n.maxProps = intKeyword(o, "maxProperties", -1)
	return nil
}

// buildArray reads the keywords of an array schema.
func (c *compiler) buildArray(n *node, o *object) error {
	compileList := func(keyword string, list []any) error {
		for i, v := range list {
			item, err := c.compile(v)
			if err != nil {
				return fmt.Errorf("%s[%d]: %v", keyword, i, err)
			}
			n.prefix = append(n.prefix, item)
		}
		return nil
	}
	if list, ok := o.get("prefixItems").([]any); ok {
		if err := compileList("prefixItems", list); err != nil {
			return err
		}
	}
	switch items := o.get("items").(type) {
	case []any: // draft 4 to 2019-09: items as a tuple
		if err := compileList("items", items); err != nil {
			return err
		}
		if extra, ok := o.get("additionalItems").(bool); ok && !extra {
			n.itemsClosed = true
		}
	case bool:
		n.itemsClosed = !items
	case *object:
		item, err := c.compile(items)
		if err != nil {
			return fmt.Errorf("items: %v", err)
		}
		n.items = item
	}
	n.minItems = intKeyword(o, "minItems", 0)
	n.maxItems = intKeyword(o, "maxItems", -1)
	n.unique, _ = o.get("uniqueItems").(bool)
	return nil
}

// buildNumber reads the keywords of a number or integer schema.
func buildNumber(n *node, o *object) {
	n.minimum, n.hasMinimum = numberKeyword(o, "minimum")
	n.maximum, n.hasMaximum = numberKeyword(o, "maximum")
	// Draft 4 makes minimum and maximum exclusive with booleans; later
	// drafts give exclusive bounds of their own, of which the stricter
	// bound wins.
	switch v := o.get("exclusiveMinimum").(type) {
	case bool:
		n.exclusiveMinimum = v && n.hasMinimum
	case json.Number:
		if x, err := v.Float64(); err == nil && (!n.hasMinimum || x >= n.minimum) {
			n.minimum, n.hasMinimum, n.exclusiveMinimum = x, true, true
		}
	}
	switch v := o.get("exclusiveMaximum").(type) {
	case bool:
		n.exclusiveMaximum = v && n.hasMaximum
	case json.Number:
		if x, err := v.Float64(); err == nil && (!n.hasMaximum || x <= n.maximum) {
			n.maximum, n.hasMaximum, n.exclusiveMaximum = x, true, true
		}
	}
	if m, ok := numberKeyword(o, "multipleOf"); ok && m > 0 {
		n.multipleOf = m
	}
}

// buildString reads the keywords of a string schema.
func buildString(n *node, o *object) {
	n.minLength = intKeyword(o, "minLength", 0)
	n.maxLength = intKeyword(o, "maxLength", -1)
	n.format, _ = o.get("format").(string)
	if p, ok := o.get("pattern").(string); ok {
		// Patterns are ECMA 262 regular expressions; those that Go's RE2
		// cannot read are ignored, and the engine's validation decides.
		if re, err := regexp.Compile(p); err == nil {
			if tree, err := syntax.Parse(p, syntax.Perl); err == nil {
				n.pattern, n.patternRE = re, tree.Simplify()
			}
		}
	}
}

// numberKeyword returns the value of a numeric keyword.
func numberKeyword(o *object, keyword string) (float64, bool) {
	v, ok := o.get(keyword).(json.Number)
	if !ok {
		return 0, false
	}
	x, err := v.Float64()
	return x, err == nil && !math.IsInf(x, 0)
}

// intKeyword returns the value of a count keyword such as minItems, or def
// when it is absent.
func intKeyword(o *object, keyword string, def int) int {
	x, ok := numberKeyword(o, keyword)
	if !ok || x < 0 {
		return def
	}
	return int(min(x, math.MaxInt32))
}

// describe names the JSON type of a decoded value, for error messages.
func describe(v any) string {
	switch v.(type) {
	case *object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
