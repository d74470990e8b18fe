// Command measure runs a command several times and prints its median wall
// time, its CPU time and its peak resident set size, for the CLI
// benchmarks in bench/. It needs nothing but Go: GNU time is not always
// installed, and bash's time does not report memory.
//
//	measure [-n 5] [-label NAME] [-expect-exit 0] [-stdout FILE] -- COMMAND [ARG...]
//
// It prints one line of key=value pairs, times in milliseconds and memory
// in MB (10^6 bytes):
//
//	label=list runs=5 wall_median_ms=12.3 wall_min_ms=11.9 wall_max_ms=14.0 cpu_median_ms=10.1 rss_max_mb=21.4 rss_median_mb=21.2
//
// The command's standard output is discarded, or the last run's is saved
// to -stdout FILE; its standard error passes through. measure exits 1 if
// any run exits with a status other than -expect-exit.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 5, "how many times to run the command")
	label := flag.String("label", "", "a name for the output line (default: the command's base name)")
	expect := flag.Int("expect-exit", 0, "the exit status every run must have")
	stdout := flag.String("stdout", "", "save the last run's standard output to this file")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: measure [-n N] [-label NAME] [-expect-exit CODE] [-stdout FILE] -- COMMAND [ARG...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 || *n < 1 {
		flag.Usage()
		os.Exit(64)
	}
	if *label == "" {
		*label = args[0]
	}

	var walls, cpus, rss []float64
	for i := range *n {
		var out io.Writer = io.Discard
		var f *os.File
		if *stdout != "" && i == *n-1 {
			var err error
			if f, err = os.Create(*stdout); err != nil {
				fatal(err)
			}
			out = f
		}
		s, err := once(args, out)
		if f != nil {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
		if err != nil {
			fatal(err)
		}
		if s.exit != *expect {
			fatal(fmt.Errorf("run %d of %q exited with status %d, want %d", i+1, args, s.exit, *expect))
		}
		walls = append(walls, ms(s.wall))
		cpus = append(cpus, ms(s.cpu))
		rss = append(rss, float64(s.maxRSS)/1e6)
	}
	fmt.Printf("label=%s runs=%d wall_median_ms=%.1f wall_min_ms=%.1f wall_max_ms=%.1f cpu_median_ms=%.1f rss_max_mb=%.1f rss_median_mb=%.1f\n",
		*label, *n, median(walls), slices.Min(walls), slices.Max(walls), median(cpus), slices.Max(rss), median(rss))
}

// sample is what one run of the command cost.
type sample struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
	exit      int
}

func once(args []string, stdout io.Writer) (sample, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = nil
	cmd.Stdout = stdout
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return sample{}, err
	}
	ps := cmd.ProcessState
	cpu := ps.UserTime() + ps.SystemTime()
	return sample{wall: wall, cpu: cpu, maxRSS: maxRSS(ps), exit: ps.ExitCode()}, nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "measure:", err)
	os.Exit(1)
}
