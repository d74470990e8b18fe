package engine

import (
	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// recordDecoding are the options every journal record is read with:
// encoding/json's own semantics (case-insensitive names, invalid UTF-8
// replaced rather than refused, RawMessage kept verbatim), on the decoder
// of the JSON v2 work. Reading records is most of what `show`, the
// dashboard's first load of a run and a resume's replay cost, and this
// decoder reads a journal's records in about half the time of
// encoding/json's, with a third of the allocations (bench/README.md).
var recordDecoding = jsonv1.DefaultOptionsV1()

// decodeRecord reads one journal record (a record, or a narrower view of
// one) from its JSON line.
func decodeRecord[T any](line []byte, r *T) error {
	return jsonv2.Unmarshal(line, r, recordDecoding)
}
