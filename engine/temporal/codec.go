package temporal

import (
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/dynworkflow/dynworkflow/engine/temporal/blobs"
)

// The limits on what a run puts in its history. Temporal refuses a payload
// over 2 MB and warns over 512 KB; a history that grows by tens of
// kilobytes per call fills its 50 MB long before its 51,200 events.
const (
	// payloadLimit is the largest payload kept in the history: a bigger
	// one (a long prompt, a script's large result, a state with long log
	// lines) is kept in the blob store, and the history has its key.
	payloadLimit = 64 << 10
	// inlineLimit is the largest answer or transcript an agent's activity
	// returns in its result; a bigger one it stores in the blob store
	// itself, so that a ledger page can name it without reading it.
	inlineLimit = 8 << 10
)

// blobEncoding marks a payload kept in the blob store: its data is the key.
const blobEncoding = "dynworkflow/blob"

// blobCodec keeps payloads over payloadLimit in the blob store (the claim
// check pattern): clients and workers that share the store read them back
// transparently, and the history stays small whatever a run carries.
type blobCodec struct{ store *blobs.Store }

func (c blobCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := payloads
	for i, p := range payloads {
		if proto.Size(p) <= payloadLimit {
			continue
		}
		b, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		key, err := c.store.Put(b)
		if err != nil {
			return nil, err
		}
		if &out[0] == &payloads[0] {
			out = append([]*commonpb.Payload(nil), payloads...)
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(blobEncoding)}, Data: []byte(key)}
	}
	return out, nil
}

func (c blobCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := payloads
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != blobEncoding {
			continue
		}
		b, err := c.store.Get(string(p.GetData()))
		if err != nil {
			return nil, err
		}
		var whole commonpb.Payload
		if err := proto.Unmarshal(b, &whole); err != nil {
			return nil, fmt.Errorf("blob %s: %w", p.GetData(), err)
		}
		if &out[0] == &payloads[0] {
			out = append([]*commonpb.Payload(nil), payloads...)
		}
		out[i] = &whole
	}
	return out, nil
}

// dataConverter is the data converter of every client and worker of runs
// whose large values live in store.
func dataConverter(store *blobs.Store) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), blobCodec{store})
}
