// Package streamsource emulates, for the local stack, a Lambda event source mapping on a DynamoDB stream: what a
// function's `Type: DynamoDB` event in a SAM template becomes on AWS. A Mapping polls the stream of a table (every
// shard, a child after its parent) and invokes the function synchronously with batches of its records, as Lambda
// does ("Using AWS Lambda with Amazon DynamoDB" and "Lambda event filtering", AWS Lambda developer guide):
//
//   - Records are delivered as Lambda delivers them (events.DynamoDBEvent in aws-lambda-go): eventID of 32 hex
//     digits, eventVersion 1.1, eventSource aws:dynamodb, awsRegion the stack's region, eventSourceARN the stream's
//     ARN in AWS's form (AWSStreamARN), SequenceNumber of at least 21 digits (AWSSequenceNumber), whatever the
//     DynamoDB server's own forms are (Dynoxide's region "dynoxide", labels in epoch seconds, sequence numbers 1,
//     2, …).
//   - FilterCriteria: a record that matches none of the filters (EventBridge's pattern syntax, package
//     eventpattern, against the record as delivered) is dropped and the position moves past it.
//   - Batches: up to BatchSize records that passed the filters, gathered for at most MaximumBatchingWindow (with no
//     window, what one poll returned). A shard is polled four times a second when it has nothing new. One batch of
//     a shard is in flight at a time (ParallelizationFactor 1), its records in order.
//   - Errors: a batch the function failed (a function error, a crash, a timeout) is retried whole until it
//     succeeds, its records are older than MaximumRecordAge or it was retried MaximumRetryAttempts times (-1: no
//     limit). With BisectBatchOnFunctionError a failed batch of more than one record is split in two and each half
//     retried, which does not count as a retry. An invocation Lambda itself refused (a throttle, a service error)
//     is retried, not counted, until the records are too old. With ReportBatchItemFailures the function's
//     {"batchItemFailures":[{"itemIdentifier":SEQ}]} checkpoints before the lowest SEQ and the rest is retried; an
//     empty or absent list is a success; an itemIdentifier that is empty or not in the batch fails the whole
//     batch. Retries wait 100 ms, doubling to 5 s.
//   - A batch given up is described to the on-failure destination (FailureRecord, AWS's invocation record: metadata,
//     not the records) and the mapping moves on. The local stack has no SQS: a DeadLetterQueue writes them to a file.
//   - The position of each shard (the last record handled: delivered, filtered out or given up) is checkpointed
//     after each batch, in a file when the mapping has a folder (written to a temporary file, synced, renamed), and
//     a mapping started again resumes after it; without one, it starts at StartingPosition. A position that only
//     skips filtered-out records is written within a second, or at Stop. Delivery is at least
//     once: a stop between an invocation and its checkpoint delivers the batch again, as on AWS.
//
// Where it differs from AWS: Dynoxide has one shard per stream and never splits it, and it never trims a stream
// (AWS keeps 24 hours), so with MaximumRecordAge -1 and no retry limit a batch that always fails is retried for ever
// rather than for a day. ParallelizationFactor, tumbling windows and the OnSuccess destination are not modelled.
// LATEST is the latest record when the mapping starts with no checkpoint, at every start, until a first record is
// handled (on AWS the mapping keeps its position from its creation). The requestId of a FailureRecord is a UUID of
// the mapping's own: the local Lambda host does not report its invocations' ids. ApproximateCreationDateTime has
// the server's precision (Dynoxide's: the second).
package streamsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// StreamsAPI is the part of the DynamoDB Streams client (*dynamodbstreams.Client) a mapping uses.
type StreamsAPI interface {
	ListStreams(ctx context.Context, in *dynamodbstreams.ListStreamsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.ListStreamsOutput, error)
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// Invoker invokes a function synchronously (RequestResponse) and returns its response: *lambdahost.Invoker. A
// function error is an *sfnengine.FunctionError; any other error (*sfnengine.ServiceError: a throttle, an unknown
// function) means Lambda did not run the function.
type Invoker interface {
	Invoke(ctx context.Context, function string, payload []byte) ([]byte, error)
}

// Starting positions.
const (
	TrimHorizon = "TRIM_HORIZON"
	Latest      = "LATEST"
)

// Defaults of Config.
const (
	DefaultBatchSize    = 100
	DefaultPollInterval = 250 * time.Millisecond // Lambda polls a shard four times a second
	DefaultRetryPause   = 100 * time.Millisecond
	DefaultMaxPause     = 5 * time.Second
)

// Config describes a mapping. Its zero values are Lambda's defaults except MaximumRetryAttempts, whose zero means no
// retry: give -1 for Lambda's default, no limit.
type Config struct {
	// Name names the mapping in logs and its checkpoint file (the local stack gives the function's logical id and
	// the event's name, OutcomeRelayFunctionSettled).
	Name string
	// Function is what the invoker is given; FunctionARN is its ARN, for FailureRecords.
	Function, FunctionARN string
	// StreamARN is the stream's ARN in AWS's form (AWSStreamARN), as the template resolves it: the mapping reads
	// the stream of that table whose label it has, and delivers records with this eventSourceARN.
	StreamARN string
	// Region is the records' awsRegion; empty takes StreamARN's.
	Region string
	// StartingPosition is TrimHorizon (the default) or Latest: where a shard is read from when it has no
	// checkpoint.
	StartingPosition string
	// BatchSize is the most records per invocation (default 100).
	BatchSize int
	// MaximumBatchingWindow is how long records are gathered for a full batch; zero delivers what a poll returned.
	MaximumBatchingWindow time.Duration
	// BisectBatchOnFunctionError splits a batch the function failed in two before retrying it.
	BisectBatchOnFunctionError bool
	// MaximumRetryAttempts is how many times a batch the function failed is retried; -1 for no limit.
	MaximumRetryAttempts int
	// MaximumRecordAge is the age beyond which records are given up rather than sent; zero or less for no limit.
	MaximumRecordAge time.Duration
	// ReportBatchItemFailures reads the function's batchItemFailures (FunctionResponseTypes).
	ReportBatchItemFailures bool
	// Filters are FilterCriteria's patterns, any of which a record must match; none lets every record through.
	Filters []*eventpattern.Pattern
	// OnFailure receives the batches given up; nil drops them (logged).
	OnFailure Destination
	// CheckpointDir keeps the checkpoint in CheckpointDir/<Name>.json; empty keeps it in memory.
	CheckpointDir string
	// Hold makes the mapping read and deliver nothing for as long as it runs, as if its poller lagged: records
	// wait in the stream (the local stack's --fault stream:hold).
	Hold bool

	Streams StreamsAPI
	Invoker Invoker
	// Logger gets a line per batch at Debug, retries at Warn, given-up batches at Error; nil logs nothing.
	Logger *slog.Logger
	// NewID makes FailureRecords' request ids (default sfnengine.NewUUID).
	NewID func() string
	// PollInterval is the pause after a poll of a shard that did not return a full page (default
	// DefaultPollInterval);
	// RetryPause and MaxRetryPause bound the pauses before retries (default 100 ms, 5 s).
	PollInterval, RetryPause, MaxRetryPause time.Duration
}

// Stats are a mapping's counters since it started.
type Stats struct {
	// RecordsRead were read from the stream; RecordsFiltered of them matched no filter and were dropped.
	RecordsRead, RecordsFiltered int64
	// RecordsDelivered were in invocations that succeeded (the records before the first failure of a partial
	// success included).
	RecordsDelivered int64
	// Invocations of the function, retries included; BatchesRetried counts the failures after which the batch,
	// the rest of it (batchItemFailures) or its halves (BisectBatchOnFunctionError) were sent again.
	Invocations, BatchesRetried int64
	// BatchesDiscarded were given up (sent to the on-failure destination, if any), with RecordsDiscarded records.
	BatchesDiscarded, RecordsDiscarded int64
	// IteratorAge is how old the oldest record read and not yet handled is (now minus its
	// ApproximateCreationDateTime), zero when every record read was handled.
	IteratorAge time.Duration
	// Held is set under Config.Hold.
	Held bool
}

// Mapping is a running event source mapping. New makes one, Start starts it, Stop stops it.
type Mapping struct {
	cfg          Config
	logger       *slog.Logger
	source       streamARN // cfg.StreamARN, taken apart
	serverStream string    // the stream's ARN as the server names it
	ckpt         *checkpoints

	stop         chan struct{} // closed by Stop
	stopOnce     sync.Once
	invokeCtx    context.Context // ends when Stop gives up waiting for the batch in flight
	cancelInvoke context.CancelFunc
	wg           sync.WaitGroup
	started      atomic.Bool

	read, filtered, delivered, invocations, retried, discardedBatches, discardedRecords atomic.Int64

	mu     sync.Mutex
	oldest map[string]time.Time // per shard, the creation time of its oldest record read and not handled
}

// New checks cfg and returns the mapping it describes, not started.
func New(cfg Config) (*Mapping, error) {
	if cfg.Name == "" || filepath.Base(cfg.Name) != cfg.Name {
		return nil, fmt.Errorf("streamsource: mapping name %q", cfg.Name)
	}
	if cfg.Function == "" || cfg.Streams == nil || cfg.Invoker == nil {
		return nil, errors.New("streamsource: a mapping needs a function, a streams client and an invoker")
	}
	src, err := parseStreamARN(cfg.StreamARN)
	if err != nil {
		return nil, err
	}
	switch cfg.StartingPosition {
	case "":
		cfg.StartingPosition = TrimHorizon
	case TrimHorizon, Latest:
	default:
		return nil, fmt.Errorf("streamsource: starting position %q: want %s or %s", cfg.StartingPosition, TrimHorizon, Latest)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.BatchSize < 0 || cfg.MaximumRetryAttempts < -1 || cfg.MaximumBatchingWindow < 0 {
		return nil, fmt.Errorf("streamsource: batch size %d, retry attempts %d, batching window %s", cfg.BatchSize,
			cfg.MaximumRetryAttempts, cfg.MaximumBatchingWindow)
	}
	if cfg.Region == "" {
		cfg.Region = src.region
	}
	if cfg.NewID == nil {
		cfg.NewID = sfnengine.NewUUID
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RetryPause <= 0 {
		cfg.RetryPause = DefaultRetryPause
	}
	if cfg.MaxRetryPause < cfg.RetryPause {
		cfg.MaxRetryPause = max(DefaultMaxPause, cfg.RetryPause)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &Mapping{cfg: cfg, source: src, logger: logger.With("mapping", cfg.Name), stop: make(chan struct{}),
		oldest: map[string]time.Time{}}
	m.invokeCtx, m.cancelInvoke = context.WithCancel(context.Background())
	return m, nil
}

// Start finds the stream (the table's stream with the label of Config.StreamARN), reads the checkpoint and starts
// polling in the background. Under Config.Hold nothing is polled until Stop.
func (m *Mapping) Start(ctx context.Context) error {
	if !m.started.CompareAndSwap(false, true) {
		return errors.New("streamsource: mapping already started")
	}
	stream, err := m.findStream(ctx)
	if err != nil {
		return err
	}
	m.serverStream = stream
	path := ""
	if m.cfg.CheckpointDir != "" {
		path = filepath.Join(m.cfg.CheckpointDir, m.cfg.Name+".json")
	}
	c, stale, err := loadCheckpoints(path, stream)
	if err != nil {
		return err
	}
	if stale != "" {
		m.logger.Warn("stream checkpoint is of another stream; starting at the starting position", "stream", stream,
			"checkpointStream", stale, "startingPosition", m.cfg.StartingPosition)
	}
	m.ckpt = c
	m.logger.Info("stream event source mapping started", "function", m.cfg.Function, "stream", m.cfg.StreamARN,
		"startingPosition", m.cfg.StartingPosition, "batchSize", m.cfg.BatchSize, "held", m.cfg.Hold)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if m.cfg.Hold {
			m.logger.Warn("stream event source mapping held (fault stream:hold): nothing is read or delivered")
			<-m.stop
			return
		}
		m.shards()
	}()
	return nil
}

// Stop stops polling and waits for the batch in flight to be handled and checkpointed, or for ctx to end, when it
// cancels the invocation (whose batch is then delivered again at the next start). No retry starts after Stop.
func (m *Mapping) Stop(ctx context.Context) {
	m.stopOnce.Do(func() { close(m.stop) })
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		m.cancelInvoke()
		<-done
	}
	m.cancelInvoke()
	if m.ckpt != nil {
		if err := m.ckpt.flush(); err != nil {
			m.logger.Error("stream: checkpoint failed", "error", err.Error())
		}
	}
	s := m.Stats()
	m.logger.Info("stream event source mapping stopped", "recordsRead", s.RecordsRead, "recordsFiltered", s.RecordsFiltered,
		"recordsDelivered", s.RecordsDelivered, "invocations", s.Invocations, "batchesRetried", s.BatchesRetried,
		"batchesDiscarded", s.BatchesDiscarded, "recordsDiscarded", s.RecordsDiscarded)
}

// Stats returns the mapping's counters and its iterator age.
func (m *Mapping) Stats() Stats {
	s := Stats{RecordsRead: m.read.Load(), RecordsFiltered: m.filtered.Load(), RecordsDelivered: m.delivered.Load(),
		Invocations: m.invocations.Load(), BatchesRetried: m.retried.Load(), BatchesDiscarded: m.discardedBatches.Load(),
		RecordsDiscarded: m.discardedRecords.Load(), Held: m.cfg.Hold}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.oldest {
		if age := time.Since(t); age > s.IteratorAge {
			s.IteratorAge = age
		}
	}
	return s
}

// findStream lists the table's streams and returns the one whose label, in AWS's form, is the configured one.
func (m *Mapping) findStream(ctx context.Context) (string, error) {
	in := &dynamodbstreams.ListStreamsInput{TableName: aws.String(m.source.table)}
	var seen []string
	for {
		out, err := m.cfg.Streams.ListStreams(ctx, in)
		if err != nil {
			return "", fmt.Errorf("streamsource: list the streams of table %s: %w", m.source.table, err)
		}
		for _, s := range out.Streams {
			arn := aws.ToString(s.StreamArn)
			a, err := parseStreamARN(arn)
			if err != nil {
				continue
			}
			if label, err := AWSLabel(a.label); err == nil && label == m.source.label && a.table == m.source.table {
				return arn, nil
			}
			seen = append(seen, arn)
		}
		if out.LastEvaluatedStreamArn == nil {
			break
		}
		in.ExclusiveStartStreamArn = out.LastEvaluatedStreamArn
	}
	return "", fmt.Errorf("streamsource: table %s has no stream %s (it has %v)", m.source.table, m.cfg.StreamARN, seen)
}

// stopping reports whether Stop was called.
func (m *Mapping) stopping() bool {
	select {
	case <-m.stop:
		return true
	default:
		return false
	}
}

// sleep waits d or until Stop; it reports whether the mapping still runs.
func (m *Mapping) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-m.stop:
		return false
	}
}

// pollCtx is a context that ends with Stop, for the stream's API calls.
func (m *Mapping) pollCtx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-m.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// setOldest records the creation time of the oldest record of shard read and not handled (zero: none).
func (m *Mapping) setOldest(shard string, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.IsZero() {
		delete(m.oldest, shard)
		return
	}
	m.oldest[shard] = t
}
