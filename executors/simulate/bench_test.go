package simulate

import (
	"context"
	"testing"

	"github.com/dynworkflow/dynworkflow/executors"
)

func BenchmarkRunZeroLatency(b *testing.B) {
	e := New(Config{})
	req := request("Review the changes in internal/engine and list the risky ones.")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Run(ctx, req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunZeroLatencySchema(b *testing.B) {
	e := New(Config{})
	req := request("Review the changes in internal/engine and list the risky ones.")
	req.Schema = []byte(`{"type":"object","properties":{
		"summary":{"type":"string"},
		"risky":{"type":"array","items":{"type":"object","properties":{
			"file":{"type":"string"},"severity":{"enum":["low","medium","high"]},"line":{"type":"integer","minimum":1}},
			"required":["file","severity"]}},
		"approve":{"type":"boolean"}},"required":["summary","risky","approve"]}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Run(ctx, req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunZeroLatencyObserved(b *testing.B) {
	e := New(Config{})
	req := request("Review the changes in internal/engine and list the risky ones.")
	ctx := context.Background()
	observe := func(executors.Progress) {}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Run(ctx, req, observe); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewGenerator(b *testing.B) {
	var schema []byte
	for _, s := range schemas {
		if s.name == "nested objects" {
			schema = []byte(s.schema)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewGenerator(schema); err != nil {
			b.Fatal(err)
		}
	}
}
