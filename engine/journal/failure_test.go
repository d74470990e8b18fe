package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// A write that fails part way (a full disk) is cut off at once, so no torn
// record stays in the journal and its space is free again; the Writer
// takes no more records, but one last one (how the run ended) may still
// go out, and then the journal reads back whole.
func TestFailedWriteIsUndone(t *testing.T) {
	path := tempJournal(t)
	full := false
	w := openT(t, path, Options{hooks: hooks{write: func(f *os.File, b []byte) (int, error) {
		if full {
			n, _ := f.Write(b[:len(b)/2])
			return n, syscall.ENOSPC
		}
		return f.Write(b)
	}}})
	ctx := context.Background()
	if err := w.AppendSync(ctx, []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	full = true
	err := w.AppendSync(ctx, []byte(`{"n":2,"answer":"`+strings.Repeat("x", 1000)+`"}`))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("AppendSync on a full disk = %v", err)
	}
	if after, _ := os.Stat(path); after.Size() != before.Size() {
		t.Errorf("the failed write left %d bytes behind", after.Size()-before.Size())
	}
	if err := w.Err(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Err = %v, want the write's error", err)
	}
	if err := w.WaitWritten(ctx); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WaitWritten = %v, want the write's error", err)
	}
	if err := w.Append([]byte(`{"n":3}`)); err == nil {
		t.Error("a broken Writer took another record")
	}
	full = false
	if err := w.AppendLast(ctx, []byte(`{"n":"end"}`)); err != nil {
		t.Fatalf("AppendLast after an undone write: %v", err)
	}
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close = %v, want the error that broke the Writer", err)
	}
	if got := readAllT(t, path); strings.Join(got, " ") != `{"n":1} {"n":"end"}` {
		t.Errorf("journal = %q", got)
	}
}

// A Writer whose sync failed takes nothing more, not even a last record:
// after a failed fsync the kernel may have dropped what it was to sync.
func TestFailedSyncTakesNoLastRecord(t *testing.T) {
	path := tempJournal(t)
	errDisk := errors.New("disk error")
	w := openT(t, path, Options{hooks: hooks{sync: func(*os.File) error { return errDisk }}})
	defer w.Close()
	if err := w.AppendSync(context.Background(), []byte(`{"n":1}`)); !errors.Is(err, errDisk) {
		t.Fatalf("AppendSync = %v", err)
	}
	if err := w.AppendLast(context.Background(), []byte(`{"n":"end"}`)); !errors.Is(err, errDisk) {
		t.Errorf("AppendLast after a failed sync = %v, want the sync's error", err)
	}
}

// A last line written whole whose checksum fails (a flipped bit) is
// damage, reported and left in place; only a line cut short by a crash (no
// newline, zeros where its bytes should be) is a torn tail to move aside.
func TestDamagedLastLineIsNotTorn(t *testing.T) {
	good := func(t *testing.T) (string, []byte) {
		path := tempJournal(t)
		w := openT(t, path, Options{})
		for _, r := range []string{`{"type":"run"}`, `{"type":"end","end":{"status":"completed"}}`} {
			if err := w.AppendSync(context.Background(), []byte(r)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		return path, data
	}
	t.Run("flipped bit", func(t *testing.T) {
		path, data := good(t)
		last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
		data[last+12] ^= 0x04
		writeFile(t, path, string(data))
		rep, err := ScanReadOnly(path, func([]byte) error { return nil })
		if err != nil || rep.TornBytes != 0 || len(rep.Damaged) != 1 || rep.Damaged[0].Line != 2 {
			t.Fatalf("scan = %+v, %v; want line 2 damaged, no torn tail", rep, err)
		}
		w := openT(t, path, Options{})
		if w.OpenRepair().Repaired() {
			t.Errorf("Open moved a damaged (not torn) last line aside: %v", w.OpenRepair())
		}
		w.Close()
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Error("the journal changed")
		}
	})
	t.Run("zeros", func(t *testing.T) {
		path, data := good(t)
		last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
		for i := last + 5; i < last+20; i++ {
			data[i] = 0
		}
		writeFile(t, path, string(data))
		rep, err := ScanReadOnly(path, func([]byte) error { return nil })
		if err != nil || rep.TornBytes != int64(len(data)-last) || len(rep.Damaged) != 0 {
			t.Fatalf("scan = %+v, %v; want the zeroed last line torn", rep, err)
		}
	})
}

// The journal keeps room for its last record: once the disk has no room
// to top it up, the Writer takes no more records, and the last one (how
// the run ended) still goes out.
func TestRoomForTheLastRecord(t *testing.T) {
	path := tempJournal(t)
	var full atomic.Bool
	w := openT(t, path, Options{hooks: hooks{reserve: func(f *os.File, off, n int64) error {
		if full.Load() {
			return syscall.ENOSPC
		}
		return nil
	}}})
	ctx := context.Background()
	full.Store(true)
	big := []byte(`{"answer":"` + strings.Repeat("x", roomSize-roomLow) + `"}`)
	if err := w.AppendSync(ctx, big); err != nil {
		t.Fatalf("the record that fills the room: %v", err)
	}
	if err := w.AppendSync(ctx, []byte(`{"n":2}`)); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a record past the room: %v, want no space", err)
	}
	if err := w.AppendLast(ctx, []byte(`{"n":"end"}`)); err != nil {
		t.Fatalf("the last record: %v", err)
	}
	w.Close()
	if got := readAllT(t, path); len(got) != 2 || got[1] != `{"n":"end"}` {
		t.Errorf("journal = %d records, last %q", len(got), got[len(got)-1])
	}
}

// A Mark reads lines of any size, in chunks, and still checks their seals:
// a changed byte in the middle of a long last line changes the Mark. The
// sizes straddle the first, small read and the large ones after it.
func TestMarkOfLongLines(t *testing.T) {
	for _, size := range []int{100, firstChunk - 40, firstChunk, firstChunk + 1, markChunk - 20, markChunk + firstChunk, 3 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			path := tempJournal(t)
			w := openT(t, path, Options{})
			long := func(c string) []byte { return []byte(`{"v":"` + strings.Repeat(c, size) + `"}`) }
			for _, rec := range [][]byte{long("a"), []byte(`{"n":2}`), long("b")} {
				if err := w.AppendSync(context.Background(), rec); err != nil {
					t.Fatal(err)
				}
			}
			want := w.Mark()
			w.Close()
			got, err := ReadMark(path)
			if err != nil || got != want || got.Head == "" || got.Tail == "" {
				t.Fatalf("ReadMark = %+v, %v; the writer's is %+v", got, err, want)
			}
			data, _ := os.ReadFile(path)
			data[len(data)-size/2-10] ^= 1
			writeFile(t, path, string(data))
			if got, _ := ReadMark(path); got.Tail != "" || got.Head != want.Head {
				t.Errorf("after a flipped bit in the last line: %+v", got)
			}
		})
	}
}
