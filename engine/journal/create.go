package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// WriteNew makes a new journal at path holding records, in order, without
// opening it: the journal appears whole or not at all, as with Create, so
// a process killed while it copies a journal (a fork) leaves none. It fails
// with an error matching fs.ErrExist if path exists.
func WriteNew(path string, records [][]byte) error {
	if len(records) == 0 {
		return errors.New("a journal needs at least one record")
	}
	var data []byte
	for _, rec := range records {
		if err := checkRecord(rec); err != nil {
			return err
		}
		data = append(appendSealed(data, rec), '\n')
	}
	tmp := path + ".new"
	err := writeNew(tmp, data)
	if err == nil {
		err = os.Link(tmp, path)
	}
	if rerr := os.Remove(tmp); err == nil && rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = rerr
	}
	if err == nil {
		err = fsx.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("creating journal %s: %w", path, err)
	}
	return nil
}
