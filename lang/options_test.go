package lang

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeAgentOptions(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
		check   func(AgentOptions) bool
	}{
		{in: ``, check: func(o AgentOptions) bool { return o.Label == "" && o.Retries == nil }},
		{in: `null`, check: func(o AgentOptions) bool { return o.Schema == nil }},
		{in: `{"label":"a","phase":"P","model":"opus","effort":"high","agentType":"Explore","isolation":"worktree","executor":"simulate","timeoutMs":500,"retries":2}`,
			check: func(o AgentOptions) bool {
				return o.Label == "a" && o.Phase == "P" && o.Effort == "high" && *o.TimeoutMs == 500 && *o.Retries == 2
			}},
		{in: `{"schema":{"type":"object"}}`, check: func(o AgentOptions) bool { return string(o.Schema) == `{"type":"object"}` }},
		{in: `{"timeout":5}`, wantErr: `unknown option "timeout"; did you mean "timeoutMs"? (the options are label, phase, schema`},
		{in: `{"shema":{}}`, wantErr: `unknown option "shema"; did you mean "schema"?`},
		{in: `{"Schema":{}}`, wantErr: `did you mean "schema"?`},
		{in: `{"agent_type":"x"}`, wantErr: `did you mean "agentType"?`},
		{in: `{"lable":"x"}`, wantErr: `did you mean "label"?`},
		{in: `{"_tag":"x","tier":"fast","_schema":1,"tools":[],"required":true}`, check: func(o AgentOptions) bool {
			return strings.Join(o.Ignored, ",") == "_schema,_tag,tier,tools" && o.Required
		}},
		{in: `{"_tag":"x","label":7}`, wantErr: "option label must be a string, not a number"},
		{in: `{"timeoutMs":null}`, check: func(o AgentOptions) bool { return o.TimeoutMs == nil }},
		{in: `{"required":"yes"}`, wantErr: "option required must be true or false"},
		{in: `{"label":5}`, wantErr: "option label must be a string, not a number"},
		{in: `{"effort":"extreme"}`, wantErr: "effort must be one of low, medium, high, xhigh, max"},
		{in: `{"isolation":"docker"}`, wantErr: `isolation must be "worktree"`},
		{in: `{"schema":"object"}`, wantErr: "schema must be a JSON Schema object, not a string"},
		{in: `{"timeoutMs":0}`, wantErr: "timeoutMs must be a number of milliseconds from 1 to 2592000000 (30 days), not 0"},
		// Converted to a time.Duration these overflowed: 448 µs.
		{in: `{"timeoutMs":18446744073710}`, wantErr: "from 1 to 2592000000 (30 days), not 18446744073710"},
		{in: `{"timeoutMs":1e300}`, wantErr: "timeoutMs must be a whole number"},
		{in: `{"timeoutMs":2592000000}`, check: func(o AgentOptions) bool { return *o.TimeoutMs == MaxTimeoutMs }},
		{in: `{"retries":1.5}`, wantErr: "retries must be a whole number"},
		{in: `{"retries":99}`, wantErr: "retries must be between 0 and 10"},
		{in: `[1]`, wantErr: "options must be an object, not a list"},
	}
	for _, tc := range tests {
		o, err := DecodeAgentOptions(json.RawMessage(tc.in))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case !tc.check(o):
			t.Errorf("%s: decoded %+v", tc.in, o)
		}
	}
}

func TestDecodeCheckpoint(t *testing.T) {
	tests := []struct {
		prompt, in string
		wantErr    string
		headless   string
		kind       CheckpointKind
	}{
		{prompt: "ok?", in: ``, headless: "abort", kind: Confirm},
		{prompt: "ok?", in: `{"default":true}`, headless: "default", kind: Confirm},
		{prompt: "name?", in: `{"kind":"text","default":"x"}`, headless: "default", kind: Text},
		{prompt: "name?", in: `{"kind":"input"}`, headless: "abort", kind: Text},
		{prompt: "pick", in: `{"kind":"select","choices":["a","b"],"default":"b"}`, headless: "default", kind: Select},
		{prompt: "pick", in: `{"kind":"select","choices":["a","b"],"default":"c"}`, wantErr: "the default is not a valid answer"},
		{prompt: "pick", in: `{"kind":"select"}`, wantErr: "needs a non-empty choices list"},
		{prompt: "ok?", in: `{"default":"yes"}`, wantErr: "takes true or false, not a string"},
		{prompt: "ok?", in: `{"headless":"default"}`, wantErr: `headless "default" needs a default answer`},
		{prompt: "ok?", in: `{"kind":"radio"}`, wantErr: `kind must be "confirm", "text" or "select"`},
		{prompt: "ok?", in: `{"choices":["a"]}`, wantErr: `choices only applies to kind "select"`},
		{prompt: " ", in: ``, wantErr: "the prompt must be a non-empty string"},
		{prompt: "ok?", in: `{"when":1}`, wantErr: `unknown option "when"`},
		{prompt: "ok?", in: `{"defualt":true}`, wantErr: `unknown option "defualt"; did you mean "default"?`},
		{prompt: "ok?", in: `{"default":true,"headless":"abort"}`, headless: "abort", kind: Confirm},
		{prompt: "ok?", in: `{"timeoutMs":0}`, headless: "abort", kind: Confirm},
		{prompt: "ok?", in: `{"timeoutMs":18446744073710}`, wantErr: "from 1 to 2592000000 (30 days), not 18446744073710"},
		{prompt: "ok?", in: `{"timeoutMs":-5}`, wantErr: "from 1 to 2592000000 (30 days), not -5"},
	}
	for _, tc := range tests {
		req, err := DecodeCheckpoint(tc.prompt, json.RawMessage(tc.in))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s %s: error %v, want %q", tc.prompt, tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || req.Headless != tc.headless || req.Kind != tc.kind {
			t.Errorf("%s %s: %+v %v", tc.prompt, tc.in, req, err)
		}
	}
}

func TestRegistryPrefersTheLongestExtension(t *testing.T) {
	r := NewRegistry(fakeHost{"js", []string{".js"}}, fakeHost{"wf", []string{".workflow.js"}})
	if h, _ := r.HostFor("a.workflow.js"); h.Language() != "wf" {
		t.Errorf("a.workflow.js went to %s", h.Language())
	}
	if h, _ := r.HostFor("a.js"); h.Language() != "js" {
		t.Errorf("a.js went to %s", h.Language())
	}
	if _, err := r.Load(Source{Path: "a.py"}); err == nil || !strings.Contains(err.Error(), "name workflow files .workflow.js or .js") {
		t.Errorf("a.py: %v", err)
	}
}

type fakeHost struct {
	name string
	exts []string
}

func (h fakeHost) Language() string            { return h.name }
func (h fakeHost) Extensions() []string        { return h.exts }
func (h fakeHost) Load(Source) (Script, error) { return nil, nil }
