package main

import (
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// jsonOutput is how --json writes: encoding/json's output, indented by
// two spaces, from the encoder of the JSON v2 work, which indents as it
// writes. encoding/json marshals into one buffer and indents into a
// second: for show --json of a 1,000-agent run, a quarter of the command's
// CPU. The one difference (TestJSONOutputIsEncodingJSONs): invalid UTF-8
// in a string becomes U+FFFD itself rather than its escape.
var jsonOutput = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.WithIndent("  "))

// encodeJSON writes v as --json does. A jsontext.Encoder ends a top-level
// value with a newline, as encoding/json's Encoder did.
func encodeJSON(w io.Writer, v any) error {
	return jsonv2.MarshalEncode(jsontext.NewEncoder(w, jsonOutput), v)
}
