//go:build !unix

package main

import "os"

// maxRSS is unknown here: the peak RSS is reported as 0.
func maxRSS(*os.ProcessState) int64 { return 0 }
