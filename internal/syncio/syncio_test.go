package syncio

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
)

// TestWritesDoNotInterleave: lines written concurrently come out whole. bytes.Buffer is not safe for concurrent
// use, so without the lock the race detector (make test) or a torn line fails this.
func TestWritesDoNotInterleave(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	line := strings.Repeat("x", 200) + "\n"
	writeConcurrently(t, w, line, 8, 100, nil)
	lines := strings.SplitAfter(buf.String(), "\n")
	if len(lines) != 801 || lines[800] != "" {
		t.Fatalf("%d lines, want 800", len(lines)-1)
	}
	for i, l := range lines[:800] {
		if l != line {
			t.Fatalf("line %d torn: %q", i, l)
		}
	}
}

// TestBufferCollectsConcurrentWrites: a Buffer read while writers write holds whole lines; Take empties it.
func TestBufferCollectsConcurrentWrites(t *testing.T) {
	var b Buffer
	writeConcurrently(t, &b, "line\n", 4, 50, func() { _ = b.String() })
	if got := string(b.Bytes()); got != strings.Repeat("line\n", 200) {
		t.Fatalf("Bytes = %q", got)
	}
	if got := b.Take(); got != strings.Repeat("line\n", 200) {
		t.Fatalf("Take = %q", got)
	}
	if got := b.String(); got != "" {
		t.Fatalf("after Take: %q", got)
	}
}

// writeConcurrently writes line each times to w from each of writers goroutines, calling also (when not nil) after
// each write, and returns when all are done.
func writeConcurrently(t *testing.T, w io.Writer, line string, writers, each int, also func()) {
	t.Helper()
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
				}
				if also != nil {
					also()
				}
			}
		}()
	}
	wg.Wait()
}
