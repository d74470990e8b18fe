// Command testreport reads `go test -json` on stdin and prints what a
// person wants from a whole-suite run: every package's result and wall
// time, slowest first; the reasons tests were skipped, each once with how
// many tests it skipped; and the output of every failed test. The last
// line is the total of the packages' times and the number that failed.
// Its exit status is 1 when a package failed.
//
// With -tsv it prints only one line per package, "result\tseconds\tpackage",
// for scripts to collect (bench/stress-tests.sh).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// event is one line of test2json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type pkg struct {
	name    string
	result  string // ok, FAIL, or none (no test files)
	elapsed float64
	output  []string            // lines outside any test (build failures, panics)
	tests   map[string][]string // output per test
	failed  []string
	skipped []string
}

func main() {
	tsv := flag.Bool("tsv", false, "print only result, seconds and package, tab-separated")
	flag.Parse()
	pkgs, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	slices.SortFunc(pkgs, func(a, b *pkg) int { return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), strings.Compare(a.name, b.name)) })
	failed := 0
	for _, p := range pkgs {
		if p.result == "FAIL" {
			failed++
		}
	}
	if *tsv {
		for _, p := range pkgs {
			fmt.Printf("%s\t%.1f\t%s\n", p.result, p.elapsed, p.name)
		}
	} else {
		report(os.Stdout, pkgs, failed)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

func read(r io.Reader) ([]*pkg, error) {
	byName := map[string]*pkg{}
	var order []*pkg
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // go test's own lines (build output) when not JSON
		}
		if e.Package == "" {
			continue
		}
		p := byName[e.Package]
		if p == nil {
			p = &pkg{name: e.Package, result: "none", tests: map[string][]string{}}
			byName[e.Package] = p
			order = append(order, p)
		}
		switch {
		case e.Action == "output" && e.Test == "":
			p.output = append(p.output, e.Output)
		case e.Action == "output":
			p.tests[e.Test] = append(p.tests[e.Test], e.Output)
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail"):
			p.result, p.elapsed = map[string]string{"pass": "ok", "fail": "FAIL"}[e.Action], e.Elapsed
		case e.Test == "" && e.Action == "skip":
			p.result = "none"
		case e.Action == "fail":
			p.failed = append(p.failed, e.Test)
		case e.Action == "skip":
			p.skipped = append(p.skipped, e.Test)
		}
	}
	return order, sc.Err()
}

// position is the file:line prefix of a test's log line.
var position = regexp.MustCompile(`^\s*\S+\.go:\d+: `)

func report(w io.Writer, pkgs []*pkg, failed int) {
	total := 0.0
	reasons := map[string]int{}
	for _, p := range pkgs {
		if p.result == "none" {
			continue
		}
		total += p.elapsed
		fmt.Fprintf(w, "%-4s %7.1f s  %s\n", p.result, p.elapsed, p.name)
		for _, t := range p.skipped {
			reasons[skipReason(p.tests[t])]++
		}
	}
	if len(reasons) > 0 {
		fmt.Fprintln(w, "skipped:")
		keys := make([]string, 0, len(reasons))
		for k := range reasons {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(reasons[b], reasons[a]), strings.Compare(a, b)) })
		for _, k := range keys {
			fmt.Fprintf(w, "  %3d × %s\n", reasons[k], k)
		}
	}
	for _, p := range pkgs {
		if p.result != "FAIL" {
			continue
		}
		fmt.Fprintf(w, "--- %s failed:\n", p.name)
		for _, t := range p.failed {
			if !slices.ContainsFunc(p.failed, func(o string) bool { return strings.HasPrefix(o, t+"/") }) {
				fmt.Fprint(w, strings.Join(p.tests[t], ""))
			}
		}
		if len(p.failed) == 0 {
			fmt.Fprint(w, strings.Join(p.output, ""))
		}
	}
	fmt.Fprintf(w, "%.1f s in all packages' tests, %d packages failed\n", total, failed)
}

// skipReason is the line a skipped test logged last, without its position.
func skipReason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		l := strings.TrimSpace(position.ReplaceAllString(out[i], ""))
		if l != "" && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "===") {
			return l
		}
	}
	return "(no reason given)"
}
