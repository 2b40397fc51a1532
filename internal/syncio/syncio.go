// Package syncio has io helpers safe for concurrent use.
package syncio

import (
	"bytes"
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

// Buffer collects what any number of writers write, for reading while they write (a test's logs, metrics lines).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p while no other call runs.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// Bytes returns a copy of everything written.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// String returns everything written.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Take returns everything written and empties the buffer.
func (b *Buffer) Take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.b.String()
	b.b.Reset()
	return s
}
