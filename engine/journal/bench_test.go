package journal

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// record300 returns a record of about 300 bytes, like a small "finished"
// entry.
func record300(n int) []byte {
	return fmt.Appendf(nil, `{"seq":%d,"type":"finished","path":"main/agent#%d","output":%q}`,
		n, n, strings.Repeat("x", 230))
}

// BenchmarkAppendSync measures AppendSync of ~300-byte records: alone (the
// latency of one write and one fdatasync), then from many goroutines, where
// group commit should make records share fsyncs.
func BenchmarkAppendSync(b *testing.B) {
	ctx := context.Background()
	rec := record300(0)
	report := func(b *testing.B, w *Writer) {
		s := w.Stats()
		b.ReportMetric(float64(s.Fsyncs)/float64(s.Records), "fsyncs/record")
		b.ReportMetric(float64(s.Records)/float64(s.Batches), "records/batch")
	}
	b.Run("serial", func(b *testing.B) {
		w, err := Open(b.TempDir() + "/run.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		for b.Loop() {
			if err := w.AppendSync(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
		report(b, w)
	})
	for _, perProc := range []int{8, 64} {
		// RunParallel starts perProc goroutines per GOMAXPROCS.
		goroutines := perProc * runtime.GOMAXPROCS(0)
		b.Run(fmt.Sprintf("goroutines=%d", goroutines), func(b *testing.B) {
			w, err := Open(b.TempDir() + "/run.jsonl")
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.SetParallelism(perProc)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := w.AppendSync(ctx, rec); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			report(b, w)
		})
	}
}

func BenchmarkScan10k(b *testing.B) {
	path := b.TempDir() + "/run.jsonl"
	w, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		if err := w.Append(record300(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	start := time.Now()
	for b.Loop() {
		n := 0
		if _, err := Scan(path, func([]byte) error { n++; return nil }); err != nil || n != 10_000 {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms/scan")
}
