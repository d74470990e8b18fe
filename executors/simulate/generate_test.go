package simulate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validator checks answers against a schema with a real JSON Schema
// implementation, asserting formats as well.
type validator struct{ schema *jsonschema.Schema }

func compileValidator(t testing.TB, schema string) *validator {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	return &validator{s}
}

// check returns why answer does not satisfy the schema, or nil.
func (v *validator) check(answer string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(answer))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return v.schema.Validate(inst)
}

// schemas are the schemas that generated values must satisfy.
var schemas = []struct{ name, schema string }{
	{"string", `{"type":"string"}`},
	{"boolean", `{"type":"boolean"}`},
	{"null", `{"type":"null"}`},
	{"true", `true`},
	{"empty", `{}`},
	{"integer bounds", `{"type":"integer","minimum":10,"maximum":12}`},
	{"integer exclusive", `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":2}`},
	{"integer lone maximum", `{"type":"integer","maximum":-1000}`},
	{"integer multipleOf", `{"type":"integer","minimum":1,"multipleOf":7}`},
	{"number multipleOf", `{"type":"number","minimum":0.3,"maximum":1,"multipleOf":0.25}`},
	{"integer far away", `{"type":"integer","minimum":1e15,"exclusiveMaximum":1e16}`},
	{"number bounds", `{"type":"number","minimum":0.1,"maximum":0.2}`},
	{"number exclusive", `{"type":"number","exclusiveMinimum":1,"exclusiveMaximum":2}`},
	{"number tight", `{"type":"number","minimum":3,"maximum":3}`},
	{"draft 4 exclusive", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","minimum":5,"maximum":6,"exclusiveMaximum":true}`},
	{"enum", `{"enum":["red",2,null,{"a":[1,"x"]}]}`},
	{"const", `{"const":{"kind":"fixed","n":1.50}}`},
	{"typed enum", `{"type":"string","enum":["low","medium","high"]}`},
	{"type list", `{"type":["null","integer"],"minimum":4,"maximum":4}`},
	{"string lengths", `{"type":"object","properties":{"long":{"type":"string","minLength":20,"maxLength":25},"short":{"type":"string","maxLength":3},"empty":{"type":"string","maxLength":0}}}`},
	{"formats", `{"type":"object","properties":{
		"at":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},
		"time":{"type":"string","format":"time"},"mail":{"type":"string","format":"email"},
		"link":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"},
		"host":{"type":"string","format":"hostname"},"ip":{"type":"string","format":"ipv4"},
		"ip6":{"type":"string","format":"ipv6"},"took":{"type":"string","format":"duration"}}}`},
	{"patterns", `{"type":"object","properties":{
		"ticket":{"type":"string","pattern":"^[A-Z]{2,4}-[0-9]+$"},
		"semver":{"type":"string","pattern":"^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)$"},
		"word":{"type":"string","pattern":"^(yes|no|maybe)$"},
		"hex":{"type":"string","pattern":"^#[0-9a-fA-F]{6}$","minLength":7},
		"loose":{"type":"string","pattern":"b+"},
		"negated":{"type":"string","pattern":"^[^a-z]{3}$"},
		"phone":{"type":"string","pattern":"^\\d{3}-\\d{4,}$"},
		"slug":{"type":"string","pattern":"^[a-z]+(-[a-z]+)*$","maxLength":12}}}`},
	{"nested objects", `{"type":"object","additionalProperties":false,"required":["summary","findings"],"properties":{
		"summary":{"type":"string","minLength":1},
		"findings":{"type":"array","minItems":1,"items":{"type":"object","additionalProperties":false,
			"required":["file","line","severity"],"properties":{
				"file":{"type":"string"},"line":{"type":"integer","minimum":1},
				"severity":{"enum":["info","warning","error"]},
				"fix":{"type":["string","null"]}}}},
		"meta":{"type":"object","properties":{"reviewer":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}}`},
	{"array bounds", `{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"minItems":4,"maxItems":6}`},
	{"array max 0", `{"type":"array","items":{"type":"string"},"maxItems":0}`},
	{"array untyped items", `{"type":"array","minItems":2}`},
	{"unique items", `{"type":"array","items":{"type":"boolean"},"uniqueItems":true,"minItems":2,"maxItems":2}`},
	{"unique few values", `{"type":"array","items":{"enum":["a"]},"uniqueItems":true,"maxItems":5}`},
	{"prefix items", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`},
	{"draft 7 tuple", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"boolean"},{"type":"null"}],"additionalItems":false}`},
	{"defs ref", `{"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},
		"type":"object","properties":{"from":{"$ref":"#/$defs/point"},"to":{"$ref":"#/$defs/point","description":"end"}},"required":["from","to"]}`},
	{"definitions ref", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"id":{"type":"string","pattern":"^id-[a-z]{4}$"}},
		"type":"array","items":{"$ref":"#/definitions/id"},"minItems":3}`},
	{"escaped ref", `{"$defs":{"a/b c":{"type":"integer","minimum":5,"maximum":5},"t~x":{"const":"tilde"}},
		"type":"array","prefixItems":[{"$ref":"#/$defs/a~1b%20c"},{"$ref":"#/$defs/t~0x"}],"minItems":2,"maxItems":2}`},
	{"ref with siblings", `{"$defs":{"base":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},
		"$ref":"#/$defs/base","properties":{"b":{"type":"integer"}},"required":["b"]}`},
	{"recursive", `{"$defs":{"tree":{"type":"object","required":["name"],"properties":{
		"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/tree"}}}}},"$ref":"#/$defs/tree"}`},
	{"root ref", `{"type":"object","properties":{"label":{"type":"string"},"next":{"$ref":"#"}},"required":["label"]}`},
	{"allOf", `{"allOf":[
		{"type":"object","properties":{"id":{"type":"string","format":"uuid"}},"required":["id"]},
		{"properties":{"count":{"type":"integer","minimum":1}},"required":["count"]},
		true]}`},
	{"anyOf oneOf", `{"type":"object","properties":{
		"either":{"anyOf":[{"type":"integer","minimum":100},{"type":"string"}]},
		"one":{"oneOf":[{"type":"string","format":"email"},{"type":"integer"}]}},"required":["either","one"]}`},
	{"optional false", `{"type":"object","properties":{"never":false,"ok":{"type":"boolean"}}}`},
	{"properties bounds", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}},"required":["c"],"maxProperties":2}`},
	{"min properties", `{"type":"object","properties":{"a":{"type":"string"}},"minProperties":3,"additionalProperties":{"type":"integer"}}`},
	{"required without schema", `{"type":"object","required":["name","age"],"properties":{"age":{"type":"integer"}}}`},
	{"escaped names", `{"type":"object","properties":{"quote\"d":{"type":"string"},"new\nline":{"const":"tab\there"},"ünï":{"type":"string"}},"required":["quote\"d"]}`},
}

func TestGenerateConformsToSchemas(t *testing.T) {
	for _, tc := range schemas {
		t.Run(tc.name, func(t *testing.T) {
			v := compileValidator(t, tc.schema)
			g, err := NewGenerator(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatalf("NewGenerator: %v", err)
			}
			distinct := map[string]bool{}
			for i := range 50 {
				out := g.Generate(fmt.Appendf(nil, "seed %d", i))
				if !json.Valid(out) || !isCompact(out) {
					t.Fatalf("seed %d: %s is not compact JSON", i, out)
				}
				if err := v.check(string(out)); err != nil {
					t.Fatalf("seed %d: %s does not conform: %v", i, out, err)
				}
				distinct[string(out)] = true
			}
			t.Logf("%d distinct values, e.g. %s", len(distinct), g.Generate([]byte("seed 0")))
		})
	}
}

func isCompact(b []byte) bool {
	var buf bytes.Buffer
	return json.Compact(&buf, b) == nil && bytes.Equal(buf.Bytes(), b)
}

func TestGenerateIsDeterministic(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"score":{"type":"number"}}}`)
	a, err := Generate(schema, []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(schema, []byte("one"))
	c, _ := Generate(schema, []byte("two"))
	if !bytes.Equal(a, b) {
		t.Errorf("same seed gave %s and %s", a, b)
	}
	if bytes.Equal(a, c) {
		t.Errorf("different seeds both gave %s", a)
	}
	if !bytes.HasPrefix(a, []byte(`{"title":"title-`)) {
		t.Errorf("%s does not list properties in schema order with strings named after them", a)
	}
}

func TestGenerateFalseSchema(t *testing.T) {
	for _, schema := range []string{
		`false`,
		`{"allOf":[{"type":"string"},false]}`,
		`{"type":"object","properties":{"x":false},"required":["x"]}`,
	} {
		out, err := Generate(json.RawMessage(schema), nil)
		if err != nil {
			t.Fatalf("Generate(%s): %v", schema, err)
		}
		if compileValidator(t, schema).check(string(out)) == nil {
			t.Errorf("Generate(%s) = %s, which conforms, yet nothing should", schema, out)
		}
	}
}

func TestInvalidBreaksSchemas(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
		`{"type":"object"}`,
		`{"type":"string"}`,
		`{"type":"integer"}`,
		`{"type":["integer","string","null"]}`,
		`{"type":["number","string","boolean","object","array","null"]}`,
		`{"enum":["a","b"]}`,
		`{"const":"simulated invalid answer"}`,
		`{"minLength":3}`,
		`{"minItems":1}`,
		`true`,
		`false`,
		`{"anyOf":[{"type":"string"},{"type":"number"}]}`,
	} {
		g, err := NewGenerator(json.RawMessage(schema))
		if err != nil {
			t.Fatalf("NewGenerator(%s): %v", schema, err)
		}
		out := g.invalid()
		if compileValidator(t, schema).check(out) == nil {
			t.Errorf("invalid answer %s conforms to %s", out, schema)
		}
	}
}

func TestNewGeneratorErrors(t *testing.T) {
	for _, tc := range []struct{ schema, err string }{
		{`{"type":`, "invalid schema JSON"},
		{`{} {}`, "after the top-level value"},
		{`42`, "must be an object or a boolean"},
		{`{"type":"text"}`, `unknown type "text"`},
		{`{"type":7}`, "type must be a string"},
		{`{"$ref":"other.json#/x"}`, "not local"},
		{`{"$ref":"#/$defs/missing"}`, `no "$defs"`},
		{`{"$ref":"#anchor"}`, "anchors are not supported"},
		{`{"properties":{"a":{"$ref":"#/properties/a","minLength":1}}}`, "nests more than"},
		{`{"properties":{"bad":{"type":"strnig"}}}`, `property "bad": unknown type "strnig"`},
	} {
		_, err := NewGenerator(json.RawMessage(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("NewGenerator(%s) error = %v, want one saying %q", tc.schema, err, tc.err)
		}
	}
}

func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "\x00\x01\x1f\n\r\t", "é漢🙂", "bad \xff utf-8", "<&>"} {
		var got string
		if err := json.Unmarshal(appendQuoted(nil, s), &got); err != nil {
			t.Errorf("appendQuoted(%q) = %s: %v", s, appendQuoted(nil, s), err)
			continue
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); got != want {
			t.Errorf("appendQuoted(%q) decodes to %q, want %q", s, got, want)
		}
	}
}
