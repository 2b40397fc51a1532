package streamsource

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/eventpattern"
)

// fixture is a real Dynoxide with a table whose stream a mapping reads.
type fixture struct {
	t         *testing.T
	db        *dynamodb.Client
	streams   *dynamodbstreams.Client
	table     string
	serverARN string // the stream's ARN as Dynoxide names it
	awsARN    string // as AWS would
}

const (
	testRegion  = "us-east-1"
	testAccount = "000000000000"
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := ddbserver.StartT(t)
	f := &fixture{t: t, db: ddbserver.NewClient(srv.URL, nil), table: "outbox"}
	f.streams = dynamodbstreams.NewFromConfig(aws.Config{Region: testRegion,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")},
		func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	out, err := f.db.CreateTable(context.Background(), &dynamodb.CreateTableInput{TableName: aws.String(f.table),
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages}})
	if err != nil {
		t.Fatal(err)
	}
	f.serverARN = aws.ToString(out.TableDescription.LatestStreamArn)
	if f.awsARN, err = AWSStreamARN(f.serverARN, testRegion, testAccount); err != nil {
		t.Fatal(err)
	}
	return f
}

// put writes the item pk with the string attributes kv (name, value, …).
func (f *fixture) put(pk string, kv ...string) {
	f.t.Helper()
	item := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}
	for i := 0; i+1 < len(kv); i += 2 {
		item[kv[i]] = &ddbtypes.AttributeValueMemberS{Value: kv[i+1]}
	}
	if _, err := f.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: item}); err != nil {
		f.t.Fatal(err)
	}
}

// config is a mapping of the fixture's stream to fn, with short pauses.
func (f *fixture) config(fn Invoker) Config {
	return Config{Name: "TestFunctionStream", Function: "TestFunction",
		FunctionARN: "arn:aws:lambda:us-east-1:000000000000:function:TestFunction", StreamARN: f.awsARN,
		StartingPosition: TrimHorizon, MaximumRetryAttempts: -1, Streams: f.streams, Invoker: fn,
		Logger: slog.New(slog.DiscardHandler), PollInterval: 5 * time.Millisecond, RetryPause: time.Millisecond,
		MaxRetryPause: 20 * time.Millisecond}
}

// start starts a mapping and stops it when the test ends.
func (f *fixture) start(cfg Config) *Mapping {
	f.t.Helper()
	m, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { m.Stop(context.Background()) })
	return m
}

// invoker is a fake Lambda: each invocation's event is decoded as aws-lambda-go decodes it and handed to answer,
// and the keys of its records are recorded.
type invoker struct {
	answer func(call int, ev events.DynamoDBEvent) ([]byte, error)

	mu    sync.Mutex
	calls [][]string
	got   chan []string // each invocation's keys
}

func newInvoker(answer func(call int, ev events.DynamoDBEvent) ([]byte, error)) *invoker {
	if answer == nil {
		answer = func(int, events.DynamoDBEvent) ([]byte, error) { return []byte("null"), nil }
	}
	return &invoker{answer: answer, got: make(chan []string, 1000)}
}

func (inv *invoker) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("the event does not decode as events.DynamoDBEvent: %w", err)
	}
	var keys []string
	for _, r := range ev.Records {
		keys = append(keys, r.Change.Keys["pk"].String())
	}
	inv.mu.Lock()
	call := len(inv.calls)
	inv.calls = append(inv.calls, keys)
	inv.mu.Unlock()
	out, err := inv.answer(call, ev)
	inv.got <- keys
	return out, err
}

// next waits for the next invocation's keys.
func (inv *invoker) next(t *testing.T) []string {
	t.Helper()
	select {
	case keys := <-inv.got:
		return keys
	case <-time.After(20 * time.Second):
		t.Fatal("no invocation within 20 s")
		return nil
	}
}

// waitFor waits until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// compile compiles a filter pattern written as JSON.
func compile(t *testing.T, pattern string) *eventpattern.Pattern {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(pattern), &m); err != nil {
		t.Fatal(err)
	}
	p, err := eventpattern.Compile(m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// countingStreams counts the GetRecords and DescribeStream calls made through it.
type countingStreams struct {
	StreamsAPI
	getRecords, describes atomic.Int64
}

func (c *countingStreams) DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	c.describes.Add(1)
	return c.StreamsAPI.DescribeStream(ctx, in, optFns...)
}

func (c *countingStreams) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	c.getRecords.Add(1)
	return c.StreamsAPI.GetRecords(ctx, in, optFns...)
}

// destination collects FailureRecords.
type destination struct {
	mu      sync.Mutex
	records []FailureRecord
}

func (d *destination) Send(_ context.Context, r FailureRecord) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.records = append(d.records, r)
	return nil
}

func (d *destination) all() []FailureRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]FailureRecord(nil), d.records...)
}
