package saminvoke

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTrimCache: the build cache loses the folders unused for cacheUnused and keeps the others, and looks again only
// after trimInterval.
func TestTrimCache(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	folder := func(name string, age time.Duration) string {
		t.Helper()
		dir := filepath.Join(cache, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	exists := func(dir string) bool { _, err := os.Stat(dir); return err == nil }

	old := folder("old", cacheUnused+time.Hour)
	recent := folder("recent", cacheUnused-time.Hour)
	if n, err := trimCache(cache, now); err != nil || n != 1 {
		t.Fatalf("first trim: removed %d, %v; want 1", n, err)
	}
	if exists(old) || !exists(recent) {
		t.Errorf("after the trim: %s there %v (want false), %s there %v (want true)", old, exists(old), recent, exists(recent))
	}

	// Within trimInterval of the last look, nothing is removed, however old.
	older := folder("older", 2*cacheUnused)
	if n, err := trimCache(cache, now.Add(trimInterval-time.Minute)); err != nil || n != 0 || !exists(older) {
		t.Errorf("trim within the interval: removed %d, %v, %s there %v; want nothing removed", n, err, older, exists(older))
	}
	// After it, the cache is looked at again: recent has aged past cacheUnused by then too.
	if n, err := trimCache(cache, now.Add(trimInterval+time.Minute)); err != nil || n != 2 || exists(older) || exists(recent) {
		t.Errorf("trim after the interval: removed %d, %v; want 2 (older and recent)", n, err)
	}
	if !exists(filepath.Join(cache, trimStamp)) {
		t.Errorf("no %s file: the next invoke would look again at once", trimStamp)
	}
}
