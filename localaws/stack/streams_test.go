package stack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/streamsource"
)

// TestStreamEventSourceMapping runs the stack from a template whose table has a stream and whose function has a
// DynamoDB event on it: the records that pass the event's filter reach the function, as Lambda delivers them, with
// the stream's ARN as !GetAtt Table.StreamArn gives it in AWS's form; a record the function keeps reporting failed
// is retried MaximumRetryAttempts times and then described in <data-dir>/dead-letter/<queue>.jsonl; the mapping's
// checkpoint is in <data-dir>/streams.
func TestStreamEventSourceMapping(t *testing.T) {
	if _, err := ddbserver.BinaryPath(); errors.Is(err, ddbserver.ErrBinaryNotFound) && os.Getenv("CI") == "" {
		t.Skipf("the stack needs Dynoxide: %v; `make test` installs it", err)
	}
	// Run points the SDK at its endpoints through the environment; the test gives it back afterwards.
	for _, k := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SFN", "AWS_ENDPOINT_URL_EVENTBRIDGE", "AWS_REGION",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(k, "")
	}
	got := make(chan events.DynamoDBEvent, 100)
	var streamEnv string
	runtimes["stream-recorder"] = func(_ aws.Config, getenv func(string) string, _ *slog.Logger, _ io.Writer, _ func(string) func()) (any, error) {
		streamEnv = getenv("STREAM_ARN")
		return func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			got <- ev
			var resp events.DynamoDBEventResponse
			for _, r := range ev.Records {
				if _, ok := r.Change.NewImage["poison"]; ok {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
				}
			}
			return resp, nil
		}, nil
	}
	t.Cleanup(func() { delete(runtimes, "stream-recorder") })

	dataDir := t.TempDir()
	cfg := Config{Template: filepath.Join("testdata", "stream.yaml"), APIAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		EventsAddr: "127.0.0.1:0", DynamoDBAddr: "127.0.0.1:0", DataDir: dataDir}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	stderr := &syncio.Buffer{}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, stdoutW, stderr); stdoutW.Close() }()
	lines := bufio.NewScanner(stdoutR)
	if !lines.Scan() {
		t.Fatalf("no ready line; the stack said: %v\n%s", <-done, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdoutR) }()
	ready, err := ParseReady(lines.Text())
	if err != nil {
		t.Fatal(err)
	}
	db := ddbserver.NewClient(ready["dynamodb"], nil)
	put := func(pk string, kv ...string) {
		t.Helper()
		item := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}
		for i := 0; i+1 < len(kv); i += 2 {
			item[kv[i]] = &ddbtypes.AttributeValueMemberS{Value: kv[i+1]}
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("Items"), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	next := func() events.DynamoDBEvent {
		t.Helper()
		select {
		case ev := <-got:
			return ev
		case <-time.After(20 * time.Second):
			t.Fatalf("the function got no event within 20 s; the stack said:\n%s", stderr.String())
			return events.DynamoDBEvent{}
		}
	}
	keys := func(ev events.DynamoDBEvent) []string {
		var out []string
		for _, r := range ev.Records {
			out = append(out, r.Change.Keys["pk"].String())
		}
		return out
	}

	put("a", "kind", "pending")
	put("b", "kind", "settled")
	ev := next()
	if !slices.Equal(keys(ev), []string{"b"}) {
		t.Fatalf("first event %v, want b alone (a is filtered out)", keys(ev))
	}
	arn := regexp.MustCompile(`^arn:aws:dynamodb:us-east-1:000000000000:table/Items/stream/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$`)
	r := ev.Records[0]
	if !arn.MatchString(r.EventSourceArn) || r.EventSourceArn != streamEnv || r.AWSRegion != Region || r.EventName != "INSERT" {
		t.Errorf("record %+v: want the stream's ARN in AWS's form, %s, as !GetAtt gives it to the environment (%s)", r, Region, streamEnv)
	}

	put("c", "kind", "settled", "poison", "yes")
	for i := range 2 { // the first invocation and one retry
		if ev := next(); !slices.Equal(keys(ev), []string{"c"}) {
			t.Fatalf("invocation %d: %v, want [c]", i, keys(ev))
		}
	}
	put("d", "kind", "settled")
	if ev := next(); !slices.Equal(keys(ev), []string{"d"}) {
		t.Fatalf("after the discarded batch: %v, want [d]", keys(ev))
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	recs, err := streamsource.ReadDeadLetterFile(streamsource.DeadLetterPath(dataDir, "RecorderDeadLetterQueue"))
	if err != nil || len(recs) != 1 {
		t.Fatalf("dead-letter records %+v, %v; want 1", recs, err)
	}
	d := recs[0]
	if d.RequestContext.Condition != streamsource.ConditionRetryAttemptsExhausted || d.RequestContext.ApproximateInvokeCount != 2 ||
		d.RequestContext.FunctionARN != functionArn("RecorderFunction") || d.DDBStreamBatchInfo.StreamARN != streamEnv ||
		d.DDBStreamBatchInfo.BatchSize != 1 || d.DDBStreamBatchInfo.StartSequenceNumber != "000000000000000000003" {
		t.Errorf("dead-letter record %+v", d)
	}
	ckpt, err := os.ReadFile(filepath.Join(dataDir, "streams", "RecorderFunctionChanged.json"))
	if err != nil || !bytes.Contains(ckpt, []byte(`"4"`)) {
		t.Errorf("checkpoint %s, %v; want the fourth record", ckpt, err)
	}
}

// TestStreamHoldFault: --fault stream:hold is parsed like the other faults; nothing else is accepted for stream.
func TestStreamHoldFault(t *testing.T) {
	c, err := ParseFlags([]string{"--fault", "stream:hold", "--fault", "events:error=InternalException:times=1"}, io.Discard)
	if err != nil || !c.StreamHold || len(c.EventsFaults) != 1 || len(c.Faults) != 0 {
		t.Fatalf("config %+v, %v; want the stream held and the events fault kept", c, err)
	}
	if c, err := ParseFlags(nil, io.Discard); err != nil || c.StreamHold {
		t.Errorf("without the fault: held %v, %v", c.StreamHold, err)
	}
	for _, bad := range []string{"stream:drop", "stream:hold:times=1", "stream:"} {
		if _, err := ParseFlags([]string{"--fault", bad}, io.Discard); err == nil {
			t.Errorf("--fault %s accepted", bad)
		}
	}
}
