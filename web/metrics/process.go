package metrics

import (
	"bytes"
	"runtime"
	"runtime/metrics"
)

// writeProcess writes the Go runtime's figures, under the names
// client_golang's default collectors give them where they have one (all
// but go_gc_cycles_total), so that dashboards built for any Go service
// read them, and then the process's own (process_*, where the system
// tells them).
func writeProcess(w *bytes.Buffer) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(samples)
	value := func(i int) float64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return float64(samples[i].Value.Uint64())
	}
	writeHeader(w, "go_info", "Information about the Go environment.", "gauge")
	writeSample(w, "go_info", []string{"version"}, []string{runtime.Version()}, "", "", 1)
	writeGauge(w, "go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	writeGauge(w, "go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", value(0))
	writeGauge(w, "go_memstats_sys_bytes", "Number of bytes obtained from system.", value(1))
	writeGauge(w, "go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", value(2))
	writeHeader(w, "go_gc_cycles_total", "Completed garbage collection cycles.", "counter")
	writeSample(w, "go_gc_cycles_total", nil, nil, "", "", value(3))
	writeSystem(w)
}
