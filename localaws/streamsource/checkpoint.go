package streamsource

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// checkpointFile is what a mapping keeps in its checkpoint file: for the stream it read (its ARN as the server
// names it, so that a checkpoint of a stream that was replaced is not used for the new one), the sequence number of
// the last record handled in each shard, as the server writes it.
type checkpointFile struct {
	StreamARN string            `json:"streamArn"`
	Shards    map[string]string `json:"shards"`
}

// checkpoints are a mapping's positions, kept in a file when it has one.
type checkpoints struct {
	path string // "" keeps them in memory

	mu      sync.Mutex
	file    checkpointFile
	dirty   bool      // file holds positions not written yet (advance)
	written time.Time // when the file was last written
}

// lazyWrite is how long a position that only skips filtered-out records may stay unwritten: losing it in a crash
// costs reading those records again and filtering them out again, nothing more.
const lazyWrite = time.Second

// loadCheckpoints reads the checkpoints of stream from path ("" for none). A file of another stream is ignored: its
// positions mean nothing in this one. stale reports that.
func loadCheckpoints(path, stream string) (c *checkpoints, stale string, err error) {
	c = &checkpoints{path: path, file: checkpointFile{StreamARN: stream, Shards: map[string]string{}}}
	if path == "" {
		return c, "", nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("streamsource: checkpoint: %w", err)
	}
	var f checkpointFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, "", fmt.Errorf("streamsource: checkpoint %s: %w (delete it to start again at the starting position)", path, err)
	}
	if f.StreamARN != stream {
		return c, f.StreamARN, nil
	}
	if f.Shards != nil {
		c.file.Shards = f.Shards
	}
	return c, "", nil
}

// get is the last sequence number handled in shard, "" for none.
func (c *checkpoints) get(shard string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.file.Shards[shard]
}

// set records seq as the last handled in shard and, with a file, writes it: to a temporary file, synced, then
// renamed over the old one, so that a crash leaves either the old checkpoint or the new one.
func (c *checkpoints) set(shard, seq string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.file.Shards[shard] = seq
	return c.write()
}

// advance records seq as the last handled in shard, past records that were only filtered out, and writes the file
// at most every lazyWrite: a stream of records that all miss the filters costs a write a second, not one a poll.
func (c *checkpoints) advance(shard, seq string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.file.Shards[shard] = seq
	c.dirty = true
	if time.Since(c.written) < lazyWrite {
		return nil
	}
	return c.write()
}

// flush writes the positions advance kept.
func (c *checkpoints) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	return c.write()
}

func (c *checkpoints) write() error {
	if c.path == "" {
		return nil
	}
	b, err := json.Marshal(c.file)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(c.path, b); err != nil {
		return err
	}
	c.dirty, c.written = false, time.Now()
	return nil
}

// writeFileAtomic replaces path with b: a temporary file in the same folder, synced, renamed, and the folder synced.
func writeFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; left by a failure otherwise
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
