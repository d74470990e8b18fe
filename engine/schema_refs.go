package engine

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// A schema whose $ref leads back to itself without descending into the
// answer, such as {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}},
// can never accept an answer: every agent paid to answer it would fail
// validation (and a validator without cycle detection recurses until the
// stack overflows, which ends the whole process: FuzzSchema found that in
// the one we used before). Such a cycle is refused when the schema is
// compiled, before any agent runs. A recursive schema that descends on its
// way round (a tree whose children are nodes) is fine.

// sameInstance are the keywords whose subschemas apply to the same value
// as the schema holding them.
var sameInstance = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true,
	"else": true, "dependentSchemas": true}

// checkRefCycles reports a $ref cycle of doc that does not descend into
// the answer, and refuses refs it cannot follow: only refs within the
// schema ("#", "#/json/pointer", "#anchor") are supported.
func checkRefCycles(doc any) error {
	anchors := map[string]string{}
	collectAnchors(doc, "", anchors)
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(loc string) error
	visit = func(loc string) error {
		switch state[loc] {
		case visiting:
			return fmt.Errorf("$ref %s leads back to itself without descending into the answer: validating it would never end", pointerName(loc))
		case done:
			return nil
		}
		state[loc] = visiting
		next, err := sameInstanceEdges(doc, loc, anchors)
		if err != nil {
			return err
		}
		for _, n := range next {
			if err := visit(n); err != nil {
				return err
			}
		}
		state[loc] = done
		return nil
	}
	// Every subschema location is a start: a cycle can hide under
	// properties as well as at the root.
	var err error
	walkSchemas(doc, "", func(loc string) {
		if err == nil {
			err = visit(loc)
		}
	})
	return err
}

// sameInstanceEdges lists the locations of the schemas that apply to the
// same value as the schema at loc: its ref's target, and its allOf, anyOf,
// oneOf, not, if, then, else and dependentSchemas.
func sameInstanceEdges(doc any, loc string, anchors map[string]string) ([]string, error) {
	obj, ok := resolvePointer(doc, loc).(map[string]any)
	if !ok {
		return nil, nil
	}
	var out []string
	for _, kw := range []string{"$ref", "$dynamicRef"} {
		ref, ok := obj[kw].(string)
		if !ok {
			continue
		}
		target, err := refLocation(ref, anchors)
		if err != nil {
			return nil, err
		}
		if resolvePointer(doc, target) == nil {
			return nil, fmt.Errorf("%s %q at %s points at nothing", kw, ref, pointerName(loc))
		}
		out = append(out, target)
	}
	for kw, sub := range obj {
		if !sameInstance[kw] {
			continue
		}
		switch sub := sub.(type) {
		case []any:
			for i := range sub {
				out = append(out, loc+"/"+kw+"/"+strconv.Itoa(i))
			}
		case map[string]any:
			if kw == "dependentSchemas" {
				for k := range sub {
					out = append(out, loc+"/"+kw+"/"+escapePointer(k))
				}
			} else {
				out = append(out, loc+"/"+kw)
			}
		}
	}
	return out, nil
}

// refLocation turns a ref into the JSON pointer of its target.
func refLocation(ref string, anchors map[string]string) (string, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return "", fmt.Errorf("$ref %q is not supported: refer to the schema's own definitions, as \"#/$defs/name\"", ref)
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		p, err := url.PathUnescape(frag)
		if err != nil {
			return "", fmt.Errorf("$ref %q: %w", ref, err)
		}
		return p, nil
	}
	if loc, ok := anchors[frag]; ok {
		return loc, nil
	}
	return "", fmt.Errorf("$ref %q names no $anchor of the schema", ref)
}

// collectAnchors maps the $anchor and $dynamicAnchor names of doc to their
// locations.
func collectAnchors(doc any, loc string, anchors map[string]string) {
	walkSchemas(doc, loc, func(at string) {
		if obj, ok := resolvePointer(doc, at).(map[string]any); ok {
			for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
				if name, ok := obj[kw].(string); ok {
					anchors[name] = at
				}
			}
		}
	})
}

// walkSchemas calls fn with the location of every object in doc, except
// values of const, enum, default and examples, which are data.
func walkSchemas(doc any, loc string, fn func(loc string)) {
	switch v := doc.(type) {
	case map[string]any:
		fn(loc)
		for k, sub := range v {
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue
			}
			walkSchemas(sub, loc+"/"+escapePointer(k), fn)
		}
	case []any:
		for i, sub := range v {
			walkSchemas(sub, loc+"/"+strconv.Itoa(i), fn)
		}
	}
}

// resolvePointer returns the value at a JSON pointer of doc, nil if none.
func resolvePointer(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			cur = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

func pointerName(loc string) string {
	if loc == "" {
		return "#"
	}
	return "#" + loc
}
