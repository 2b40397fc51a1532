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

// TestScratchDirSweepsDeadServers: a scratch folder left by a process that is gone is removed by the next
// scratchDir; one whose process still runs (this test's own) is kept, and so is a folder of another name.
func TestScratchDirSweepsDeadServers(t *testing.T) {
	parent := os.TempDir()
	if shmAvailable() {
		parent = "/dev/shm"
	}
	dead, err := os.MkdirTemp(parent, scratchPrefix+strconv.Itoa(1<<22+12345)+"-") // above Linux's default pid_max
	if err != nil {
		t.Fatal(err)
	}
	live, err := os.MkdirTemp(parent, scratchPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.MkdirTemp(parent, scratchPrefix+"x-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(live); _ = os.RemoveAll(other); _ = os.RemoveAll(dead) })
	fresh, err := scratchDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(fresh) })
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead process's folder %s is still there", dead)
	}
	for _, kept := range []string{live, other, fresh} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s: %v, want it kept", kept, err)
		}
	}
	if pid, ok := scratchOwner(filepath.Base(fresh)); !ok || pid != os.Getpid() {
		t.Errorf("the new folder %s names process %d, %v; want this one", fresh, pid, ok)
	}
}
