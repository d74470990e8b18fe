package simulate

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// maxCompileDepth bounds how deeply compiling may nest, which stops schemas
// whose $refs and allOfs loop forever.
const maxCompileDepth = 64

// compiler compiles one schema document.
type compiler struct {
	root any
	// refs memoizes the nodes of $ref targets, which is what lets
	// recursive schemas compile to finite graphs.
	refs  map[string]*node
	depth int
}

// compile compiles the schema document data.
func compile(data []byte) (*node, error) {
	root, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("invalid schema JSON: %v", err)
	}
	c := &compiler{root: root, refs: map[string]*node{}}
	return c.compile(root)
}

// compile compiles one schema of the document.
func (c *compiler) compile(v any) (*node, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxCompileDepth {
		return nil, fmt.Errorf("schema nests more than %d levels deep (does a $ref or allOf loop?)", maxCompileDepth)
	}
	switch v := v.(type) {
	case bool:
		return &node{never: !v}, nil
	case *object:
		if ref, ok := v.get("$ref").(string); ok && onlyAnnotates(v) {
			return c.ref(ref)
		}
		flat, how, err := c.flatten(v, 0)
		if err != nil {
			return nil, err
		}
		n, err := c.build(flat)
		if err != nil {
			return nil, err
		}
		n.never, n.narrowed = how.never, how.narrowed
		return n, nil
	}
	return nil, fmt.Errorf("a schema must be an object or a boolean, not %s", describe(v))
}

// onlyAnnotates reports whether a schema holding a $ref adds nothing but
// annotations to it, so that it compiles to its target's node.
func onlyAnnotates(o *object) bool {
	for _, k := range o.keys {
		switch k {
		case "$ref", "title", "description", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly":
		default:
			return false
		}
	}
	return true
}

// ref returns the node of the local reference ref. A reference already being
// compiled returns its node unfinished, which the recursion completes.
func (c *compiler) ref(ref string) (*node, error) {
	if n, ok := c.refs[ref]; ok {
		return n, nil
	}
	target, err := c.resolve(ref)
	if err != nil {
		return nil, err
	}
	n := new(node)
	c.refs[ref] = n
	compiled, err := c.compile(target)
	if err != nil {
		return nil, err
	}
	*n = *compiled
	return n, nil
}

// resolve finds the target of a local reference, a JSON pointer into the
// document such as "#/$defs/Item" or "#/definitions/Item".
func (c *compiler) resolve(ref string) (any, error) {
	pointer, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local; the simulator resolves only refs into the schema itself, like #/$defs/Name", ref)
	}
	v := c.root
	if pointer == "" {
		return v, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("$ref %q: anchors are not supported; use a JSON pointer like #/$defs/Name", ref)
	}
	// The pointer is a URI fragment, so it may be percent-encoded, and
	// within it ~1 stands for / and ~0 for ~.
	if unescaped, err := url.PathUnescape(pointer); err == nil {
		pointer = unescaped
	}
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	for _, token := range strings.Split(pointer[1:], "/") {
		token = unescape.Replace(token)
		switch cur := v.(type) {
		case *object:
			if !cur.has(token) {
				return nil, fmt.Errorf("$ref %q: no %q in the schema", ref, token)
			}
			v = cur.get(token)
		case []any:
			i, err := strconv.Atoi(token)
			if err != nil || i < 0 || i >= len(cur) {
				return nil, fmt.Errorf("$ref %q: no index %q in the schema", ref, token)
			}
			v = cur[i]
		default:
			return nil, fmt.Errorf("$ref %q: no %q in the schema", ref, token)
		}
	}
	return v, nil
}

// flattening tells how a schema was flattened.
type flattening struct {
	never    bool // one of the merged schemas is false
	narrowed bool // anyOf or oneOf had branches that were left out
}

// flatten merges into one object a schema and the schemas it combines with:
// its $ref target, every allOf branch, and the first branch of anyOf and
// oneOf.
func (c *compiler) flatten(o *object, depth int) (flat *object, how flattening, err error) {
	if depth > maxCompileDepth {
		return nil, how, fmt.Errorf("schema nests more than %d levels deep (does a $ref or allOf loop?)", maxCompileDepth)
	}
	flat = newObject()
	var parts []any
	for _, k := range o.keys {
		v := o.get(k)
		switch k {
		case "$ref":
			ref, ok := v.(string)
			if !ok {
				return nil, how, fmt.Errorf("$ref must be a string, not %s", describe(v))
			}
			target, err := c.resolve(ref)
			if err != nil {
				return nil, how, err
			}
			parts = append(parts, target)
		case "allOf":
			branches, _ := v.([]any)
			parts = append(parts, branches...)
		case "anyOf", "oneOf":
			if branches, _ := v.([]any); len(branches) > 0 {
				parts = append(parts, branches[0])
				how.narrowed = how.narrowed || len(branches) > 1
			}
		default:
			flat.set(k, v)
		}
	}
	for _, part := range parts {
		switch part := part.(type) {
		case bool:
			how.never = how.never || !part
		case *object:
			sub, subHow, err := c.flatten(part, depth+1)
			if err != nil {
				return nil, how, err
			}
			how.never = how.never || subHow.never
			how.narrowed = how.narrowed || subHow.narrowed
			flat = merge(flat, sub)
		default:
			return nil, how, fmt.Errorf("a schema must be an object or a boolean, not %s", describe(part))
		}
	}
	return flat, how, nil
}

// merge returns dst with the keywords of src added. Properties and required
// are united; for any other keyword both define, dst's wins. dst's own maps
// are never changed, since they may belong to the schema document.
func merge(dst, src *object) *object {
	out := newObject()
	for _, k := range dst.keys {
		out.set(k, dst.get(k))
	}
	for _, k := range src.keys {
		v := src.get(k)
		if !out.has(k) {
			out.set(k, v)
			continue
		}
		switch k {
		case "properties":
			mine, ok1 := out.get(k).(*object)
			theirs, ok2 := v.(*object)
			if ok1 && ok2 {
				props := newObject()
				for _, name := range mine.keys {
					props.set(name, mine.get(name))
				}
				for _, name := range theirs.keys {
					if !props.has(name) {
						props.set(name, theirs.get(name))
					}
				}
				out.set(k, props)
			}
		case "required":
			mine, _ := out.get(k).([]any)
			theirs, _ := v.([]any)
			names := append([]any(nil), mine...)
			for _, name := range theirs {
				if !containsValue(names, name) {
					names = append(names, name)
				}
			}
			out.set(k, names)
		}
	}
	return out
}

func containsValue(list []any, v any) bool {
	for _, e := range list {
		if e == v {
			return true
		}
	}
	return false
}
