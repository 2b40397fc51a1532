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

// scratchPrefix names the scratch folders; scratchPID is the file in each that names the server's process.
const (
	scratchPrefix = "dynoxide-"
	scratchPID    = "pid"
)

// scratchParent is where scratch folders go: /dev/shm (memory, like Dynoxide's own in-memory mode) where the system
// has one, else the temporary directory.
func scratchParent() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// scratchDir makes the folder of the database of a server started without a DBPath, so that the database can be
// indexed. Close removes it; a server that never got to Close (a test binary that shares its server until it exits,
// a killed stack) leaves its folder, which the next scratchDir removes once that server's process is gone.
func scratchDir() (string, error) {
	parent := scratchParent()
	if old, err := filepath.Glob(filepath.Join(parent, scratchPrefix+"*")); err == nil {
		for _, dir := range old {
			b, err := os.ReadFile(filepath.Join(dir, scratchPID))
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && !processAlive(pid) {
				_ = os.RemoveAll(dir)
			}
		}
	}
	return os.MkdirTemp(parent, scratchPrefix)
}

// markScratch writes the server's process id into its scratch folder.
func markScratch(dir string, pid int) {
	_ = os.WriteFile(filepath.Join(dir, scratchPID), []byte(strconv.Itoa(pid)), 0o600)
}
