package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/store"
)

// A row wider than the terminal wraps, and so does every row after it:
// list cuts long names to fit, and only when it must.
func TestRunTableFitsTheTerminal(t *testing.T) {
	started := time.Date(2026, 12, 2, 9, 57, 35, 0, time.Local)
	runs := []store.Summary{
		{RunID: "run-mx5ycn9w-pg3x0x", Status: "completed", Name: "comprehensive_code_review_pipeline", StartedAt: started},
		{RunID: "run-mx5ycn9w-pg3x0y", Status: "paused", Name: "レビューとテストの長いワークフロー名", StartedAt: started, PauseReason: "quota"},
		{RunID: "run-mx5ycn9w-pg3x0z", Status: "completed", Name: "short", StartedAt: started},
	}
	for _, tc := range []struct {
		name      string
		width     int
		wantCut   bool
		shortTime bool
	}{
		{"80 columns", 80, true, true},
		{"100 columns", 100, true, true},
		{"just wide enough", 112, false, false},
		{"one column short: the start time gives way first", 111, false, true},
		{"wide", 200, false, false},
		{"not a terminal", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printRunTable(&out, runs, tc.width)
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			for _, l := range lines {
				if tc.width > 0 && textWidth(l) >= tc.width {
					t.Errorf("a line of %d columns on a terminal of %d:\n%s", textWidth(l), tc.width, out.String())
				}
			}
			whole := strings.Contains(out.String(), runs[0].Name) && strings.Contains(out.String(), runs[1].Name)
			if whole == tc.wantCut {
				t.Errorf("names whole: %v, want %v:\n%s", whole, !tc.wantCut, out.String())
			}
			if !strings.Contains(out.String(), "short ") || !strings.Contains(out.String(), "12-02 09:57") {
				t.Errorf("a column lost what fits:\n%s", out.String())
			}
			if seconds := strings.Contains(out.String(), "2026-12-02 09:57:35"); seconds != !tc.shortTime {
				t.Errorf("start times with year and seconds: %v, want %v:\n%s", seconds, !tc.shortTime, out.String())
			}
		})
	}
}
