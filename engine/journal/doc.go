// Package journal is an append-only, durable log of JSON lines.
//
// A dynworkflow run writes every finished agent call to its journal before
// the script sees the result, so that a run can resume after a crash without
// paying for that call again. The journal is the truth; everything else
// (snapshots, listings, the dashboard) is rebuilt from it.
//
// The package knows nothing about what a record means. A record is one JSON
// object on one line; the Writer seals it with a CRC-32C of its bytes (a
// last "crc" field, so the journal stays readable JSON lines) and adds the
// '\n'. Readers hand back records as they were appended, and skip and
// report every line whose checksum does not match (see checksum.go, which
// also says how journals written before checksums are read).
//
// A Writer commits records in batches from a single goroutine: every record
// queued while the previous batch was being written goes out in one write(2)
// and, if any of them asked for it, one fdatasync. Under load many callers of
// AppendSync therefore share one fsync (group commit), and the cost of a
// record is proportional to its own size, never to the size of the journal.
//
// A crash can leave a partial last line (a torn tail). Open and Scan move
// such a tail to a side file next to the journal and truncate the journal to
// its last complete record; a damaged line anywhere else stays where it is,
// and every scan skips it and reports it, so that the caller can say what
// was lost (a finished call the engine will run again rather than trust).
package journal
