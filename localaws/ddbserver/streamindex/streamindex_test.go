package streamindex_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/ddbserver/streamindex"
)

// dynoxideQueries are Dynoxide 1.2.1's stream queries as it sends them to SQLite: numbering a record, reading a
// shard, describing a shard.
var dynoxideQueries = []string{
	`SELECT COALESCE(MAX(CAST(sequence_number AS INTEGER)), 0) + 1 FROM _stream_records WHERE table_name = 'ttt'`,
	`SELECT event_name FROM _stream_records WHERE table_name = 'ttt' AND shard_id = 's' AND CAST(sequence_number AS INTEGER) > 5 ORDER BY CAST(sequence_number AS INTEGER) ASC LIMIT 100`,
	`SELECT MIN(sequence_number), MAX(sequence_number) FROM _stream_records WHERE table_name = 'ttt' AND shard_id = 's'`,
}

// TestServerIndexesItsStreams: a server started with Apply and without a DBPath keeps its database in a scratch
// file, whose stream table has the indexes, which SQLite's plan for each of Dynoxide's stream queries uses (a
// search, not a scan of every record).
func TestServerIndexesItsStreams(t *testing.T) {
	var path string
	srv, err := ddbserver.Start(context.Background(), ddbserver.Options{IndexStreams: func(ctx context.Context, p string) error {
		path = p
		return streamindex.Apply(ctx, p)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the server's database %q: %v", path, err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range dynoxideQueries {
		rows, err := db.Query("EXPLAIN QUERY PLAN " + q)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if p := strings.Join(plan, "; "); !strings.Contains(p, "SEARCH _stream_records USING") || !strings.Contains(p, "INDEX localaws_stream") || strings.Contains(p, "SCAN _stream_records") {
			t.Errorf("plan of %s: %s; want a search of a localaws_stream index", q, p)
		}
	}
}

// TestApplyLeavesOtherSchemasAlone: a database without Dynoxide's stream table gets no index and no error.
func TestApplyLeavesOtherSchemasAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.sqlite")
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE items (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if err := streamindex.Apply(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'localaws_%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d localaws indexes in a database without a stream table, want 0", n)
	}
}
