package sfnengine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// FileStore is a Store in a directory: one JSON file per state machine under statemachines/ (rewritten atomically:
// temporary file, then rename) and one execution log per execution under executions/ (see execlog.go: JSON lines
// that a save appends to, so a checkpoint writes only the events that are new). Like the one-file format before it,
// it does not fsync: a killed process loses nothing the kernel has, a crashed machine may lose the last saves.
// Load also reads that older format (executions/<hash>.json, the whole record rewritten at each save) and converts
// each such file to a log.
type FileStore struct {
	dir     string
	written atomic.Int64 // bytes written to files, for tests

	mu sync.Mutex
	// stale holds, for running executions whose log goes on past its last commit, the length to cut it back to
	// before the next append.
	stale map[string]int64
}

// NewFileStore returns a FileStore rooted at dir, creating the directories it needs.
func NewFileStore(dir string) (*FileStore, error) {
	for _, sub := range []string{"statemachines", "executions"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("create store directory: %w", err)
		}
	}
	return &FileStore{dir: dir, stale: map[string]int64{}}, nil
}

// fileKey derives a safe file name, without extension, from an ARN.
func fileKey(arn string) string {
	sum := sha256.Sum256([]byte(arn))
	return hex.EncodeToString(sum[:16])
}

const (
	logExt    = ".jsonl" // an execution log
	recordExt = ".json"  // a state machine; an execution in the older format
)

func (s *FileStore) logPath(arn string) string {
	return filepath.Join(s.dir, "executions", fileKey(arn)+logExt)
}

// SaveStateMachine writes sm.
func (s *FileStore) SaveStateMachine(_ context.Context, sm StateMachine) error {
	b, err := json.Marshal(sm)
	if err != nil {
		return fmt.Errorf("encode %s: %w", sm.Arn, err)
	}
	return s.replace(filepath.Join(s.dir, "statemachines", fileKey(sm.Arn)+recordExt), b)
}

// DeleteStateMachine removes the state machine's file (its versions and aliases with it); one that is not there
// is not an error.
func (s *FileStore) DeleteStateMachine(_ context.Context, arn string) error {
	err := os.Remove(filepath.Join(s.dir, "statemachines", fileKey(arn)+recordExt))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", arn, err)
	}
	return nil
}

// replace writes a whole file atomically: a temporary file, then a rename.
func (s *FileStore) replace(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	s.written.Add(int64(len(b)))
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// SaveExecution appends to the execution's log, in one write, the header when the log is new, events, and a commit
// line with rec's status, checkpoint and result. A failed write is cut off again, so the log ends with a whole save.
func (s *FileStore) SaveExecution(_ context.Context, rec *ExecutionRecord, events []byte) error {
	f, err := os.OpenFile(s.logPath(rec.Arn), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("save %s: %w", rec.Arn, err)
	}
	defer f.Close()
	s.mu.Lock()
	cut, isStale := s.stale[rec.Arn]
	delete(s.stale, rec.Arn)
	s.mu.Unlock()
	if isStale {
		if err := f.Truncate(cut); err != nil {
			return fmt.Errorf("save %s: %w", rec.Arn, err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("save %s: %w", rec.Arn, err)
	}
	size := fi.Size()
	buf := make([]byte, 0, len(events)+512)
	if size == 0 {
		if buf, err = appendHeader(buf, rec); err != nil {
			return fmt.Errorf("encode %s: %w", rec.Arn, err)
		}
	}
	buf = append(buf, events...)
	if buf, err = appendCommit(buf, rec); err != nil {
		return fmt.Errorf("encode %s: %w", rec.Arn, err)
	}
	n, err := f.Write(buf)
	s.written.Add(int64(n))
	if err != nil {
		_ = f.Truncate(size)
		return fmt.Errorf("save %s: %w", rec.Arn, err)
	}
	return nil
}

// Execution reads the execution's log.
func (s *FileStore) Execution(_ context.Context, arn string) (*ExecutionRecord, error) {
	data, err := os.ReadFile(s.logPath(arn))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrExecutionDoesNotExist, arn)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", arn, err)
	}
	rec, _, err := readLog(data, true)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", arn, err)
	}
	return rec, nil
}

// DeleteExecution removes the execution's log.
func (s *FileStore) DeleteExecution(_ context.Context, arn string) error {
	s.mu.Lock()
	delete(s.stale, arn)
	s.mu.Unlock()
	err := os.Remove(s.logPath(arn))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrExecutionDoesNotExist, arn)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", arn, err)
	}
	return nil
}

// Load reads every stored state machine and execution, converting executions of the older format to logs first.
// A log without a complete header (the process died as it was created) is skipped.
func (s *FileStore) Load(_ context.Context) ([]StateMachine, []*ExecutionRecord, error) {
	var sms []StateMachine
	if err := readAll(filepath.Join(s.dir, "statemachines"), func(b []byte) error {
		var sm StateMachine
		if err := json.Unmarshal(b, &sm); err != nil {
			return err
		}
		sms = append(sms, sm)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(s.dir, "executions")
	if err := s.convertRecords(dir); err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var recs []*ExecutionRecord
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != logExt {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", e.Name(), err)
		}
		rec, committed, err := readLog(data, false)
		if errors.Is(err, errNoHeader) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", e.Name(), err)
		}
		if rec.Status == StatusRunning {
			if rec, committed, err = readLog(data, true); err != nil {
				return nil, nil, fmt.Errorf("read %s: %w", e.Name(), err)
			}
		}
		if committed < len(data) {
			s.mu.Lock()
			s.stale[rec.Arn] = int64(committed)
			s.mu.Unlock()
		}
		recs = append(recs, rec)
	}
	return sms, recs, nil
}

// convertRecords turns each execution file of the older format (one JSON record, history included) into a log,
// then removes it. A record whose log already exists is the leftover of a conversion that was interrupted.
func (s *FileStore) convertRecords(dir string) error {
	return readAllNamed(dir, func(name string, b []byte) error {
		old := filepath.Join(dir, name)
		logFile := strings.TrimSuffix(old, recordExt) + logExt
		if _, err := os.Stat(logFile); err == nil {
			return os.Remove(old)
		}
		var rec ExecutionRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return err
		}
		data, err := encodeLog(&rec)
		if err != nil {
			return err
		}
		if err := s.replace(logFile, data); err != nil {
			return err
		}
		return os.Remove(old)
	})
}

func readAll(dir string, fn func([]byte) error) error {
	return readAllNamed(dir, func(_ string, b []byte) error { return fn(b) })
}

// readAllNamed calls fn with the name and content of every .json file in dir.
func readAllNamed(dir string, fn func(string, []byte) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != recordExt {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("read %s: %w", e.Name(), err)
		}
		if err := fn(e.Name(), b); err != nil {
			return fmt.Errorf("decode %s: %w", e.Name(), err)
		}
	}
	return nil
}
