package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ListSummaries returns the summary of every run of the project, newest
// first. It decodes only the leading "summary" object of each snapshot,
// never the result or detail, so its cost does not grow with run size.
//
// A run is listed even when neither its snapshot nor its backup can be read,
// or when it has only a journal: then only RunID and Error are set (Status
// is empty) and ReadSnapshot reports ErrSnapshotCorrupt for it, the cue to
// rebuild it from the journal. The error is for the listing as a whole.
func (s *Store) ListSummaries() ([]Summary, error) {
	entries, err := os.ReadDir(s.runsDir)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if id, ok := runOfFile(e.Name()); ok && ValidRunID(id) == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)

	summaries := make([]Summary, 0, len(ids))
	br := bufio.NewReaderSize(nil, 4<<10) // reused: one file at a time
	var from string
	read := func(path, runID string) (Summary, error) { from = path; return readSummary(br, path, runID) }
	for _, id := range ids {
		paths, _ := s.runPaths(id)
		sum, err := readEither(paths, id, read)
		sum.Stale = err == nil && from == paths.Backup
		if errors.Is(err, ErrNotFound) {
			continue // deleted since ReadDir
		}
		if errors.Is(err, errNotOurs) && !exists(paths.Journal) {
			if run, nerr := s.ReadNodeRun(id); nerr == nil {
				sum, err = s.NodeSummary(run), nil
			}
		}
		if err != nil {
			sum = Summary{RunID: id, Error: err.Error()}
		}
		summaries = append(summaries, sum)
	}
	slices.SortFunc(summaries, func(a, b Summary) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.RunID, a.RunID)
	})
	return summaries, nil
}

// ReadSummary reads only the summary at the start of a run's snapshot (or
// its backup's), not the rest of the file: what a caller that needs the
// run's status, not its view, pays for a run of 10,000 calls is a few
// kilobytes, not the whole snapshot.
func (s *Store) ReadSummary(runID string) (Summary, error) {
	paths, err := s.runPaths(runID)
	if err != nil {
		return Summary{}, err
	}
	br := bufio.NewReaderSize(nil, 4<<10)
	return readEither(paths, runID, func(path, runID string) (Summary, error) { return readSummary(br, path, runID) })
}

// runOfFile returns the run a file in the runs directory belongs to, for
// the files that make a run show up in a listing.
func runOfFile(name string) (string, bool) {
	for _, suffix := range []string{".json.bak", ".jsonl", ".json"} {
		if id, ok := strings.CutSuffix(name, suffix); ok {
			return id, true
		}
	}
	return "", false
}

// readSummary decodes the summary at the start of the snapshot at path and
// stops there: the decoder reads a few kilobytes whatever the file's size.
func readSummary(br *bufio.Reader, path, runID string) (Summary, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	br.Reset(f)
	dec := json.NewDecoder(br)

	var sum Summary
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Summary{}, badSummary(path, err)
	}
	if tok, err := dec.Token(); err != nil || tok != "summary" {
		if err == nil {
			err = errNotOurs
		}
		return Summary{}, badSummary(path, err)
	}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return Summary{}, badSummary(path, err)
	}
	// The checksum follows the summary; a snapshot from before checksums
	// has the next field there instead, or nothing.
	if tok, err := dec.Token(); err == nil && tok == "summaryCrc" {
		var crc string
		if err := dec.Decode(&crc); err != nil || crc != summaryCRC(raw) {
			return Summary{}, fmt.Errorf("%s: %w", filepath.Base(path), errSummaryCRC)
		}
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		return Summary{}, badSummary(path, err)
	}
	if sum.RunID != runID {
		return Summary{}, fmt.Errorf("%s: summary names run %q", filepath.Base(path), sum.RunID)
	}
	return sum, nil
}

// errNotOurs is a run file that does not start with our summary: the Node
// runtime's, or damaged.
var errNotOurs = errors.New(`does not start with a "summary" object`)

func badSummary(path string, err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = errors.New(`does not start with a "summary" object`)
	}
	return fmt.Errorf("%s: %w", filepath.Base(path), err)
}
