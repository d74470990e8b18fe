package journal

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkRepair(t *testing.T, path string, r Repair, torn string, goodEnd int64) {
	t.Helper()
	if !r.Repaired() || r.Bytes != int64(len(torn)) || r.Offset != goodEnd {
		t.Fatalf("Repair = %+v, want %d bytes moved from offset %d", r, len(torn), goodEnd)
	}
	if !strings.HasPrefix(r.SidePath, path+".torn-") {
		t.Errorf("side file %s is not named after the journal", r.SidePath)
	}
	if got := readFile(t, r.SidePath); got != torn {
		t.Errorf("side file holds %q, want %q", got, torn)
	}
	if fi, err := os.Stat(r.SidePath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("side file mode %v (%v), want 0600", fi.Mode(), err)
	}
}

func TestOpenRepairsTornTail(t *testing.T) {
	for name, tc := range map[string]struct{ good, torn string }{
		"partial line":       {"{\"a\":1}\n{\"b\":2}\n", `{"c":`},
		"partial valid JSON": {"{\"a\":1}\n", `{"c":3}`},
		"invalid last line":  {"{\"a\":1}\n", "{\"c\":3,\x00\x00\n"},
		"only a torn line":   {"", `{"c`},
		"zero-filled block":  {"{\"a\":1}\n", "\x00\x00\x00\x00"},
	} {
		t.Run(name, func(t *testing.T) {
			path := tempJournal(t)
			writeFile(t, path, tc.good+tc.torn)
			w := openT(t, path, Options{})
			checkRepair(t, path, w.OpenRepair(), tc.torn, int64(len(tc.good)))
			if got := readFile(t, path); got != tc.good {
				t.Errorf("journal after repair = %q, want %q", got, tc.good)
			}
			// Appends continue after the last good record.
			if err := w.AppendSync(context.Background(), []byte(`{"d":4}`)); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if got := readFile(t, path); got != tc.good+"{\"d\":4}\n" {
				t.Errorf("journal = %q", got)
			}
		})
	}
}

func TestOpenLeavesGoodJournalAlone(t *testing.T) {
	path := tempJournal(t)
	writeFile(t, path, "{\"a\":1}\n{\"b\":2}\n")
	w := openT(t, path, Options{})
	defer w.Close()
	if r := w.OpenRepair(); r.Repaired() {
		t.Errorf("Open repaired a good journal: %v", r)
	}
	matches, _ := filepath.Glob(path + ".torn-*")
	if len(matches) != 0 {
		t.Errorf("side files created: %v", matches)
	}
}

func TestScanRepairsTornTail(t *testing.T) {
	path := tempJournal(t)
	good, torn := "{\"a\":1}\n{\"b\":2}\n", `{"c":3`
	writeFile(t, path, good+torn)
	var lines []string
	r, err := Scan(path, func(line []byte) error {
		lines = append(lines, string(line))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(lines, "|") != `{"a":1}|{"b":2}` {
		t.Errorf("Scan saw %q", lines)
	}
	checkRepair(t, path, r, torn, int64(len(good)))
	if got := readFile(t, path); got != good {
		t.Errorf("journal after Scan = %q, want %q", got, good)
	}
}

// TestScanLeavesLiveTail checks that Scan does not mistake a write in
// progress by an open Writer for a torn tail.
func TestScanLeavesLiveTail(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	defer w.Close()
	if err := w.AppendSync(context.Background(), []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"half":`)
	f.Close()

	recs, r, err := ReadAll(path)
	if err != nil || r.Repaired() || len(recs) != 1 {
		t.Errorf("ReadAll = %q, %v, %v; want the one complete record and no repair", recs, r, err)
	}
	if got := readFile(t, path); got != "{\"a\":1}\n{\"half\":" {
		t.Errorf("Scan changed a live journal: %q", got)
	}
}

func TestDamagedMiddleLine(t *testing.T) {
	const content = "{\"a\":1}\nnot json\n{\"b\":2}\n"
	path := tempJournal(t)
	writeFile(t, path, content)
	_, _, err := ReadAll(path)
	var damaged *DamagedError
	if !errors.As(err, &damaged) || !errors.Is(err, ErrDamaged) {
		t.Fatalf("ReadAll = %v, want a *DamagedError", err)
	}
	if damaged.Line != 2 || damaged.Offset != 8 || damaged.Path != path {
		t.Errorf("DamagedError = %+v, want line 2 at byte 8 of %s", damaged, path)
	}
	msg := err.Error()
	for _, want := range []string{path, "line 2 (byte 8)", "move the file aside", "remove that line"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not mention %q", msg, want)
		}
	}
	if got := readFile(t, path); got != content {
		t.Errorf("a damaged journal was changed: %q", got)
	}
}

// A bad line followed by anything, even a torn line, was not made by a
// crash: Open and Scan both refuse rather than drop it.
func TestDamagedLineBeforeTornTail(t *testing.T) {
	for name, content := range map[string]string{
		"bad then partial": "{\"a\":1}\nnot json\n{\"b\":",
		"bad then bad":     "{\"a\":1}\nnot json\nnor this\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := tempJournal(t)
			writeFile(t, path, content)
			var damaged *DamagedError
			if _, err := Open(path); !errors.As(err, &damaged) || damaged.Line != 2 || damaged.Offset != 8 {
				t.Errorf("Open = %v, want damage at line 2, byte 8", err)
			}
			if _, _, err := ReadAll(path); !errors.As(err, &damaged) || damaged.Line != 2 {
				t.Errorf("ReadAll = %v, want damage at line 2", err)
			}
			if got := readFile(t, path); got != content {
				t.Errorf("a damaged journal was changed: %q", got)
			}
		})
	}
}

func TestScanLongRecord(t *testing.T) {
	path := tempJournal(t)
	long := `{"x":"` + strings.Repeat("y", 200<<10) + `"}`
	w := openT(t, path, Options{})
	for _, rec := range []string{`{"a":1}`, long, `{"b":2}`} {
		if err := w.Append([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	got := readAllT(t, path)
	if len(got) != 3 || got[1] != long || got[2] != `{"b":2}` {
		t.Errorf("ReadAll returned %d records, want the three written", len(got))
	}
}

func TestScanCallbackError(t *testing.T) {
	path := tempJournal(t)
	writeFile(t, path, "{\"a\":1}\n{\"b\":2}\n")
	errStop := errors.New("stop")
	_, err := Scan(path, func(line []byte) error {
		if bytes.Contains(line, []byte("b")) {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) || !strings.Contains(err.Error(), "line 2 (byte 8)") {
		t.Errorf("Scan = %v, want errStop wrapped with its position", err)
	}
}

func TestScanMissingAndEmpty(t *testing.T) {
	path := tempJournal(t)
	if _, err := Scan(path, func([]byte) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Scan of a missing journal = %v, want fs.ErrNotExist", err)
	}
	writeFile(t, path, "")
	recs, r, err := ReadAll(path)
	if err != nil || r.Repaired() || len(recs) != 0 {
		t.Errorf("ReadAll of an empty journal = %q, %v, %v", recs, r, err)
	}
}

func TestScanReadOnly(t *testing.T) {
	path := tempJournal(t)
	content := "{\"a\":1}\n{\"b\":2}\n{\"c\":"
	writeFile(t, path, content)
	var n int
	if err := ScanReadOnly(path, func([]byte) error { n++; return nil }); err != nil || n != 2 {
		t.Errorf("ScanReadOnly saw %d records, %v; want 2", n, err)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("ScanReadOnly changed the journal: %q", got)
	}
	if side, _ := filepath.Glob(path + ".torn-*"); len(side) != 0 {
		t.Errorf("ScanReadOnly wrote side files %q", side)
	}

	writeFile(t, path, "{\"a\":1}\nnot json\n{\"b\":2}\n")
	var damaged *DamagedError
	if err := ScanReadOnly(path, func([]byte) error { return nil }); !errors.As(err, &damaged) || damaged.Line != 2 {
		t.Errorf("ScanReadOnly of a damaged journal = %v, want damage at line 2", err)
	}
}
