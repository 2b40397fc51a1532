package streamsource

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

var (
	hex32       = regexp.MustCompile(`^[0-9a-f]{32}$`)
	seq21       = regexp.MustCompile(`^\d{21,}$`)
	awsStreamRe = regexp.MustCompile(`^arn:aws:dynamodb:us-east-1:000000000000:table/outbox/stream/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$`)
	awsShardRe  = regexp.MustCompile(`^shardId-\d{20}-[0-9a-f]{8}$`)
)

// TestRecordsAreDeliveredAsLambdaDeliversThem decodes the events the function gets with aws-lambda-go's
// events.DynamoDBEvent and checks the form of each field: AWS's, not Dynoxide's.
func TestRecordsAreDeliveredAsLambdaDeliversThem(t *testing.T) {
	f := newFixture(t)
	var events_ []events.DynamoDBEvent
	var raw []byte
	inv := newInvoker(func(_ int, ev events.DynamoDBEvent) ([]byte, error) {
		events_ = append(events_, ev)
		return nil, nil
	})
	rawInv := invokerFunc(func(ctx context.Context, fn string, payload []byte) ([]byte, error) {
		if raw == nil {
			raw = payload
		}
		return inv.Invoke(ctx, fn, payload)
	})
	before := time.Now().Add(-2 * time.Second)
	f.put("k1", "status", "IN_PROGRESS")
	if _, err := f.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(f.table),
		Key:                       map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "k1"}},
		UpdateExpression:          aws.String("SET #s = :s, amount = :n, flags = :m"),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":s": &ddbtypes.AttributeValueMemberS{Value: "COMPLETED"}, ":n": &ddbtypes.AttributeValueMemberN{Value: "250"}, ":m": &ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{"urgent": &ddbtypes.AttributeValueMemberBOOL{Value: true}}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.table),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "k1"}}}); err != nil {
		t.Fatal(err)
	}
	cfg := f.config(rawInv)
	f.start(cfg)
	if keys := inv.next(t); !slices.Equal(keys, []string{"k1", "k1", "k1"}) {
		t.Fatalf("one invocation with the three records, got %v", keys)
	}
	after := time.Now().Add(2 * time.Second)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || len(top) != 1 || top["Records"] == nil {
		t.Fatalf("the event is %s, want {\"Records\":[…]}", raw)
	}
	recs := events_[0].Records
	var prevSeq string
	for i, r := range recs {
		if !hex32.MatchString(r.EventID) {
			t.Errorf("record %d: eventID %q, want 32 hex digits", i, r.EventID)
		}
		if r.EventVersion != "1.1" || r.EventSource != "aws:dynamodb" || r.AWSRegion != testRegion {
			t.Errorf("record %d: eventVersion %q eventSource %q awsRegion %q", i, r.EventVersion, r.EventSource, r.AWSRegion)
		}
		if r.EventSourceArn != f.awsARN || !awsStreamRe.MatchString(r.EventSourceArn) {
			t.Errorf("record %d: eventSourceARN %q, want %q in AWS's form", i, r.EventSourceArn, f.awsARN)
		}
		c := r.Change
		if !seq21.MatchString(c.SequenceNumber) || c.SequenceNumber <= prevSeq {
			t.Errorf("record %d: SequenceNumber %q after %q, want 21+ digits, increasing", i, c.SequenceNumber, prevSeq)
		}
		prevSeq = c.SequenceNumber
		if at := c.ApproximateCreationDateTime.Time; at.Before(before) || at.After(after) {
			t.Errorf("record %d: ApproximateCreationDateTime %s, want about now", i, at)
		}
		if c.SizeBytes <= 0 || c.StreamViewType != "NEW_AND_OLD_IMAGES" || c.Keys["pk"].String() != "k1" || len(c.Keys) != 1 {
			t.Errorf("record %d: SizeBytes %d StreamViewType %q Keys %v", i, c.SizeBytes, c.StreamViewType, c.Keys)
		}
	}
	if ids := []string{recs[0].EventID, recs[1].EventID, recs[2].EventID}; ids[0] == ids[1] || ids[1] == ids[2] {
		t.Errorf("eventIDs %v are not distinct", ids)
	}
	insert, modify, remove := recs[0], recs[1], recs[2]
	if insert.EventName != "INSERT" || insert.Change.OldImage != nil || insert.Change.NewImage["status"].String() != "IN_PROGRESS" {
		t.Errorf("INSERT: %+v", insert)
	}
	if modify.EventName != "MODIFY" || modify.Change.OldImage["status"].String() != "IN_PROGRESS" ||
		modify.Change.NewImage["status"].String() != "COMPLETED" || modify.Change.NewImage["amount"].Number() != "250" ||
		!modify.Change.NewImage["flags"].Map()["urgent"].Boolean() {
		t.Errorf("MODIFY: %+v", modify)
	}
	if remove.EventName != "REMOVE" || remove.Change.NewImage != nil || remove.Change.OldImage["status"].String() != "COMPLETED" {
		t.Errorf("REMOVE: %+v", remove)
	}
}

// invokerFunc is an Invoker written as a function.
type invokerFunc func(ctx context.Context, function string, payload []byte) ([]byte, error)

func (f invokerFunc) Invoke(ctx context.Context, function string, payload []byte) ([]byte, error) {
	return f(ctx, function, payload)
}

// outboxFilter is the outcome relay's filter in template.yaml: a transfer record that becomes COMPLETED or FAILED.
const outboxFilter = `{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"sk":{"S":["TRANSFER"]},"status":{"S":["COMPLETED","FAILED"]}},"OldImage":{"status":{"S":[{"anything-but":["COMPLETED","FAILED"]}]}}}}`

// TestFilterCriteria: only the records that match a filter reach the function (several filters are OR'ed); the
// others are dropped and the checkpoint moves past them, a last record that matches nothing included.
func TestFilterCriteria(t *testing.T) {
	f := newFixture(t)
	inv := newInvoker(nil)
	cfg := f.config(inv)
	cfg.CheckpointDir = t.TempDir()
	cfg.Filters = []*eventpattern.Pattern{compile(t, outboxFilter), compile(t, `{"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"audit-"}]}}}}`)}
	m := f.start(cfg)

	f.put("t1", "sk", "TRANSFER", "status", "IN_PROGRESS") // INSERT: no
	f.put("t1", "sk", "TRANSFER", "status", "COMPLETED")   // settles: yes
	f.put("t1", "sk", "TRANSFER", "status", "COMPLETED")   // already settled: no (anything-but)
	f.put("a1", "sk", "ACCOUNT", "status", "OPEN")
	f.put("a1", "sk", "ACCOUNT", "status", "COMPLETED") // not a transfer: no
	f.put("t2", "sk", "TRANSFER", "status", "RESERVED")
	f.put("t2", "sk", "TRANSFER", "status", "FAILED") // settles: yes
	f.put("audit-1")                                  // the second filter: yes
	f.put("t3", "sk", "TRANSFER", "status", "IN_PROGRESS")
	var got []string
	for len(got) < 3 {
		got = append(got, inv.next(t)...)
	}
	if want := []string{"t1", "t2", "audit-1"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	waitFor(t, "the 9 records read", func() bool { return m.Stats().RecordsRead == 9 })
	waitFor(t, "the checkpoint past the last record", func() bool { return m.ckpt.get("shardId-00000001-outbox") == "9" })
	m.Stop(context.Background())
	s := m.Stats()
	if s.RecordsFiltered != 6 || s.RecordsDelivered != 3 || s.BatchesRetried != 0 || s.BatchesDiscarded != 0 {
		t.Errorf("stats %+v, want 6 filtered out and 3 delivered", s)
	}
	b, err := os.ReadFile(filepath.Join(cfg.CheckpointDir, cfg.Name+".json"))
	if err != nil || !strings.Contains(string(b), `"shardId-00000001-outbox":"9"`) || !strings.Contains(string(b), f.serverARN) {
		t.Errorf("checkpoint file %s, %v; want the last record, 9, of %s", b, err, f.serverARN)
	}
}

// TestBatching: a batch has at most BatchSize records, in order; a full batch goes at once whatever the window; a
// batch that is not full waits for the window, gathering the records written meanwhile into it.
func TestBatching(t *testing.T) {
	t.Run("batch size", func(t *testing.T) {
		f := newFixture(t)
		for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			f.put(k)
		}
		inv := newInvoker(nil)
		cfg := f.config(inv)
		cfg.BatchSize = 3
		f.start(cfg)
		for _, want := range [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g"}} {
			if got := inv.next(t); !slices.Equal(got, want) {
				t.Fatalf("batch %v, want %v", got, want)
			}
		}
	})
	t.Run("full batches do not wait for the window", func(t *testing.T) {
		f := newFixture(t)
		for _, k := range []string{"a", "b", "c", "d"} {
			f.put(k)
		}
		inv := newInvoker(nil)
		cfg := f.config(inv)
		cfg.BatchSize, cfg.MaximumBatchingWindow = 2, time.Hour
		f.start(cfg)
		for _, want := range [][]string{{"a", "b"}, {"c", "d"}} {
			if got := inv.next(t); !slices.Equal(got, want) {
				t.Fatalf("batch %v, want %v", got, want)
			}
		}
	})
	t.Run("the window gathers records written later", func(t *testing.T) {
		f := newFixture(t)
		f.put("a")
		inv := newInvoker(nil)
		cfg := f.config(inv)
		cfg.BatchSize, cfg.MaximumBatchingWindow = 2, time.Hour
		m := f.start(cfg)
		waitFor(t, "the first record read", func() bool { return m.Stats().RecordsRead == 1 })
		if age := m.Stats().IteratorAge; age <= 0 {
			t.Errorf("iterator age %s while a record waits for its batch, want > 0", age)
		}
		f.put("b")
		if got := inv.next(t); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("batch %v, want [a b]", got)
		}
		waitFor(t, "the batch handled", func() bool { return m.Stats().RecordsDelivered == 2 })
		if age := m.Stats().IteratorAge; age != 0 {
			t.Errorf("iterator age %s with every record handled, want 0", age)
		}
	})
	t.Run("a window delivers what it gathered", func(t *testing.T) {
		f := newFixture(t)
		f.put("a")
		f.put("b")
		inv := newInvoker(nil)
		cfg := f.config(inv)
		cfg.BatchSize, cfg.MaximumBatchingWindow = 10, 50*time.Millisecond
		f.start(cfg)
		if got := inv.next(t); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("batch %v, want [a b]", got)
		}
	})
}

// functionError fails an invocation as a function that returned an error does.
var functionError = &sfnengine.FunctionError{Type: "errorString", Message: "boom"}

// TestBisectBatchOnFunctionError: a failed batch is split in two and each half retried, down to the record that
// fails, which alone is retried MaximumRetryAttempts times (the splits do not count) and then given up: its
// FailureRecord goes to the destination with AWS's fields, and the records after it are delivered.
func TestBisectBatchOnFunctionError(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"a", "b", "bad", "c"} {
		f.put(k)
	}
	inv := newInvoker(func(_ int, ev events.DynamoDBEvent) ([]byte, error) {
		for _, r := range ev.Records {
			if r.Change.Keys["pk"].String() == "bad" {
				return nil, functionError
			}
		}
		return nil, nil
	})
	dest := &destination{}
	cfg := f.config(inv)
	cfg.BatchSize, cfg.BisectBatchOnFunctionError, cfg.MaximumRetryAttempts, cfg.OnFailure = 4, true, 1, dest
	m := f.start(cfg)
	want := [][]string{{"a", "b", "bad", "c"}, {"a", "b"}, {"bad", "c"}, {"bad"}, {"bad"}, {"c"}}
	for i, w := range want {
		if got := inv.next(t); !slices.Equal(got, w) {
			t.Fatalf("invocation %d: %v, want %v", i, got, w)
		}
	}
	waitFor(t, "the last record delivered", func() bool { return m.Stats().RecordsDelivered == 3 })
	recs := dest.all()
	if len(recs) != 1 {
		t.Fatalf("destination records %+v, want 1", recs)
	}
	r := recs[0]
	info := r.DDBStreamBatchInfo
	if r.Version != "1.0" || r.RequestContext.Condition != ConditionRetryAttemptsExhausted || r.RequestContext.ApproximateInvokeCount != 4 ||
		r.RequestContext.FunctionARN != cfg.FunctionARN || r.RequestContext.RequestID == "" ||
		r.ResponseContext != (ResponseContext{StatusCode: 200, ExecutedVersion: "$LATEST", FunctionError: "Unhandled"}) {
		t.Errorf("destination record %+v", r)
	}
	if info.BatchSize != 1 || info.StartSequenceNumber != "000000000000000000003" || info.EndSequenceNumber != info.StartSequenceNumber ||
		info.StreamARN != f.awsARN || !awsShardRe.MatchString(info.ShardID) {
		t.Errorf("DDBStreamBatchInfo %+v", info)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", r.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", r.Timestamp, err)
	}
	for _, at := range []string{info.ApproximateArrivalOfFirstRecord, info.ApproximateArrivalOfLastRecord} {
		if ts, err := time.Parse(time.RFC3339, at); err != nil || time.Since(ts) > time.Minute || !strings.HasSuffix(at, "Z") {
			t.Errorf("approximate arrival %q: %v", at, err)
		}
	}
	s := m.Stats()
	if s.BatchesDiscarded != 1 || s.RecordsDiscarded != 1 || s.Invocations != 6 || s.BatchesRetried != 3 {
		t.Errorf("stats %+v", s)
	}
}

// TestReportBatchItemFailures: the function's batchItemFailures checkpoint before the lowest failed record and the
// rest is retried; an itemIdentifier that is not in the batch, or empty, fails the whole batch; an empty list is
// a success.
func TestReportBatchItemFailures(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"r1", "r2", "r3", "r4", "r5"} {
		f.put(k)
	}
	answers := []string{
		`{"batchItemFailures":[{"itemIdentifier":"SEQ4"},{"itemIdentifier":"SEQ3"}]}`,
		`{"batchItemFailures":[{"itemIdentifier":"3"}]}`, // Dynoxide's number, not the delivered one
		`{"batchItemFailures":[{"itemIdentifier":""}]}`,
		`{"batchItemFailures":[{"itemIdentifier":null}]}`,
		`{"batchItemFailures":[]}`,
	}
	inv := newInvoker(func(call int, ev events.DynamoDBEvent) ([]byte, error) {
		a := answers[min(call, len(answers)-1)]
		for _, r := range ev.Records {
			a = strings.ReplaceAll(a, "SEQ"+strings.TrimPrefix(r.Change.Keys["pk"].String(), "r"), r.Change.SequenceNumber)
		}
		return []byte(a), nil
	})
	cfg := f.config(inv)
	cfg.CheckpointDir = t.TempDir()
	cfg.ReportBatchItemFailures, cfg.MaximumRetryAttempts = true, 10
	m := f.start(cfg)
	if got := inv.next(t); !slices.Equal(got, []string{"r1", "r2", "r3", "r4", "r5"}) {
		t.Fatalf("first invocation %v", got)
	}
	for i := range 4 {
		if got := inv.next(t); !slices.Equal(got, []string{"r3", "r4", "r5"}) {
			t.Fatalf("retry %d: %v, want the records from r3 on", i+1, got)
		}
	}
	waitFor(t, "the batch handled", func() bool { return m.Stats().RecordsDelivered == 5 })
	if s := m.Stats(); s.BatchesRetried != 4 || s.Invocations != 5 || s.BatchesDiscarded != 0 {
		t.Errorf("stats %+v", s)
	}
	if got := m.ckpt.get("shardId-00000001-outbox"); got != "5" {
		t.Errorf("checkpoint %q, want 5", got)
	}
}

// TestRetriesUntilSuccess: a batch the function fails is retried whole, and the next is sent only once it
// succeeded; throttles are retried without counting against MaximumRetryAttempts.
func TestRetriesUntilSuccess(t *testing.T) {
	f := newFixture(t)
	f.put("a")
	f.put("b")
	throttle := &sfnengine.ServiceError{Name: "Lambda.TooManyRequestsException", Message: "Rate Exceeded."}
	inv := newInvoker(func(call int, _ events.DynamoDBEvent) ([]byte, error) {
		switch call {
		case 0, 1, 2:
			return nil, functionError
		case 3, 4, 5, 6:
			return nil, throttle
		}
		return nil, nil
	})
	cfg := f.config(inv)
	cfg.BatchSize, cfg.MaximumRetryAttempts = 1, 3
	m := f.start(cfg)
	for i := range 9 {
		want := "a"
		if i == 8 {
			want = "b"
		}
		if got := inv.next(t); !slices.Equal(got, []string{want}) {
			t.Fatalf("invocation %d: %v, want [%s]", i, got, want)
		}
	}
	waitFor(t, "b delivered", func() bool { return m.Stats().RecordsDelivered == 2 })
	if s := m.Stats(); s.BatchesDiscarded != 0 || s.BatchesRetried != 7 {
		t.Errorf("stats %+v: want 7 retries and nothing discarded", s)
	}
}

// TestRecordAgeExceeded: a batch that keeps failing is given up once its records are older than
// MaximumRecordAge, with the condition RecordAgeExceeded, and the mapping moves on. The age is 3 s, not less: a
// record's ApproximateCreationDateTime has whole seconds in Dynoxide, so a record can look up to a second older than
// it is, and with 1 s one written just before a second's end was given up before its first invocation.
func TestRecordAgeExceeded(t *testing.T) {
	f := newFixture(t)
	f.put("old")
	inv := newInvoker(func(_ int, ev events.DynamoDBEvent) ([]byte, error) {
		if ev.Records[0].Change.Keys["pk"].String() == "old" {
			return nil, functionError
		}
		return nil, nil
	})
	dest := &destination{}
	cfg := f.config(inv)
	cfg.MaximumRecordAge, cfg.OnFailure = 3*time.Second, dest
	m := f.start(cfg)
	waitFor(t, "the old record given up", func() bool { return len(dest.all()) == 1 })
	f.put("new")
	waitFor(t, "the next record delivered", func() bool { return m.Stats().RecordsDelivered == 1 })
	r := dest.all()[0]
	if r.RequestContext.Condition != ConditionRecordAgeExceeded || r.DDBStreamBatchInfo.BatchSize != 1 ||
		r.DDBStreamBatchInfo.StartSequenceNumber != "000000000000000000001" || r.RequestContext.ApproximateInvokeCount < 1 {
		t.Errorf("destination record %+v", r)
	}
}

// TestCheckpointResume: a mapping started again on the same folder resumes after the last record handled: the
// records written while it was stopped are delivered, those delivered before are not.
func TestCheckpointResume(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	first := newInvoker(nil)
	cfg := f.config(first)
	cfg.CheckpointDir = dir
	m := f.start(cfg)
	for _, k := range []string{"r1", "r2", "r3"} {
		f.put(k)
	}
	var got []string
	for len(got) < 3 {
		got = append(got, first.next(t)...)
	}
	waitFor(t, "r3 checkpointed", func() bool { return m.ckpt.get("shardId-00000001-outbox") == "3" })
	m.Stop(context.Background())
	f.put("r4")
	f.put("r5")

	second := newInvoker(nil)
	cfg.Invoker = second
	m2 := f.start(cfg)
	got = nil
	for len(got) < 2 {
		got = append(got, second.next(t)...)
	}
	if !slices.Equal(got, []string{"r4", "r5"}) {
		t.Fatalf("after the restart: %v, want [r4 r5]", got)
	}
	f.put("r6")
	if got := second.next(t); !slices.Equal(got, []string{"r6"}) {
		t.Fatalf("then %v, want [r6]", got)
	}
	if s := m2.Stats(); s.RecordsRead != 3 {
		t.Errorf("the second mapping read %d records, want 3 (r4 to r6)", s.RecordsRead)
	}

	// A checkpoint of another stream (the table's stream was replaced) is not used: the mapping starts at
	// TRIM_HORIZON.
	m2.Stop(context.Background())
	stale := `{"streamArn":"arn:aws:dynamodb:dynoxide:000000000000:table/outbox/stream/1","shards":{"shardId-00000001-outbox":"5"}}`
	if err := os.WriteFile(filepath.Join(dir, cfg.Name+".json"), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	third := newInvoker(nil)
	cfg.Invoker = third
	f.start(cfg)
	if got := third.next(t); len(got) != 6 || got[0] != "r1" {
		t.Errorf("with another stream's checkpoint: %v, want the six records from r1", got)
	}
}

// TestStopWaitsForTheBatchInFlight: Stop returns once the batch in flight was handled and checkpointed; a Stop
// that gives up waiting cancels the invocation, whose batch is delivered again at the next start (at least once).
func TestStopWaitsForTheBatchInFlight(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	entered, release := make(chan struct{}, 10), make(chan struct{})
	blocking := invokerFunc(func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	cfg := f.config(blocking)
	cfg.CheckpointDir = dir
	m := f.start(cfg)
	f.put("r1")
	<-entered
	stopped := make(chan struct{})
	go func() { m.Stop(context.Background()); close(stopped) }()
	close(release)
	<-stopped
	if got := m.ckpt.get("shardId-00000001-outbox"); got != "1" {
		t.Fatalf("after Stop the checkpoint is %q, want 1: the batch in flight was handled", got)
	}

	// A Stop whose context ends cancels the invocation: r2 is not checkpointed, and is delivered again.
	cfg.Invoker = invokerFunc(func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	m2 := f.start(cfg)
	f.put("r2")
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m2.Stop(ctx)
	if got := m2.ckpt.get("shardId-00000001-outbox"); got != "1" {
		t.Fatalf("after a cancelled Stop the checkpoint is %q, want 1", got)
	}
	inv := newInvoker(nil)
	cfg.Invoker = inv
	f.start(cfg)
	if got := inv.next(t); !slices.Equal(got, []string{"r2"}) {
		t.Fatalf("after the restart: %v, want [r2] again", got)
	}
}

// TestHold: a held mapping reads and delivers nothing, however long another mapping of the same stream takes to
// deliver everything; the records wait in the stream for the mapping that runs after it.
func TestHold(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	counting := &countingStreams{StreamsAPI: f.streams}
	held := f.config(newInvoker(func(int, events.DynamoDBEvent) ([]byte, error) {
		t.Error("a held mapping invoked the function")
		return nil, nil
	}))
	held.Streams, held.Hold, held.CheckpointDir = counting, true, dir
	h := f.start(held)
	other := newInvoker(nil)
	cfg := f.config(other)
	cfg.Name = "Other"
	f.start(cfg)
	for _, k := range []string{"r1", "r2", "r3"} {
		f.put(k)
	}
	var got []string
	for len(got) < 3 {
		got = append(got, other.next(t)...)
	}
	h.Stop(context.Background())
	if s := h.Stats(); !s.Held || s.RecordsRead != 0 || s.Invocations != 0 || counting.getRecords.Load() != 0 {
		t.Errorf("held mapping: stats %+v, GetRecords calls %d; want nothing read", s, counting.getRecords.Load())
	}
	after := newInvoker(nil)
	held.Hold, held.Invoker = false, after
	f.start(held)
	got = nil
	for len(got) < 3 {
		got = append(got, after.next(t)...)
	}
	if !slices.Equal(got, []string{"r1", "r2", "r3"}) {
		t.Errorf("after the hold: %v, want every record", got)
	}
}

// A busy table does not make the poller busy: a poll that read fewer records than a page holds waits its interval
// before the next one, as Lambda's poller does (about four a second; DynamoDB Streams serves five a second per
// shard), instead of polling again at once as long as records keep coming.
func TestPollsAtItsIntervalWhileRecordsKeepComing(t *testing.T) {
	f := newFixture(t)
	counting := &countingStreams{StreamsAPI: f.streams}
	inv := newInvoker(nil)
	cfg := f.config(inv)
	cfg.Streams, cfg.PollInterval = counting, 50*time.Millisecond
	start := time.Now()
	f.start(cfg)
	const writes = 60
	for i := range writes {
		f.put(fmt.Sprintf("busy-%02d", i))
		time.Sleep(5 * time.Millisecond)
	}
	delivered := 0
	for delivered < writes {
		delivered += len(inv.next(t))
	}
	elapsed := time.Since(start)
	// Each poll but a full page's is followed by a pause of PollInterval, so at most elapsed/PollInterval + 1 polls
	// fit in the time the test took (+1 for the poll that may be in flight when it reads the count).
	if got, most := counting.getRecords.Load(), int64(elapsed/cfg.PollInterval)+2; got > most {
		t.Errorf("%d GetRecords calls in %v at a %v interval, want at most %d", got, elapsed.Round(time.Millisecond), cfg.PollInterval, most)
	}
}

// The shards are listed once while one is being read: Dynoxide's DescribeStream reads the whole stream, and the
// server answers nothing else meanwhile, so a mapping that listed them on a timer paused every write to the table.
func TestListsShardsOnlyWhenNoneIsRead(t *testing.T) {
	f := newFixture(t)
	saved := shardsInterval
	shardsInterval = 5 * time.Millisecond
	t.Cleanup(func() { shardsInterval = saved })
	counting := &countingStreams{StreamsAPI: f.streams}
	inv := newInvoker(nil)
	cfg := f.config(inv)
	cfg.Streams = counting
	f.put("first")
	m := f.start(cfg)
	inv.next(t)
	time.Sleep(100 * time.Millisecond) // twenty intervals
	f.put("second")
	inv.next(t)
	m.Stop(context.Background())
	if n := counting.describes.Load(); n != 1 {
		t.Errorf("DescribeStream called %d times while the one shard was read, want 1", n)
	}
}
