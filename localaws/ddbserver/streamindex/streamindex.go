// Package streamindex gives a running Dynoxide's SQLite database the indexes its stream queries lack, so that a
// write to a table with a stream, and a read of the stream, take the same time however long the stack has run.
//
// Dynoxide 1.2.1 numbers each stream record with
// `SELECT COALESCE(MAX(CAST(sequence_number AS INTEGER)), 0) + 1 FROM _stream_records WHERE table_name = ?`, reads a
// shard with `… WHERE table_name = ? AND shard_id = ? AND CAST(sequence_number AS INTEGER) > ? ORDER BY
// CAST(sequence_number AS INTEGER)` and describes a shard with `SELECT MIN(sequence_number), MAX(sequence_number)
// … WHERE table_name = ? AND shard_id = ?`; it never trims a stream. Without an index each of these reads every
// record the stream has ever held: a write cost 7.8 ms instead of 1.2 ms with 45,000 records in the stream
// (docs/dynamodb.md, "Streams"). The indexes change no answer, only how SQLite finds it.
//
// It is a package of its own so that only the programs that run a server for hours (cmd/local, cmd/bench) link
// SQLite (modernc.org/sqlite, pure Go, a minute of compiling on a cold cache): they pass Apply as
// ddbserver.Options.IndexStreams.
package streamindex

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite", pure Go
)

// Indexes are the statements Apply runs: one for numbering records, one for reading a shard in order, one for a
// shard's first and last sequence numbers (DescribeStream; SQLite still reads the shard's index entries for the
// two of them in one query, but not the records themselves, 3.5 times faster).
var Indexes = []string{
	`CREATE INDEX IF NOT EXISTS localaws_stream_seq ON _stream_records (table_name, CAST(sequence_number AS INTEGER))`,
	`CREATE INDEX IF NOT EXISTS localaws_stream_shard_seq ON _stream_records (table_name, shard_id, CAST(sequence_number AS INTEGER))`,
	`CREATE INDEX IF NOT EXISTS localaws_stream_shard_text_seq ON _stream_records (table_name, shard_id, sequence_number)`,
}

// Apply adds Indexes to the Dynoxide database at path, which the running server has opened (SQLite lets a second
// connection change the schema; the server's next statement sees it). A database without Dynoxide's stream table
// (another version's schema) is left alone.
func Apply(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("streamindex: open %s: %w", path, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_stream_records'`).Scan(&n); err != nil {
		return fmt.Errorf("streamindex: read the schema of %s: %w", path, err)
	}
	if n == 0 {
		return nil
	}
	for _, stmt := range Indexes {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("streamindex: index the streams of %s: %w", path, err)
		}
	}
	return nil
}
