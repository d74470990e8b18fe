package lang

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// What can be checked of a script's agent() calls before it runs is
// checked when it loads, so that a misspelt option or a broken schema
// fails before any agent is paid for, not at the call, minutes (and
// dollars) into a run. Only what the script writes out can be: the keys
// of an options object literal, and the values that are literals or that
// name a constant bound to one. Each host finds the calls in its syntax
// tree (StaticCall); the rules, and their messages, are the ones
// DecodeAgentOptions applies to a call as it runs, so that a script gets
// the same error either way, only earlier.

// A StaticCall is an agent() call as the script writes it: the options of
// its options object (or keyword arguments) that are written out.
type StaticCall struct {
	Pos     Pos
	Options []StaticOption
}

// A StaticOption is one key of an options object and, when the script
// writes it out, its value.
type StaticOption struct {
	Key    string
	KeyPos Pos
	// Value is the value as JSON when it is a literal, or a name bound
	// once, at the top of the file, to a literal and never changed; nil
	// when only running the script can tell it.
	Value    json.RawMessage
	ValuePos Pos
}

// StaticCalls is a Script whose host found its agent() calls (see
// CheckStaticCalls). The Registry checks them when it loads the script.
type StaticCalls interface {
	AgentCalls() []StaticCall
}

// SchemaCheck compiles an agent() call's schema and says what is wrong
// with it; the engine provides it (Registry.CheckSchemasWith).
type SchemaCheck func(schema json.RawMessage) error

// staticHint is the hint of every error CheckStaticCalls finds.
const staticHint = "agent() options written out in the script are checked when it loads, before any agent runs"

// CheckStaticCalls checks the options the script writes out in its
// agent() calls: a key that is a near miss of an option ("shema"), a value
// of the wrong type or out of range, a schema that is not a valid JSON
// Schema (when schema is not nil). Keys that are not options and not near
// misses pass, as they do at run time (with a warning). The first error
// is returned, at the key or value at fault.
func CheckStaticCalls(calls []StaticCall, schema SchemaCheck) error {
	for _, c := range calls {
		for _, o := range c.Options {
			if err := checkStaticOption(o, schema); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkStaticOption(o StaticOption, schema SchemaCheck) error {
	known := slices.Contains(agentOptionNames, o.Key)
	value := o.Value
	if value == nil || !known {
		value = json.RawMessage("null")
	}
	raw := append(append([]byte("{"+strconv.Quote(o.Key)+":"), value...), '}')
	if _, err := DecodeAgentOptions(raw); err != nil {
		at := o.ValuePos
		if !known {
			at = o.KeyPos
		}
		return at.Errorf(staticHint, "%s", err.Error())
	}
	if o.Key == "schema" && o.Value != nil && schema != nil && !isNull(o.Value) {
		if err := schema(o.Value); err != nil {
			return o.ValuePos.Errorf(staticHint, "%s", err.Error())
		}
	}
	return nil
}

// JSON is the literal as JSON, keys in the order written (the last of a
// repeated key wins, as in JavaScript).
func (l Literal) JSON() json.RawMessage {
	var b bytes.Buffer
	l.appendJSON(&b)
	return b.Bytes()
}

func (l Literal) appendJSON(b *bytes.Buffer) {
	switch v := l.Value.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		enc, err := json.Marshal(v)
		if err != nil { // NaN or an infinity: not JSON
			enc = []byte("null")
		}
		b.Write(enc)
	case string:
		enc, _ := json.Marshal(v)
		b.Write(enc)
	case []Literal:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			x.appendJSON(b)
		}
		b.WriteByte(']')
	case []Field:
		last := map[string]int{}
		for i, f := range v {
			last[f.Key] = i
		}
		b.WriteByte('{')
		first := true
		for i, f := range v {
			if last[f.Key] != i {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			enc, _ := json.Marshal(f.Key)
			b.Write(enc)
			b.WriteByte(':')
			f.Value.appendJSON(b)
		}
		b.WriteByte('}')
	}
}
