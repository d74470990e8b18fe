package journal

import (
	"bytes"
	"encoding/json"
	"hash/crc32"
)

// Every record the Writer appends is sealed with a CRC-32C of its bytes,
// carried as the last field of the record itself,
//
//	{"seq":7,"type":"call.finished",...,"crc":"9a3c01fe"}
//
// so that the journal stays one readable JSON object per line, and any JSON
// reader sees one more field. The checksum covers the line as the caller
// gave it, that is with `,"crc":"…"` removed; a reader recomputes it and
// skips a line whose checksum does not match, reporting it as damaged.
//
// Journals written before checksums have none. A line without a seal is
// accepted when it is valid JSON and no sealed line came before it; once a
// sealed line has been read, a line without a seal is damaged (its seal
// was what the damage hit). A single changed byte can therefore never make
// a line pass: it either breaks the checksum, or breaks the seal of a line
// whose content it left intact.

// crcTable is CRC-32C (Castagnoli), which x86 and arm64 compute in
// hardware: sealing costs nanoseconds per record.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	sealPrefix = `,"crc":"`
	// sealLen is the length of `,"crc":"xxxxxxxx"}`, the bytes a seal puts
	// in place of the record's closing brace.
	sealLen = len(sealPrefix) + 8 + len(`"}`)
)

// seal returns the bytes that replace the closing brace of a record whose
// CRC-32C is sum.
func seal(sum uint32) [sealLen]byte {
	var s [sealLen]byte
	n := copy(s[:], sealPrefix)
	const hex = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		s[n] = hex[sum>>shift&0xf]
		n++
	}
	s[n], s[n+1] = '"', '}'
	return s
}

// appendSealed appends rec, a JSON object, with its seal.
func appendSealed(dst, rec []byte) []byte {
	s := seal(crc32.Checksum(rec, crcTable))
	dst = append(dst, rec[:len(rec)-1]...)
	return append(dst, s[:]...)
}

// lineState is what checking one line found.
type lineState int

const (
	lineSealed   lineState = iota // its checksum matches
	lineUnsealed                  // no seal, but valid JSON: a journal from before checksums
	lineBroken                    // a seal that does not match, or not JSON at all
)

// checkLine checks one line (without its newline).
func checkLine(line []byte) lineState {
	sum, ok := sealOf(line)
	if !ok {
		if !looksSealed(line) && json.Valid(line) {
			return lineUnsealed
		}
		return lineBroken
	}
	body := line[:len(line)-sealLen]
	got := crc32.Update(crc32.Update(0, crcTable, body), crcTable, []byte{'}'})
	if got != sum {
		return lineBroken
	}
	return lineSealed
}

// sealOf parses the seal at the end of line.
func sealOf(line []byte) (uint32, bool) {
	n := len(line)
	if !looksSealed(line) || !bytes.Equal(line[n-sealLen:n-sealLen+len(sealPrefix)], []byte(sealPrefix)) {
		return 0, false
	}
	var sum uint32
	for _, c := range line[n-10 : n-2] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		sum = sum<<4 | uint32(d)
	}
	return sum, true
}

// cutShort reports whether a complete last line that fails its check is
// what a crash cut short, rather than a record damaged since it was
// written. A crash can leave a line's length on disk without all of its
// bytes (zeros in their place); a line that holds no zero byte and ends
// with its whole seal was written out whole, and a changed byte in it is
// damage: a bit flip in a completed run's end record is not a crash, and
// must not be moved aside as one. A line without a seal (a journal from
// before checksums) is cut short, as it always was.
func cutShort(line []byte) bool {
	return !looksSealed(line) || bytes.IndexByte(line, 0) >= 0
}

// looksSealed reports whether line ends like a sealed line, the key's name
// and the digits aside: `,"???":"????????"}`. A line that does, without a
// good seal, had its seal damaged; taking it for a line from before
// checksums would let a damaged field name through.
func looksSealed(line []byte) bool {
	n := len(line)
	if n < sealLen+1 || line[0] != '{' {
		return false
	}
	t := line[n-sealLen:]
	return t[0] == ',' && t[1] == '"' && t[5] == '"' && t[6] == ':' && t[7] == '"' && t[16] == '"' && t[17] == '}'
}
