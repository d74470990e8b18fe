package journal

// Stats counts a Writer's work since Open, for benchmarks and diagnostics.
type Stats struct {
	Records int64 // records written
	Batches int64 // write(2) calls, one per batch
	Fsyncs  int64 // fdatasync calls
	Bytes   int64 // bytes written, newlines included
}

// Stats returns the counters so far.
func (w *Writer) Stats() Stats {
	return Stats{
		Records: w.records.Load(),
		Batches: w.batches.Load(),
		Fsyncs:  w.fsyncs.Load(),
		Bytes:   w.bytesWritten.Load(),
	}
}
