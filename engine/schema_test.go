package engine

import (
	"strings"
	"testing"
)

// The schema check walks schema positions, not keys: a property may be
// called after any keyword, and a mistake is found wherever a schema is.
func TestSchemaKeywordWalk(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		// want is "" for a schema that compiles, else a part of the error.
		want string
		// valid and invalid are answers it must accept and reject.
		valid, invalid string
	}{
		{"a property named type", `{"type":"object","properties":{"type":{"type":"string"}},"required":["type"]}`, "",
			`{"type":"bug"}`, `{"type":3}`},
		{"properties named after every data keyword", `{"type":"object","properties":{
			"default":{"type":"string"},"enum":{"type":"integer"},"const":{"type":"boolean"},"examples":{"type":"array"},
			"required":{"type":"string"},"properties":{"type":"object"},"items":{"type":"null"}}}`, "",
			`{"default":"d","enum":1,"const":true,"examples":[],"required":"r","properties":{},"items":null}`, `{"default":1}`},
		{"a misspelt type under a property named default", `{"properties":{"default":{"type":"strng"}}}`,
			`/properties/default/type: "strng" is not a type`, "", ""},
		{"under a property named enum, in items", `{"type":"array","items":{"type":"object","properties":{"enum":{"type":"numbr"}}}}`,
			`/items/properties/enum/type: "numbr" is not a type`, "", ""},
		{"in $defs", `{"$defs":{"finding":{"type":"obj"}},"$ref":"#/$defs/finding"}`,
			`/$defs/finding/type: "obj" is not a type`, "", ""},
		{"in definitions", `{"definitions":{"x":{"type":["string","nil"]}}}`, `/definitions/x/type: "nil" is not a type`, "", ""},
		{"in anyOf", `{"anyOf":[{"type":"string"},{"type":"numbr"}]}`, `/anyOf/1/type: "numbr" is not a type`, "", ""},
		{"in allOf, oneOf, not, if/then/else", `{"allOf":[{"oneOf":[{"not":{"if":{},"then":{},"else":{"type":"bool"}}}]}]}`,
			`/allOf/0/oneOf/0/not/else/type: "bool" is not a type`, "", ""},
		{"in patternProperties and additionalProperties", `{"patternProperties":{"^x":{"type":"int"}}}`,
			`/patternProperties/^x/type: "int" is not a type`, "", ""},
		{"a property name with a slash", `{"properties":{"a/b~c":{"type":"strin"}}}`,
			`/properties/a~1b~0c/type: "strin" is not a type`, "", ""},
		{"a type that is an object", `{"type":{"kind":"string"}}`, `/type: {"kind":"string"} is not a type`, "", ""},
		{"data is never walked", `{"type":"object","properties":{"kind":{"enum":[{"type":"not-a-type"}],
			"default":{"type":"whatever"},"examples":[{"type":1}]},"fixed":{"const":{"properties":{"type":"x"}}}}}`, "",
			`{"kind":{"type":"not-a-type"},"fixed":{"properties":{"type":"x"}}}`, `{"kind":{"type":"other"}}`},
		{"a schema that is not an object", `{"properties":{"a":"string"}}`, `/properties/a: a schema must be an object or a boolean, not "string"`, "", ""},
		{"items as a list (draft 7 tuples)", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"},{"type":"sting"}]}`,
			`/items/1/type: "sting" is not a type`, "", ""},
		{"a bad keyword value the metaschema catches", `{"type":"object","properties":{"a":{"minLength":"three"}}}`,
			`/properties/a/minLength`, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c schemaCache
			cs, err := c.get([]byte(tc.schema))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "map[") {
					t.Errorf("the error prints a Go map: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("schema rejected: %v", err)
			}
			if _, err := cs.validate(tc.valid); err != nil {
				t.Errorf("valid answer %s rejected: %v", tc.valid, err)
			}
			if _, err := cs.validate(tc.invalid); err == nil {
				t.Errorf("invalid answer %s accepted", tc.invalid)
			}
		})
	}
}

// What an answer got wrong is said with JSON pointers and JSON, since it
// goes into the repair prompt and the error a script sees.
func TestValidationMessages(t *testing.T) {
	var c schemaCache
	cs, err := c.get([]byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"enum":[{"k":1},"x"]}},
		"required":["a","c"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.validate(`{"a":{"x":1},"b":{"y":[1,2]},"z":0}`)
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, want := range []string{"at /a: got object, want string", "at /b: value must be one of", "'c'", "'z'"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "map[") || strings.Contains(msg, "\n") || strings.Contains(msg, "file://") {
		t.Errorf("message %q prints a Go map, spans lines or names a file", msg)
	}
}
