package saminvoke

import (
	"context"
	"log/slog"
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

// TestTrimCacheStampFromTheFuture: a stamp dated after now (the clock was set back) does not stop the trim.
func TestTrimCacheStampFromTheFuture(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	stamp := filepath.Join(cache, trimStamp)
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(stamp, now.Add(48*time.Hour), now.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(cache, "old")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(old, now.Add(-2*cacheUnused), now.Add(-2*cacheUnused)); err != nil {
		t.Fatal(err)
	}
	if n, err := trimCache(cache, now); err != nil || n != 1 {
		t.Errorf("removed %d, %v; want the old folder removed despite the stamp from the future", n, err)
	}
}

// TestBuildMarksItsFolderUsed: an invoke of unchanged code, which go build leaves alone, still sets its cache
// folder's time to now, so that a function used every day is not trimmed and rebuilt every five.
func TestBuildMarksItsFolderUsed(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	logger := slog.New(slog.DiscardHandler)
	out, err := build(context.Background(), filepath.Join("testdata", "hello"), logger)
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Dir(out)
	long := time.Now().Add(-2 * cacheUnused)
	if err := os.Chtimes(folder, long, long); err != nil {
		t.Fatal(err)
	}
	if _, err := build(context.Background(), filepath.Join("testdata", "hello"), logger); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(folder)
	if err != nil {
		t.Fatal(err)
	}
	if age := time.Since(fi.ModTime()); age > time.Hour {
		t.Errorf("the folder's time is %v old after an invoke; want it set to now", age.Round(time.Second))
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the binary is gone: %v", err)
	}
}
