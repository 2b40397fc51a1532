package sfnlocal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// FileStore is a Store that keeps one JSON file per state machine and per execution under a directory
// (statemachines/ and executions/), written atomically (temporary file, then rename).
type FileStore struct {
	dir string
	mu  sync.Mutex
}

// NewFileStore returns a FileStore rooted at dir, creating the directories it needs.
func NewFileStore(dir string) (*FileStore, error) {
	for _, sub := range []string{"statemachines", "executions"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("create store directory: %w", err)
		}
	}
	return &FileStore{dir: dir}, nil
}

// fileName derives a safe file name from an ARN.
func fileName(arn string) string {
	sum := sha256.Sum256([]byte(arn))
	return hex.EncodeToString(sum[:16]) + ".json"
}

func (s *FileStore) write(sub, arn string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", arn, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.dir, sub, fileName(arn))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", arn, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", arn, err)
	}
	return nil
}

// SaveStateMachine writes sm.
func (s *FileStore) SaveStateMachine(_ context.Context, sm StateMachine) error {
	return s.write("statemachines", sm.Arn, sm)
}

// SaveExecution writes rec, history included.
func (s *FileStore) SaveExecution(_ context.Context, rec *ExecutionRecord) error {
	return s.write("executions", rec.Arn, rec)
}

// Load reads every stored state machine and execution.
func (s *FileStore) Load(_ context.Context) ([]StateMachine, []*ExecutionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	var recs []*ExecutionRecord
	if err := readAll(filepath.Join(s.dir, "executions"), func(b []byte) error {
		var r ExecutionRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		recs = append(recs, &r)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return sms, recs, nil
}

func readAll(dir string, fn func([]byte) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("read %s: %w", e.Name(), err)
		}
		if err := fn(b); err != nil {
			return fmt.Errorf("decode %s: %w", e.Name(), err)
		}
	}
	return nil
}
