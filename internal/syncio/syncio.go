// Package syncio has io helpers safe for concurrent use.
package syncio

import (
	"io"
	"sync"
)

// Writer serialises Writes to an underlying writer, so that writers that each write a whole line per Write (a
// logger, a metrics emitter, a process output copier) never interleave within a line. An *os.File already does
// this; a buffer does not.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p to the underlying writer while no other Write runs.
func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
