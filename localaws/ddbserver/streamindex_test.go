package ddbserver

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dynoxideQueries are Dynoxide 1.2.1's two stream queries, as it sends them to SQLite.
var dynoxideQueries = []string{
	`SELECT COALESCE(MAX(CAST(sequence_number AS INTEGER)), 0) + 1 FROM _stream_records WHERE table_name = 'ttt'`,
	`SELECT event_name FROM _stream_records WHERE table_name = 'ttt' AND shard_id = 's' AND CAST(sequence_number AS INTEGER) > 5 ORDER BY CAST(sequence_number AS INTEGER) ASC LIMIT 100`,
}

// TestServerIndexesItsStreams: a server started without a DBPath keeps its database in a scratch folder, whose
// stream table has the indexes, which SQLite's plan for each of Dynoxide's stream queries uses (a search, not a
// scan of every record); Close removes the folder.
func TestServerIndexesItsStreams(t *testing.T) {
	srv, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if srv.scratch == "" {
		t.Fatal("no scratch folder for a server without DBPath")
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(srv.scratch, "dynamodb.sqlite")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
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
	db.Close()
	dir := srv.scratch
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("scratch folder %s after Close: %v, want it gone", dir, err)
	}
}

// TestScratchDirSweepsDeadServers: a scratch folder left by a server whose process is gone is removed by the next
// one; one whose process still runs (this test's own) is kept.
func TestScratchDirSweepsDeadServers(t *testing.T) {
	parent := scratchParent()
	dead, err := os.MkdirTemp(parent, scratchPrefix)
	if err != nil {
		t.Fatal(err)
	}
	live, err := os.MkdirTemp(parent, scratchPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(live) })
	markScratch(dead, 1<<22+12345) // above Linux's default pid_max
	markScratch(live, os.Getpid())
	fresh, err := scratchDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(fresh) })
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead server's folder %s is still there", dead)
	}
	if b, err := os.ReadFile(filepath.Join(live, scratchPID)); err != nil || string(b) != strconv.Itoa(os.Getpid()) {
		t.Errorf("the live server's folder was removed: %v", err)
	}
}
