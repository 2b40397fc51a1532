package syncio

import (
	"bytes"
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
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
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
