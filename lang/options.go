package lang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// AgentOptions are the options of agent(prompt, opts), the same in every
// language. Hosts turn the script's options value into JSON and call
// DecodeAgentOptions, so validation and its messages are shared.
type AgentOptions struct {
	Label     string          `json:"label,omitempty"`
	Phase     string          `json:"phase,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	Model     string          `json:"model,omitempty"`
	Effort    string          `json:"effort,omitempty"`
	AgentType string          `json:"agentType,omitempty"`
	Isolation string          `json:"isolation,omitempty"`
	Executor  string          `json:"executor,omitempty"`
	// Permissions is what the agent may change: "workspace-write",
	// "read-only" or "full-access"; "" leaves it to the agent type, the
	// run and the executor's configuration.
	Permissions string `json:"permissions,omitempty"`
	// TimeoutMs and Retries are nil when the script did not set them, so the
	// run's defaults apply.
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
	Retries   *int   `json:"retries,omitempty"`
	// IdleTimeoutMs stops an attempt that makes no progress for that long
	// (its CLI shows no tool call, message or output); nil leaves it to
	// the run, the executor's configuration and the built-in default.
	IdleTimeoutMs *int64 `json:"idleTimeoutMs,omitempty"`
	// Required makes a call that ends without an answer throw instead of
	// giving null, as in the Node runtime.
	Required bool `json:"required,omitempty"`
	// Ignored lists, sorted, the keys of the options object that are not
	// options. Scripts written for other runtimes pass their own keys
	// through (_tag, tier, ...), and the Node runtime ignores them; so do
	// we, and the engine says so once per key per run (IgnoredOption).
	Ignored []string `json:"-"`
}

var (
	agentOptionNames = []string{"label", "phase", "schema", "model", "effort", "agentType", "isolation", "executor", "permissions", "timeoutMs", "idleTimeoutMs", "retries", "required"}
	efforts          = []string{"low", "medium", "high", "xhigh", "max"}
	permissions      = []string{"workspace-write", "read-only", "full-access"}
)

// DecodeAgentOptions validates and decodes the JSON of an options object.
// Empty input and "null" give zero options.
func DecodeAgentOptions(raw json.RawMessage) (AgentOptions, error) {
	var o AgentOptions
	fields, ignored, err := objectFields("agent()", raw, agentOptionNames, true)
	if err != nil || fields == nil {
		return o, err
	}
	o.Ignored = ignored
	for name, v := range fields {
		switch name {
		case "label":
			err = decodeString("agent()", name, v, &o.Label)
		case "phase":
			err = decodeString("agent()", name, v, &o.Phase)
		case "model":
			err = decodeString("agent()", name, v, &o.Model)
		case "agentType":
			err = decodeString("agent()", name, v, &o.AgentType)
		case "executor":
			err = decodeString("agent()", name, v, &o.Executor)
		case "effort":
			if err = decodeString("agent()", name, v, &o.Effort); err == nil && o.Effort != "" && !contains(efforts, o.Effort) {
				err = fmt.Errorf("agent(): option effort must be one of %s, not %q", strings.Join(efforts, ", "), o.Effort)
			}
		case "permissions":
			if err = decodeString("agent()", name, v, &o.Permissions); err == nil && o.Permissions != "" && !contains(permissions, o.Permissions) {
				err = fmt.Errorf("agent(): option permissions must be one of %s, not %q", strings.Join(permissions, ", "), o.Permissions)
			}
		case "isolation":
			if err = decodeString("agent()", name, v, &o.Isolation); err == nil && o.Isolation != "" && o.Isolation != "worktree" {
				err = fmt.Errorf("agent(): option isolation must be \"worktree\", not %q", o.Isolation)
			}
		case "schema":
			if isNull(v) {
				continue
			}
			if t := firstByte(v); t != '{' && t != 't' && t != 'f' {
				err = fmt.Errorf("agent(): option schema must be a JSON Schema object, not %s", jsonKind(v))
			}
			o.Schema = v
		case "required":
			if !isNull(v) && json.Unmarshal(v, &o.Required) != nil {
				err = fmt.Errorf("agent(): option required must be true or false, not %s", jsonKind(v))
			}
		case "timeoutMs":
			if isNull(v) { // the Node runtime's way of saying "no timeout of its own"
				continue
			}
			var n int64
			if n, err = decodeMillis("agent()", name, v); err == nil {
				o.TimeoutMs = &n
			}
		case "idleTimeoutMs":
			if isNull(v) {
				continue
			}
			var n int64
			if n, err = decodeMillis("agent()", name, v); err == nil {
				o.IdleTimeoutMs = &n
			}
		case "retries":
			var n int64
			if err = decodeNumber("agent()", name, v, &n); err == nil {
				if n < 0 || n > 10 {
					err = fmt.Errorf("agent(): option retries must be between 0 and 10, not %d", n)
				}
				r := int(n)
				o.Retries = &r
			}
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

// CheckpointKind is what a checkpoint asks for.
type CheckpointKind string

// The checkpoint kinds.
const (
	Confirm CheckpointKind = "confirm"
	Text    CheckpointKind = "text"
	Select  CheckpointKind = "select"
)

// CheckpointRequest is checkpoint(prompt, opts): a question for a human.
// Without a human, the declared default answers it, or the run aborts.
type CheckpointRequest struct {
	Prompt  string          `json:"prompt"`
	Kind    CheckpointKind  `json:"kind"`
	Choices []string        `json:"choices,omitempty"`
	Default json.RawMessage `json:"default,omitempty"`
	// Headless is "default" or "abort": what to do when nobody can answer.
	// It is "default" when a default is declared and "abort" otherwise,
	// unless the script says.
	Headless  string `json:"headless"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

var checkpointOptionNames = []string{"kind", "choices", "default", "headless", "timeoutMs"}

// DecodeCheckpoint validates checkpoint(prompt, opts) and fills in defaults.
func DecodeCheckpoint(prompt string, raw json.RawMessage) (CheckpointRequest, error) {
	req := CheckpointRequest{Prompt: prompt, Kind: Confirm}
	if strings.TrimSpace(prompt) == "" {
		return req, fmt.Errorf("checkpoint(): the prompt must be a non-empty string")
	}
	fields, _, err := objectFields("checkpoint()", raw, checkpointOptionNames, false)
	if err != nil {
		return req, err
	}
	for name, v := range fields {
		switch name {
		case "kind":
			var k string
			if err = decodeString("checkpoint()", name, v, &k); err == nil {
				if k == "input" { // the Node runtime's name for text
					k = string(Text)
				}
				req.Kind = CheckpointKind(k)
			}
		case "choices":
			if err = json.Unmarshal(v, &req.Choices); err != nil {
				err = fmt.Errorf("checkpoint(): option choices must be a list of strings")
			}
		case "default":
			if !isNull(v) {
				req.Default = v
			}
		case "headless":
			err = decodeString("checkpoint()", name, v, &req.Headless)
		case "timeoutMs":
			// 0 has always meant no timeout here.
			if err = decodeNumber("checkpoint()", name, v, &req.TimeoutMs); err == nil && req.TimeoutMs != 0 {
				req.TimeoutMs, err = decodeMillis("checkpoint()", name, v)
			}
		}
		if err != nil {
			return req, err
		}
	}
	switch req.Kind {
	case Confirm, Text:
		if len(req.Choices) > 0 {
			return req, fmt.Errorf("checkpoint(): option choices only applies to kind \"select\"")
		}
	case Select:
		if len(req.Choices) == 0 {
			return req, fmt.Errorf("checkpoint(): kind \"select\" needs a non-empty choices list")
		}
	default:
		return req, fmt.Errorf("checkpoint(): option kind must be \"confirm\", \"text\" or \"select\", not %q", req.Kind)
	}
	if req.Default != nil {
		if err := req.Validate(req.Default); err != nil {
			return req, fmt.Errorf("checkpoint(): the default is not a valid answer: %w", err)
		}
	}
	switch req.Headless {
	case "":
		req.Headless = "abort"
		if req.Default != nil {
			req.Headless = "default"
		}
	case "default":
		if req.Default == nil {
			return req, fmt.Errorf("checkpoint(): headless \"default\" needs a default answer")
		}
	case "abort":
	default:
		return req, fmt.Errorf("checkpoint(): option headless must be \"default\" or \"abort\", not %q", req.Headless)
	}
	return req, nil
}

// Validate checks an answer against the checkpoint's kind and choices.
func (r CheckpointRequest) Validate(answer json.RawMessage) error {
	switch r.Kind {
	case Confirm:
		var b bool
		if json.Unmarshal(answer, &b) != nil {
			return fmt.Errorf("a confirm checkpoint takes true or false, not %s", jsonKind(answer))
		}
	case Text:
		var s string
		if json.Unmarshal(answer, &s) != nil {
			return fmt.Errorf("a text checkpoint takes a string, not %s", jsonKind(answer))
		}
	case Select:
		var s string
		if json.Unmarshal(answer, &s) != nil || !contains(r.Choices, s) {
			return fmt.Errorf("a select checkpoint takes one of %q", r.Choices)
		}
	}
	return nil
}

// objectFields splits an options object into its known fields and the
// names of the others. A name that looks like a misspelt option ("shema")
// is an error either way; the others are an error unless lenient, and
// then come back in ignored.
func objectFields(fn string, raw json.RawMessage, allowed []string, lenient bool) (fields map[string]json.RawMessage, ignored []string, err error) {
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return nil, nil, nil
	}
	if firstByte(raw) != '{' {
		return nil, nil, fmt.Errorf("%s: options must be an object, not %s", fn, jsonKind(raw))
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, fmt.Errorf("%s: options: %w", fn, err)
	}
	for name := range fields {
		if !contains(allowed, name) {
			ignored = append(ignored, name)
		}
	}
	sort.Strings(ignored)
	for _, name := range ignored {
		if meant, ok := nearMiss(name, allowed); ok {
			return nil, nil, fmt.Errorf("%s: unknown option %q; did you mean %q? (the options are %s)", fn, name, meant, strings.Join(allowed, ", "))
		}
	}
	if len(ignored) > 0 && !lenient {
		return nil, nil, fmt.Errorf("%s: unknown option %q; the options are %s", fn, ignored[0], strings.Join(allowed, ", "))
	}
	for _, name := range ignored {
		delete(fields, name)
	}
	return fields, ignored, nil
}

// IgnoredOption is the warning for an agent() option key that is not an
// option.
func IgnoredOption(name string) string {
	return fmt.Sprintf("agent(): ignoring option %q: it is not an agent() option (the options are %s)", name, strings.Join(agentOptionNames, ", "))
}

// nearMiss reports the option name was probably meant to be: the same
// but for case, '_' and '-', or one or two edits away from one (a single
// edit for names under five letters). A name that starts with '_' or '$'
// is a deliberate private key, never a typo.
func nearMiss(name string, allowed []string) (string, bool) {
	if name == "" || name[0] == '_' || name[0] == '$' {
		return "", false
	}
	fold := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	best, bestDist := "", 3
	for _, a := range allowed {
		if fold(a) == fold(name) {
			return a, true
		}
		limit := 2
		if len(a) < 5 {
			limit = 1
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(a)); d <= limit && d < bestDist {
			best, bestDist = a, d
		}
	}
	return best, best != ""
}

// editDistance counts the insertions, deletions, substitutions and
// transpositions of adjacent letters that turn a into b (optimal string
// alignment).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

func decodeString(fn, name string, v json.RawMessage, dst *string) error {
	if isNull(v) {
		return nil
	}
	if json.Unmarshal(v, dst) != nil {
		return fmt.Errorf("%s: option %s must be a string, not %s", fn, name, jsonKind(v))
	}
	return nil
}

func decodeNumber(fn, name string, v json.RawMessage, dst *int64) error {
	var f float64
	if json.Unmarshal(v, &f) != nil {
		return fmt.Errorf("%s: option %s must be a number, not %s", fn, name, jsonKind(v))
	}
	// Out of int64's range the conversion below is undefined.
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return fmt.Errorf("%s: option %s must be a whole number, not %v", fn, name, f)
	}
	*dst = int64(f)
	return nil
}

// MaxTimeoutMs bounds timeoutMs: 30 days, far below where a count of
// milliseconds overflows a time.Duration (about 292 years), which turned
// 18446744073710 into 448 µs.
const MaxTimeoutMs = 30 * 24 * 60 * 60 * 1000

// decodeMillis reads a timeoutMs: a whole number from 1 to MaxTimeoutMs.
func decodeMillis(fn, name string, v json.RawMessage) (int64, error) {
	var n int64
	if err := decodeNumber(fn, name, v, &n); err != nil {
		return 0, err
	}
	if n <= 0 || n > MaxTimeoutMs {
		return 0, fmt.Errorf("%s: option %s must be a number of milliseconds from 1 to %d (30 days), not %d", fn, name, int64(MaxTimeoutMs), n)
	}
	return n, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func firstByte(v json.RawMessage) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

func jsonKind(v json.RawMessage) string {
	switch firstByte(v) {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case 0:
		return "nothing"
	default:
		return "a number"
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
