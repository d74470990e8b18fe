package journal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func tempJournal(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "run.jsonl")
}

func openT(t *testing.T, path string, opts Options) *Writer {
	t.Helper()
	w, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func readAllT(t *testing.T, path string) []string {
	t.Helper()
	recs, _, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r)
	}
	return out
}

func TestAppendSyncConcurrent(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	const goroutines, each = 32, 25
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				rec := fmt.Appendf(nil, `{"g":%d,"i":%d}`, g, i)
				if err := w.AppendSync(context.Background(), rec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	stats := w.Stats()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	seen := map[string]int{}
	for _, r := range readAllT(t, path) {
		seen[r]++
	}
	for g := range goroutines {
		for i := range each {
			if rec := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i); seen[rec] != 1 {
				t.Errorf("record %s present %d times, want once", rec, seen[rec])
			}
		}
	}
	if len(seen) != goroutines*each {
		t.Errorf("journal holds %d distinct records, want %d", len(seen), goroutines*each)
	}
	if stats.Records != goroutines*each {
		t.Errorf("Stats.Records = %d, want %d", stats.Records, goroutines*each)
	}
	if stats.Fsyncs >= stats.Records {
		t.Errorf("%d fsyncs for %d records: no group commit", stats.Fsyncs, stats.Records)
	}
	t.Logf("%+v", stats)
}

// TestGroupCommit stalls the first fsync so that the other appenders must
// queue behind it, and checks that they all share the second one.
func TestGroupCommit(t *testing.T) {
	const others = 20
	entered, release := make(chan struct{}), make(chan struct{})
	queued := make(chan struct{}, others+1)
	var syncs atomic.Int32
	opts := Options{hooks: hooks{
		queued: func() { queued <- struct{}{} },
		beforeSync: func() {
			if syncs.Add(1) == 1 {
				close(entered)
				<-release
			}
		},
	}}
	path := tempJournal(t)
	w := openT(t, path, opts)
	defer w.Close()

	errs := make(chan error, others+1)
	go func() { errs <- w.AppendSync(context.Background(), []byte(`{"first":true}`)) }()
	<-queued
	<-entered // the first batch is now stuck in its fsync
	for i := range others {
		go func() { errs <- w.AppendSync(context.Background(), fmt.Appendf(nil, `{"n":%d}`, i)) }()
	}
	for range others {
		<-queued
	}
	close(release)
	for range others + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	if s := w.Stats(); s.Fsyncs != 2 || s.Batches != 2 || s.Records != others+1 {
		t.Errorf("Stats = %+v, want 2 fsyncs and 2 batches for %d records", s, others+1)
	}
	if n := len(readAllT(t, path)); n != others+1 {
		t.Errorf("journal holds %d records, want %d", n, others+1)
	}
}

func TestFence(t *testing.T) {
	errLeaseLost := errors.New("lease lost")
	var refuse atomic.Bool
	path := tempJournal(t)
	w := openT(t, path, Options{Fence: func() error {
		if refuse.Load() {
			return errLeaseLost
		}
		return nil
	}})
	ctx := context.Background()
	if err := w.AppendSync(ctx, []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}

	refuse.Store(true)
	err := w.AppendSync(ctx, []byte(`{"n":2}`))
	if !errors.Is(err, ErrFenced) || !errors.Is(err, errLeaseLost) {
		t.Fatalf("AppendSync after the fence refused = %v, want ErrFenced wrapping the fence's error", err)
	}
	// A writer that lost its fence stays stopped: a later record must not
	// land after a gap.
	refuse.Store(false)
	if err := w.Append([]byte(`{"n":3}`)); !errors.Is(err, errLeaseLost) {
		t.Errorf("Append after a refusal = %v, want the fence error", err)
	}
	if err := w.Close(); !errors.Is(err, ErrFenced) {
		t.Errorf("Close = %v, want the fence error", err)
	}
	if got := readAllT(t, path); len(got) != 1 || got[0] != `{"n":1}` {
		t.Errorf("journal = %q, want only the record written before the refusal", got)
	}
}

func TestClose(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{FlushInterval: time.Hour})
	for i := range 3 {
		if err := w.Append(fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s := w.Stats(); s.Fsyncs != 1 {
		t.Errorf("Close did %d fsyncs, want 1", s.Fsyncs)
	}
	if got := readAllT(t, path); len(got) != 3 {
		t.Errorf("after Close the journal holds %q, want 3 records", got)
	}

	ctx := context.Background()
	for name, err := range map[string]error{
		"Append":     w.Append([]byte(`{"x":1}`)),
		"AppendSync": w.AppendSync(ctx, []byte(`{"x":1}`)),
		"Flush":      w.Flush(ctx),
		"Close":      w.Close(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	// Close released the lock.
	w2 := openT(t, path, Options{})
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFlush(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{FlushInterval: time.Hour})
	defer w.Close()
	ctx := context.Background()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s := w.Stats(); s.Fsyncs != 0 {
		t.Errorf("Flush with nothing written synced %d times", s.Fsyncs)
	}
	if err := w.Append([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s := w.Stats(); s.Fsyncs != 1 || s.Records != 1 {
		t.Errorf("after Flush, Stats = %+v, want 1 record and 1 fsync", s)
	}
}

func TestBackgroundFlush(t *testing.T) {
	synced := make(chan struct{}, 1)
	path := tempJournal(t)
	w := openT(t, path, Options{
		FlushInterval: time.Millisecond,
		hooks:         hooks{beforeSync: func() { synced <- struct{}{} }},
	})
	defer w.Close()
	if err := w.Append([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	<-synced // no Flush, no AppendSync: the timer did it
	if got := readAllT(t, path); len(got) != 1 {
		t.Errorf("journal = %q, want the appended record", got)
	}
}

func TestSyncFailureBreaksWriter(t *testing.T) {
	errDisk := errors.New("disk on fire")
	path := tempJournal(t)
	w := openT(t, path, Options{hooks: hooks{sync: func(*os.File) error { return errDisk }}})
	ctx := context.Background()
	if err := w.AppendSync(ctx, []byte(`{"x":1}`)); !errors.Is(err, errDisk) {
		t.Fatalf("AppendSync = %v, want the sync error", err)
	}
	if err := w.Append([]byte(`{"x":1}`)); !errors.Is(err, errDisk) {
		t.Errorf("Append after a failed sync = %v, want the sync error", err)
	}
	if err := w.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close = %v, want the sync error", err)
	}
}

func TestAppendSyncContext(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	path := tempJournal(t)
	w := openT(t, path, Options{hooks: hooks{beforeSync: func() {
		close(entered)
		<-release
	}}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- w.AppendSync(ctx, []byte(`{"x":1}`)) }()
	<-entered
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("AppendSync = %v, want context.Canceled", err)
	}
	close(release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBadRecord(t *testing.T) {
	w := openT(t, tempJournal(t), Options{})
	defer w.Close()
	for _, rec := range []string{"", "{\n}", "not json", "{}", "[1,2]", `{"a":1} `} {
		if err := w.Append([]byte(rec)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("Append(%q) = %v, want ErrBadRecord", rec, err)
		}
	}
}

// A last line that is not a good record (a crash tore it) is moved aside on
// Open, not lost.
func TestInvalidLastRecordIsMovedAsideOnOpen(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	if err := w.Append([]byte(`{"ok":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, path, "not json\n")
	w = openT(t, path, Options{})
	repair := w.OpenRepair()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	side, err := os.ReadFile(repair.SidePath)
	if err != nil || string(side) != "not json\n" {
		t.Fatalf("side file %q (%v), want the invalid record", side, err)
	}
	recs, _, err := ReadAll(path)
	if err != nil || len(recs) != 1 || string(recs[0]) != `{"ok":1}` {
		t.Fatalf("journal after repair: %q %v", recs, err)
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestSecondWriterIsBusy(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	defer w.Close()
	if _, err := Open(path); !errors.Is(err, ErrBusy) {
		t.Errorf("second Open = %v, want ErrBusy", err)
	}
}

func TestFileMode(t *testing.T) {
	path := tempJournal(t)
	w := openT(t, path, Options{})
	w.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new journal: %v, %v; want mode 0600", fi.Mode(), err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	w = openT(t, path, Options{})
	w.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("reopened 0644 journal: %v, %v; want mode 0600", fi.Mode(), err)
	}
}

func TestOpenTakesOneOptions(t *testing.T) {
	if _, err := Open(tempJournal(t), Options{}, Options{}); err == nil {
		t.Error("Open accepted two Options")
	}
}

// AppendThen reports durability through its callback, and records queued
// together share an fsync just as AppendSync's do.
func TestAppendThen(t *testing.T) {
	path := tempJournal(t)
	// The sync hook records how much of the file each fsync made durable;
	// a callback must never run before its record is within it.
	var mu sync.Mutex
	durable := int64(0)
	opts := Options{}
	opts.hooks.sync = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if err := datasync(f); err != nil {
			return err
		}
		mu.Lock()
		durable = fi.Size()
		mu.Unlock()
		return nil
	}
	w := openT(t, path, opts)
	const n = 200
	errs := make(chan error, n)
	end := int64(0)
	for i := 0; i < n; i++ {
		rec := []byte(fmt.Sprintf(`{"i":%d}`, i))
		end += int64(len(rec)) + 1
		recEnd := end
		w.AppendThen(rec, func(err error) {
			mu.Lock()
			synced := durable
			mu.Unlock()
			if err == nil && synced < recEnd {
				err = fmt.Errorf("record %d reported durable with %d bytes synced, it ends at %d", i, synced, recEnd)
			}
			errs <- err
		})
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := w.Stats()
	if st.Records != n || st.Fsyncs >= n {
		t.Fatalf("stats %+v: want %d records sharing fewer fsyncs", st, n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.AppendThen([]byte(`{"late":1}`), func(err error) { errs <- err })
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Fatalf("AppendThen after Close: %v, want ErrClosed", err)
	}
	recs, _, err := ReadAll(path)
	if err != nil || len(recs) != n {
		t.Fatalf("%d records read back (%v), want %d", len(recs), err, n)
	}
}

// Create makes the journal appear with its first record or not at all, and
// never replaces one.
func TestCreate(t *testing.T) {
	path := tempJournal(t)
	w, err := Create(path, []byte(`{"type":"run"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append([]byte(`{"type":"log"}`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := readAllT(t, path); len(got) != 2 || got[0] != `{"type":"run"}` {
		t.Errorf("journal = %q", got)
	}
	if _, err := Create(path, []byte(`{"type":"run"}`)); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a journal = %v, want fs.ErrExist", err)
	}
	if got := readAllT(t, path); len(got) != 2 {
		t.Errorf("Create over a journal changed it: %q", got)
	}
	if _, err := os.Stat(path + ".new"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Create left its side file: %v", err)
	}
	if _, err := Create(tempJournal(t), []byte(`not json`)); !errors.Is(err, ErrBadRecord) {
		t.Errorf("Create with a bad record = %v", err)
	}
}
