package ddbserver

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite", pure Go
)

// streamIndexes make Dynoxide's stream queries take a constant time. Dynoxide 1.2.1 numbers each stream record
// with `SELECT COALESCE(MAX(CAST(sequence_number AS INTEGER)), 0) + 1 FROM _stream_records WHERE table_name = ?`
// and reads a shard with `… WHERE table_name = ? AND shard_id = ? AND CAST(sequence_number AS INTEGER) > ? ORDER BY
// CAST(sequence_number AS INTEGER)`; without an index on that expression both read every record the stream has
// ever held (Dynoxide never trims a stream), so every write to a table with a stream got slower the longer the
// stack ran: 7.8 ms instead of 1.2 ms with 45,000 records in the stream (docs/dynamodb.md, "Streams"). The indexes
// change no answer, only how SQLite finds it.
var streamIndexes = []string{
	`CREATE INDEX IF NOT EXISTS localaws_stream_seq ON _stream_records (table_name, CAST(sequence_number AS INTEGER))`,
	`CREATE INDEX IF NOT EXISTS localaws_stream_shard_seq ON _stream_records (table_name, shard_id, CAST(sequence_number AS INTEGER))`,
}

// indexStreams adds streamIndexes to the Dynoxide database at path, which the running server has opened (SQLite
// lets a second connection change the schema; the server's next statement sees it). A database without Dynoxide's
// stream table (another version's schema) is left alone.
func indexStreams(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("ddbserver: open %s: %w", path, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_stream_records'`).Scan(&n); err != nil {
		return fmt.Errorf("ddbserver: read the schema of %s: %w", path, err)
	}
	if n == 0 {
		return nil
	}
	for _, stmt := range streamIndexes {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("ddbserver: index the streams of %s: %w", path, err)
		}
	}
	return nil
}

// scratchPrefix begins the name of every scratch folder: dynoxide-<pid of the process that made it>-<random>.
const scratchPrefix = "dynoxide-"

// scratchDir makes the folder of the database of a server started without a DBPath, so that the database can be
// indexed: under /dev/shm (memory, like Dynoxide's own in-memory mode) where the system has one, else in the
// temporary directory. Close removes it. A process that never got to Close (a test binary, whose shared server
// lives until it exits; a killed stack) leaves its folders, which the next scratchDir removes once that process is
// gone (sweepScratch). The folder's name carries the process id, so that nothing is written to mark it: go test
// caches a package's result only while the files its tests opened are unchanged, and a marker file that outlived
// the test would defeat that cache every run.
func scratchDir() (string, error) {
	parent := os.TempDir()
	if shmAvailable() {
		parent = "/dev/shm"
	}
	sweepScratch(parent)
	return os.MkdirTemp(parent, scratchPrefix+strconv.Itoa(os.Getpid())+"-")
}

// scratchOwner is the process id in a scratch folder's name, and false for another name.
func scratchOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, scratchPrefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	n, err := strconv.Atoi(pid)
	return n, ok && err == nil && n > 0
}
