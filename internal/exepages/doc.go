// Package exepages gives back the pages of the program's own executable
// that its start-up mapped and its steady state does not need.
//
// A process's resident set counts every page of its executable it has
// touched, and the kernel maps the 64 KB around each page it faults in.
// Start-up touches pages all over the binary: every linked package runs
// its initialization, the command line is parsed, configuration read, a
// script compiled. A dynworkflow run or server then spends hours in a far
// smaller part of the program, but keeps the rest mapped, and that is what
// `ps`, `top` and a peak-RSS measurement report.
//
// Release unmaps the executable's clean pages from this process once
// start-up is over. Nothing is lost: the pages are clean copies of the
// file, they stay in the page cache, and one the process needs again is
// mapped back on first use by a minor fault, without reading the disk.
// What changes is what the process holds mapped: its RSS, and the pages
// the kernel may reclaim first under memory pressure, which are those no
// process maps.
package exepages
