package metrics

import (
	"bytes"
	"runtime"
)

// writeProcess writes the Go runtime's figures, under the names
// client_golang's default collectors give them where they have one (all
// but go_gc_cycles_total), so that dashboards built for any Go service
// read them, and then the process's own (process_*, where the system
// tells them).
func writeProcess(w *bytes.Buffer) {
	// ReadMemStats, not runtime/metrics: that package's init builds its
	// table of descriptions in every dynworkflow process (0.8 ms), and only
	// serve is ever scraped.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	writeHeader(w, "go_info", "Information about the Go environment.", "gauge")
	writeSample(w, "go_info", []string{"version"}, []string{runtime.Version()}, "", "", 1)
	writeGauge(w, "go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	writeGauge(w, "go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", float64(ms.HeapAlloc))
	writeGauge(w, "go_memstats_sys_bytes", "Number of bytes obtained from system.", float64(ms.Sys))
	writeGauge(w, "go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", float64(ms.NextGC))
	writeHeader(w, "go_gc_cycles_total", "Completed garbage collection cycles.", "counter")
	writeSample(w, "go_gc_cycles_total", nil, nil, "", "", float64(ms.NumGC))
	writeSystem(w)
}
