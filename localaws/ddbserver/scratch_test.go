package ddbserver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

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

// TestScratchDatabaseOnlyToIndex: a server without a DBPath runs in Dynoxide's own memory, unless it has an
// IndexStreams, which is then given a database file in a scratch folder that Close removes.
func TestScratchDatabaseOnlyToIndex(t *testing.T) {
	plain, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.scratch != "" {
		t.Errorf("a server without IndexStreams has the scratch folder %s", plain.scratch)
	}
	_ = plain.Close()

	var given string
	srv, err := Start(context.Background(), Options{IndexStreams: func(_ context.Context, path string) error {
		given = path
		_, err := os.Stat(path)
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	if srv.scratch == "" || filepath.Dir(given) != srv.scratch {
		t.Fatalf("IndexStreams was given %q, want a file in the scratch folder %q", given, srv.scratch)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(srv.scratch); !os.IsNotExist(err) {
		t.Errorf("scratch folder %s after Close: %v, want it gone", srv.scratch, err)
	}
}
