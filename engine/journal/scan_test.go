package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
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
			if got := readFile(t, path); !strings.HasPrefix(got, tc.good+`{"d":4,"crc":"`) {
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
	rep, err := Scan(path, func(line []byte) error {
		lines = append(lines, string(line))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(lines, "|") != `{"a":1}|{"b":2}` {
		t.Errorf("Scan saw %q", lines)
	}
	checkRepair(t, path, rep.Repair, torn, int64(len(good)))
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

	recs, rep, err := ReadAll(path)
	if err != nil || rep.Repair.Repaired() || len(recs) != 1 {
		t.Errorf("ReadAll = %q, %+v, %v; want the one complete record and no repair", recs, rep, err)
	}
	if got := readFile(t, path); !strings.HasSuffix(got, "}\n{\"half\":") {
		t.Errorf("Scan changed a live journal: %q", got)
	}
}

// A damaged line in the middle is skipped and reported, and stays where it
// is: the records around it still count.
func TestDamagedMiddleLine(t *testing.T) {
	const content = "{\"a\":1}\nnot json\n{\"b\":2}\n"
	path := tempJournal(t)
	writeFile(t, path, content)
	recs, rep, err := ReadAll(path)
	if err != nil || len(recs) != 2 {
		t.Fatalf("ReadAll = %q, %v; want the two good records", recs, err)
	}
	if len(rep.Damaged) != 1 || rep.Damaged[0].Line != 2 || rep.Damaged[0].Offset != 8 ||
		string(rep.Damaged[0].Head) != "not json" || rep.TornBytes != 0 {
		t.Errorf("Report = %+v, want line 2 at byte 8 damaged", rep)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("a damaged journal was changed: %q", got)
	}
	// Open leaves it too: only a torn tail is moved.
	w := openT(t, path, Options{})
	w.Close()
	if r := w.OpenRepair(); r.Repaired() {
		t.Errorf("Open repaired %v", r)
	}
}

// A bad line followed by a torn line is damage; only the torn line is
// moved aside.
func TestDamagedLineBeforeTornTail(t *testing.T) {
	for name, tc := range map[string]struct{ content, torn string }{
		"bad then partial": {"{\"a\":1}\nnot json\n{\"b\":", `{"b":`},
		"bad then bad":     {"{\"a\":1}\nnot json\nnor this\n", "nor this\n"},
	} {
		t.Run(name, func(t *testing.T) {
			path := tempJournal(t)
			writeFile(t, path, tc.content)
			recs, rep, err := ReadAll(path)
			if err != nil || len(recs) != 1 {
				t.Fatalf("ReadAll = %q, %v", recs, err)
			}
			if len(rep.Damaged) != 1 || rep.Damaged[0].Line != 2 || rep.TornBytes != int64(len(tc.torn)) {
				t.Errorf("Report = %+v, want line 2 damaged and a torn tail of %d bytes", rep, len(tc.torn))
			}
			checkRepair(t, path, rep.Repair, tc.torn, int64(len(tc.content)-len(tc.torn)))
		})
	}
}

// Every record written is sealed with its CRC-32C, as a last JSON field, and
// reads back as it was appended.
func TestRecordsAreSealed(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	recs := []string{`{"a":1}`, `{"b":"x\u00e9"}`, `{"seq":3,"result":{"crc":"00000000"}}`}
	for _, r := range recs {
		if err := w.Append([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for i, line := range strings.Split(strings.TrimSuffix(readFile(t, path), "\n"), "\n") {
		want := fmt.Sprintf(`%s,"crc":"%08x"}`, recs[i][:len(recs[i])-1], crc32.Checksum([]byte(recs[i]), crc32.MakeTable(crc32.Castagnoli)))
		if line != want {
			t.Errorf("line %d = %s, want %s", i+1, line, want)
		}
		if !json.Valid([]byte(line)) {
			t.Errorf("line %d is not JSON: %s", i+1, line)
		}
	}
	if got := readAllT(t, path); strings.Join(got, "|") != strings.Join(recs, "|") {
		t.Errorf("read back %q, want %q", got, recs)
	}
}

// No single changed byte of a sealed journal lets a record through with a
// content other than the one written: every change either leaves the
// records as written or makes the scan skip and report a line.
func TestEverySingleByteChangeIsCaught(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	var want []string
	for i := range 6 {
		rec := fmt.Sprintf(`{"seq":%d,"type":"call.finished","path":"/par0/%d/agent0","result":"answer %d"}`, i+1, i, i)
		want = append(want, rec)
		if err := w.Append([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	pristine := []byte(readFile(t, path))
	written := map[string]bool{}
	for _, r := range want {
		written[r] = true
	}
	changed := filepath.Join(t.TempDir(), "changed.jsonl")
	for off := range pristine {
		for _, x := range []byte{0x01, 0x20, 0x80, 0xff} {
			b := bytes.Clone(pristine)
			b[off] ^= x
			writeFile(t, changed, string(b))
			var got []string
			rep, err := ScanReadOnly(changed, func(line []byte) error {
				got = append(got, string(line))
				return nil
			})
			if err != nil {
				t.Fatalf("byte %d ^ %#x: %v", off, x, err)
			}
			for _, g := range got {
				if !written[g] {
					t.Fatalf("byte %d ^ %#x: a record was read that was never written: %s", off, x, g)
				}
			}
			if len(got) < len(want) && len(rep.Damaged) == 0 && rep.TornBytes == 0 {
				t.Fatalf("byte %d ^ %#x: %d records lost without a report", off, x, len(want)-len(got))
			}
		}
	}
}

// Journals written before checksums read as they are; once a sealed line
// has been read, a line without a seal is damage.
func TestUnsealedJournals(t *testing.T) {
	path := tempJournal(t)
	writeFile(t, path, "{\"a\":1}\n{\"b\":2}\n")
	w := openT(t, path, Options{})
	if err := w.Append([]byte(`{"c":3}`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	appendRaw(t, path, "{\"d\":4}\n{\"e\":5}\n")
	recs, rep, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, string(r))
	}
	if strings.Join(got, "|") != `{"a":1}|{"b":2}|{"c":3}` {
		t.Errorf("records %q", got)
	}
	if len(rep.Damaged) != 2 || rep.Damaged[0].Line != 4 || rep.Damaged[1].Line != 5 ||
		!strings.Contains(rep.Damaged[0].Reason, "checksum is missing") {
		t.Errorf("Report = %+v, want lines 4 and 5 damaged for a missing checksum", rep)
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
	recs, rep, err := ReadAll(path)
	if err != nil || rep.Repair.Repaired() || len(recs) != 0 {
		t.Errorf("ReadAll of an empty journal = %q, %+v, %v", recs, rep, err)
	}
}

func TestScanReadOnly(t *testing.T) {
	path := tempJournal(t)
	content := "{\"a\":1}\n{\"b\":2}\n{\"c\":"
	writeFile(t, path, content)
	var n int
	rep, err := ScanReadOnly(path, func([]byte) error { n++; return nil })
	if err != nil || n != 2 || rep.TornBytes != 5 || rep.Repair.Repaired() {
		t.Errorf("ScanReadOnly saw %d records, %+v, %v; want 2 and a torn tail left alone", n, rep, err)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("ScanReadOnly changed the journal: %q", got)
	}
	if side, _ := filepath.Glob(path + ".torn-*"); len(side) != 0 {
		t.Errorf("ScanReadOnly wrote side files %q", side)
	}
}

// A Writer's Mark is what ReadMark reads from the file, and a change to
// the last record, or to the size, changes the Mark.
func TestMark(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	if m := w.Mark(); m != (Mark{}) {
		t.Errorf("Mark of a new journal = %+v", m)
	}
	for _, rec := range []string{`{"a":1}`, `{"b":2}`} {
		if err := w.AppendSync(context.Background(), []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	want := w.Mark()
	w.Close()
	got, err := ReadMark(path)
	if err != nil || got != want || want.Size == 0 || len(want.Tail) != 8 || len(want.Head) != 8 || want.Head == want.Tail {
		t.Fatalf("ReadMark = %+v, %v; the writer's Mark was %+v", got, err, want)
	}
	w = openT(t, path, Options{})
	if m := w.Mark(); m != want {
		t.Errorf("Mark on reopening = %+v, want %+v", m, want)
	}
	w.Close()

	content := []byte(readFile(t, path))
	first := bytes.Clone(content)
	first[3] ^= 1 // in the first record
	writeFile(t, path, string(first))
	if m, _ := ReadMark(path); m.Size != want.Size || m.Head != "" || m.Tail != want.Tail {
		t.Errorf("Mark of a damaged first record = %+v, want no head", m)
	}
	content[len(content)-5] ^= 1 // in the last record's seal
	writeFile(t, path, string(content))
	if m, _ := ReadMark(path); m.Size != want.Size || m.Tail != "" {
		t.Errorf("Mark of a damaged last record = %+v, want the size and no tail", m)
	}
	writeFile(t, path, string(content[:len(content)/2+3]))
	if m, _ := ReadMark(path); m.Size != int64(len(content)/2+3) || m.Tail != "" {
		t.Errorf("Mark of a cut journal = %+v", m)
	}
	if _, err := ReadMark(path + ".gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadMark of a missing journal = %v", err)
	}
}
