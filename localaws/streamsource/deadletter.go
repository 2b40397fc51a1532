package streamsource

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The conditions of a FailureRecord: why Lambda gave the batch up.
const (
	ConditionRetryAttemptsExhausted = "RetryAttemptsExhausted"
	ConditionRecordAgeExceeded      = "RecordAgeExceeded"
)

// FailureRecord is the invocation record Lambda sends a stream mapping's on-failure destination when it gives a
// batch up: metadata only, not the records ("Retaining discarded batches for a DynamoDB event source in Lambda",
// AWS Lambda developer guide).
type FailureRecord struct {
	RequestContext     RequestContext     `json:"requestContext"`
	ResponseContext    ResponseContext    `json:"responseContext"`
	Version            string             `json:"version"`
	Timestamp          string             `json:"timestamp"`
	DDBStreamBatchInfo DDBStreamBatchInfo `json:"DDBStreamBatchInfo"`
}

// RequestContext says which invocation failed and why the batch was given up.
type RequestContext struct {
	// RequestID is the last invocation's request id (locally a UUID of the mapping's own).
	RequestID   string `json:"requestId"`
	FunctionARN string `json:"functionArn"`
	// Condition is ConditionRetryAttemptsExhausted or ConditionRecordAgeExceeded.
	Condition string `json:"condition"`
	// ApproximateInvokeCount is how many times the records were sent to the function.
	ApproximateInvokeCount int `json:"approximateInvokeCount"`
}

// ResponseContext is the last invocation's outcome: status 200 when the function ran (FunctionError "Unhandled" when
// it failed, none when it answered with batchItemFailures), 429 when it was throttled, another status for another
// Lambda error, 0 when the records were never sent.
type ResponseContext struct {
	StatusCode      int    `json:"statusCode"`
	ExecutedVersion string `json:"executedVersion,omitempty"`
	FunctionError   string `json:"functionError,omitempty"`
}

// DDBStreamBatchInfo locates the given-up records in the stream, with AWS's shard id and sequence numbers.
type DDBStreamBatchInfo struct {
	ShardID                         string `json:"shardId"`
	StartSequenceNumber             string `json:"startSequenceNumber"`
	EndSequenceNumber               string `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int    `json:"batchSize"`
	StreamARN                       string `json:"streamArn"`
}

// Destination receives the FailureRecords of the batches a mapping gives up (its DestinationConfig.OnFailure).
type Destination interface {
	Send(ctx context.Context, r FailureRecord) error
}

// DeadLetterQueue stands in for the SQS queue of an on-failure destination, since the local stack serves no SQS:
// each FailureRecord is appended, as one line of JSON, to <data dir>/dead-letter/<name>.jsonl (DeadLetterPath),
// and synced, or kept in memory when there is no data folder. Records returns them; ReadDeadLetterFile reads the
// file from another process.
type DeadLetterQueue struct {
	name, path string

	mu      sync.Mutex
	records []FailureRecord
}

// DeadLetterPath is the file of the queue name in the data folder dataDir.
func DeadLetterPath(dataDir, name string) string {
	return filepath.Join(dataDir, "dead-letter", name+".jsonl")
}

// OpenDeadLetterQueue opens the queue name (the queue's logical id) in dataDir, with the records it already holds;
// an empty dataDir keeps its records in memory.
func OpenDeadLetterQueue(dataDir, name string) (*DeadLetterQueue, error) {
	if name == "" || filepath.Base(name) != name {
		return nil, fmt.Errorf("streamsource: dead-letter queue name %q", name)
	}
	q := &DeadLetterQueue{name: name}
	if dataDir == "" {
		return q, nil
	}
	q.path = DeadLetterPath(dataDir, name)
	if err := os.MkdirAll(filepath.Dir(q.path), 0o755); err != nil {
		return nil, fmt.Errorf("streamsource: dead-letter queue %s: %w", name, err)
	}
	if err := cutTornLine(q.path); err != nil {
		return nil, fmt.Errorf("streamsource: dead-letter queue %s: %w", name, err)
	}
	rs, err := ReadDeadLetterFile(q.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	q.records = rs
	return q, nil
}

// cutTornLine drops the end of a file after its last newline: a line a crash cut short, which the next append
// would otherwise continue.
func cutTornLine(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || len(b) == 0 || b[len(b)-1] == '\n' {
		return nil
	}
	if err != nil {
		return err
	}
	return os.Truncate(path, int64(bytes.LastIndexByte(b, '\n')+1))
}

// Name is the queue's name.
func (q *DeadLetterQueue) Name() string { return q.name }

// Path is the queue's file, "" in memory.
func (q *DeadLetterQueue) Path() string { return q.path }

// Send appends r to the queue (and its file, synced before Send returns).
func (q *DeadLetterQueue) Send(_ context.Context, r FailureRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.path != "" {
		f, err := os.OpenFile(q.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("streamsource: dead-letter queue %s: %w", q.name, err)
		}
		_, err = f.Write(append(b, '\n'))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("streamsource: dead-letter queue %s: %w", q.name, err)
		}
	}
	q.records = append(q.records, r)
	return nil
}

// Records returns the records the queue holds, oldest first (those of earlier runs too, with a file).
func (q *DeadLetterQueue) Records() []FailureRecord {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]FailureRecord(nil), q.records...)
}

// ReadDeadLetterFile reads the records of a queue's file (DeadLetterPath). A last line cut short by a crash is
// ignored.
func ReadDeadLetterFile(path string) ([]FailureRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []FailureRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r FailureRecord
		if err := json.Unmarshal(line, &r); err != nil {
			if !bytes.HasSuffix(b, []byte("\n")) && bytes.HasSuffix(b, line) {
				break // torn last line
			}
			return nil, fmt.Errorf("streamsource: %s:%d: %w", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
