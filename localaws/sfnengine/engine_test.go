package sfnengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// invokerFunc adapts a function to sfnengine.LambdaInvoker.
type invokerFunc func(ctx context.Context, name string, payload []byte) ([]byte, error)

func (f invokerFunc) Invoke(ctx context.Context, name string, payload []byte) ([]byte, error) {
	return f(ctx, name, payload)
}

// run creates a state machine from def, runs input through it and returns the closed execution.
func run(t *testing.T, eng *sfnengine.Engine, def, input string) *sfnengine.ExecutionRecord {
	t.Helper()
	ctx := context.Background()
	rec := start(t, eng, def, input)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := waitHistory(wctx, eng, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var smCounter struct {
	sync.Mutex
	n int
}

func start(t *testing.T, eng *sfnengine.Engine, def, input string) *sfnengine.ExecutionRecord {
	t.Helper()
	ctx := context.Background()
	smCounter.Lock()
	smCounter.n++
	name := "sm-" + strings.ReplaceAll(t.Name(), "/", "-")
	if len(name) > 60 {
		name = name[:60]
	}
	name += "-" + string(rune('a'+smCounter.n%26)) + time.Now().Format("150405.000000000")[7:]
	smCounter.Unlock()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: strings.ReplaceAll(name, ".", ""), Definition: def, RoleArn: testRoleArn})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Input: input})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return rec
}

func newEngine(t *testing.T, opts sfnengine.Options) *sfnengine.Engine {
	t.Helper()
	eng := sfnengine.New(opts)
	t.Cleanup(eng.Close)
	return eng
}

// restoredEngine is newEngine restarted from what opts.Store holds: Restore has run, as after a process restart.
func restoredEngine(t *testing.T, opts sfnengine.Options) *sfnengine.Engine {
	t.Helper()
	eng := newEngine(t, opts)
	if err := eng.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	return eng
}

// requireRedrivable fails t unless eng describes the execution arn as REDRIVABLE; what names the case.
func requireRedrivable(t *testing.T, eng *sfnengine.Engine, arn, what string) {
	t.Helper()
	d, err := eng.DescribeExecution(context.Background(), arn)
	if err != nil {
		t.Fatal(err)
	}
	if status, reason := eng.RedriveStatus(d); status != sfnengine.RedriveStatusRedrivable {
		t.Fatalf("redrive status %s: %s (%s)", what, status, reason)
	}
}

// fileStore opens a FileStore in dir.
func fileStore(tb testing.TB, dir string) *sfnengine.FileStore {
	tb.Helper()
	s, err := sfnengine.NewFileStore(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

const lambdaTask = `{"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
  "Parameters":{"FunctionName":"arn:aws:lambda:us-east-1:123456789012:function:debit","Payload":{"x.$":"$.x"}},
  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},
  "Caught":{"Type":"Pass","End":true}}}`

func TestLambdaInvoke(t *testing.T) {
	tests := []struct {
		name       string
		invoke     invokerFunc
		wantOutput string // JSON subset checked field by field
		wantError  string
		wantCause  string
	}{
		{
			name: "success is shaped like AWS",
			invoke: func(_ context.Context, name string, payload []byte) ([]byte, error) {
				if name != "arn:aws:lambda:us-east-1:123456789012:function:debit" || string(payload) != `{"x":7}` {
					return nil, errors.New("unexpected call " + name + " " + string(payload))
				}
				return []byte(`{"ok":true}`), nil
			},
			wantOutput: `{"Payload":{"ok":true},"StatusCode":200,"ExecutedVersion":"$LATEST"}`,
		},
		{
			name: "function error takes its type as the error name",
			invoke: func(context.Context, string, []byte) ([]byte, error) {
				return nil, &sfnengine.FunctionError{Type: "InsufficientFunds", Message: "balance 5 < 7"}
			},
			wantError: "InsufficientFunds",
			wantCause: `{"errorMessage":"balance 5 < 7","errorType":"InsufficientFunds"}`,
		},
		{
			name: "service error keeps its name",
			invoke: func(context.Context, string, []byte) ([]byte, error) {
				return nil, &sfnengine.ServiceError{Name: "Lambda.TooManyRequestsException", Message: "Rate exceeded"}
			},
			wantError: "Lambda.TooManyRequestsException",
			wantCause: "Rate exceeded",
		},
		{
			name: "any other error is a Lambda.ServiceException",
			invoke: func(context.Context, string, []byte) ([]byte, error) {
				return nil, errors.New("connection refused")
			},
			wantError: "Lambda.ServiceException",
			wantCause: "connection refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, sfnengine.Options{Lambda: tt.invoke})
			rec := run(t, eng, lambdaTask, `{"x":7}`)
			if rec.Status != sfnengine.StatusSucceeded {
				t.Fatalf("status %s (%v)", rec.Status, rec.Cause)
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
				t.Fatal(err)
			}
			if tt.wantOutput != "" {
				var want map[string]any
				_ = json.Unmarshal([]byte(tt.wantOutput), &want)
				for k, v := range want {
					if !jsonEqual(out[k], v) {
						t.Errorf("output %s = %v, want %v", k, out[k], v)
					}
				}
				if _, ok := out["SdkHttpMetadata"]; !ok {
					t.Errorf("output lacks SdkHttpMetadata: %s", *rec.Output)
				}
				return
			}
			if out["Error"] != tt.wantError || out["Cause"] != tt.wantCause {
				t.Fatalf("caught %v / %v, want %s / %s", out["Error"], out["Cause"], tt.wantError, tt.wantCause)
			}
			failed := findEvent(rec.History, sfnengine.EventTaskFailed)
			if failed == nil || failed.Details["error"] != tt.wantError || failed.Details["resourceType"] != "lambda" || failed.Details["resource"] != "invoke" {
				t.Fatalf("TaskFailed event = %+v", failed)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func findEvent(h []sfnengine.Event, typ string) *sfnengine.Event {
	for i := range h {
		if h[i].Type == typ {
			return &h[i]
		}
	}
	return nil
}

// advanceWhenWaiting waits until the engine has a timer pending on clock, then advances the clock by d.
func advanceWhenWaiting(t *testing.T, clock *sfnengine.ManualClock, d time.Duration) {
	t.Helper()
	clock.MustAwaitWaiters(t, 1)
	clock.Advance(d)
}

// awaitExactlyWaiters waits up to 30 seconds until exactly n timers are pending on clock: timers that stop as
// goroutines end make the number fall as well as grow.
func awaitExactlyWaiters(t *testing.T, clock *sfnengine.ManualClock, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := clock.Waiters()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine has %d timers pending, want exactly %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRetryBackoffFollowsTheClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := sfnengine.NewManualClock(t0)
	var mu sync.Mutex
	var calls []time.Duration
	invoke := invokerFunc(func(context.Context, string, []byte) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, clock.Now().Sub(t0))
		if len(calls) < 3 {
			return nil, &sfnengine.FunctionError{Type: "TransientError", Message: "try again"}
		}
		return []byte(`"done"`), nil
	})
	eng := newEngine(t, sfnengine.Options{Clock: clock, Lambda: invoke})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	  "Parameters":{"FunctionName":"f"},"OutputPath":"$.Payload",
	  "Retry":[{"ErrorEquals":["TransientError"],"IntervalSeconds":2,"BackoffRate":3,"MaxAttempts":5}],"End":true}}}`
	rec := start(t, eng, def, `{}`)
	advanceWhenWaiting(t, clock, 2*time.Second)
	advanceWhenWaiting(t, clock, 6*time.Second)
	out, err := waitHistory(context.Background(), eng, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != sfnengine.StatusSucceeded || *out.Output != `"done"` {
		t.Fatalf("status %s output %v", out.Status, out.Output)
	}
	want := []time.Duration{0, 2 * time.Second, 8 * time.Second}
	if len(calls) != 3 || calls[0] != want[0] || calls[1] != want[1] || calls[2] != want[2] {
		t.Fatalf("calls at %v, want %v", calls, want)
	}
	if n := countEvents(out.History, sfnengine.EventTaskScheduled); n != 3 {
		t.Fatalf("%d TaskScheduled events, want 3", n)
	}
}

func TestMaxDelaySecondsCapsBackoff(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := sfnengine.NewManualClock(t0)
	var calls []time.Duration
	var mu sync.Mutex
	invoke := invokerFunc(func(context.Context, string, []byte) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, clock.Now().Sub(t0))
		return nil, &sfnengine.ServiceError{Name: "Lambda.ServiceException", Message: "boom"}
	})
	eng := newEngine(t, sfnengine.Options{Clock: clock, Lambda: invoke})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	  "Parameters":{"FunctionName":"f"},
	  "Retry":[{"ErrorEquals":["States.TaskFailed"],"IntervalSeconds":10,"BackoffRate":10,"MaxAttempts":2,"MaxDelaySeconds":15}],"End":true}}}`
	rec := start(t, eng, def, `{}`)
	advanceWhenWaiting(t, clock, 10*time.Second)
	advanceWhenWaiting(t, clock, 15*time.Second)
	out, _ := waitHistory(context.Background(), eng, rec.Arn)
	if out.Status != sfnengine.StatusFailed || *out.Error != "Lambda.ServiceException" {
		t.Fatalf("status %s error %v", out.Status, out.Error)
	}
	want := []time.Duration{0, 10 * time.Second, 25 * time.Second}
	if len(calls) != 3 || calls[1] != want[1] || calls[2] != want[2] {
		t.Fatalf("calls at %v, want %v", calls, want)
	}
}

func countEvents(h []sfnengine.Event, typ string) int {
	n := 0
	for _, e := range h {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestTimeouts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	blocking := invokerFunc(func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	tests := []struct {
		name       string
		def        string
		advance    time.Duration
		wantStatus string
		wantError  string
		wantLast   string
	}{
		{
			name:       "machine TimeoutSeconds ends the execution TIMED_OUT",
			def:        `{"StartAt":"W","TimeoutSeconds":5,"States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`,
			advance:    5 * time.Second,
			wantStatus: sfnengine.StatusTimedOut,
			wantError:  "States.Timeout",
			wantLast:   sfnengine.EventExecutionTimedOut,
		},
		{
			name:       "task TimeoutSeconds raises States.Timeout",
			def:        `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"slow"},"TimeoutSeconds":2,"End":true}}}`,
			advance:    2 * time.Second,
			wantStatus: sfnengine.StatusFailed,
			wantError:  "States.Timeout",
			wantLast:   sfnengine.EventExecutionFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := sfnengine.NewManualClock(t0)
			eng := newEngine(t, sfnengine.Options{Clock: clock, Lambda: blocking})
			rec := start(t, eng, tt.def, `{}`)
			// The machine timer and the Wait/Task timer are both pending; advance once both are.
			timers := 1
			if strings.Contains(tt.def, `"TimeoutSeconds":5`) {
				timers = 2
			}
			clock.MustAwaitWaiters(t, timers)
			clock.Advance(tt.advance)
			out, err := waitHistory(context.Background(), eng, rec.Arn)
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != tt.wantStatus || out.Error == nil || *out.Error != tt.wantError {
				t.Fatalf("status %s error %v", out.Status, out.Error)
			}
			if last := out.History[len(out.History)-1]; last.Type != tt.wantLast {
				t.Fatalf("last event %s, want %s", last.Type, tt.wantLast)
			}
		})
	}
}

func TestRunawayLoopIsBoundedByTheHistoryLimit(t *testing.T) {
	loop := `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Next":"A"}}}`
	tests := []struct {
		name  string
		limit int
	}{
		{name: "small limit", limit: 100},
		{name: "AWS default of 25,000 events", limit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, sfnengine.Options{MaxHistoryEvents: tt.limit})
			rec := run(t, eng, loop, `{}`)
			limit := tt.limit
			if limit == 0 {
				limit = sfnengine.DefaultMaxHistoryEvents
			}
			if rec.Status != sfnengine.StatusFailed || *rec.Error != "States.Runtime" {
				t.Fatalf("status %s error %v", rec.Status, rec.Error)
			}
			if len(rec.History) != limit {
				t.Fatalf("history has %d events, want %d", len(rec.History), limit)
			}
			if rec.History[len(rec.History)-1].Type != sfnengine.EventExecutionFailed {
				t.Fatalf("last event %s", rec.History[len(rec.History)-1].Type)
			}
		})
	}
}

func TestStatusChangeEvents(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	sub := func(_ context.Context, ev []byte) {
		var m map[string]any
		if err := json.Unmarshal(ev, &m); err != nil {
			t.Errorf("event is not JSON: %v", err)
		}
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}
	eng := newEngine(t, sfnengine.Options{Subscribers: []sfnengine.Subscriber{sub}})
	rec := run(t, eng, `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"ok":1},"End":true}}}`, `{"in":1}`)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d events, want 2", len(got))
	}
	for i, want := range []string{"RUNNING", "SUCCEEDED"} {
		ev := got[i]
		d := ev["detail"].(map[string]any)
		if ev["detail-type"] != sfnengine.StatusChangeDetailType || ev["source"] != "aws.states" || d["status"] != want ||
			d["executionArn"] != rec.Arn || d["input"] != `{"in":1}` {
			t.Fatalf("event %d = %v", i, ev)
		}
		if res := ev["resources"].([]any); len(res) != 1 || res[0] != rec.Arn {
			t.Fatalf("resources = %v", res)
		}
	}
	d := got[1]["detail"].(map[string]any)
	if d["output"] != `{"ok":1}` || d["stopDate"] == nil {
		t.Fatalf("SUCCEEDED detail = %v", d)
	}
}

// TestPublishesFiltersStatusChangeEvents: with Options.Publishes, only the events it wants are built and sent, and it
// is asked with the execution's state machine and status.
func TestPublishesFiltersStatusChangeEvents(t *testing.T) {
	var mu sync.Mutex
	var asked, got []string
	eng := newEngine(t, sfnengine.Options{
		Subscribers: []sfnengine.Subscriber{func(_ context.Context, ev []byte) {
			var m struct{ Detail struct{ Status string } }
			if err := json.Unmarshal(ev, &m); err != nil {
				t.Errorf("event is not JSON: %v", err)
			}
			mu.Lock()
			got = append(got, m.Detail.Status)
			mu.Unlock()
		}},
		Publishes: func(sm, status string) bool {
			mu.Lock()
			asked = append(asked, sm+" "+status)
			mu.Unlock()
			return status != "RUNNING"
		},
	})
	rec := run(t, eng, `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E"}}}`, `{}`)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{rec.StateMachineArn + " RUNNING", rec.StateMachineArn + " FAILED"}; !slices.Equal(asked, want) {
		t.Errorf("Publishes asked %q, want %q", asked, want)
	}
	if !slices.Equal(got, []string{"FAILED"}) {
		t.Errorf("events published for %q, want only FAILED", got)
	}
}

func TestSubstituteDefinition(t *testing.T) {
	def := `{"F":"${DebitFunctionArn}","T":"${TableName}","U":"${Unknown}"}`
	got := sfnengine.SubstituteDefinition(def, map[string]string{"DebitFunctionArn": "arn:aws:lambda:us-east-1:1:function:debit", "TableName": `a"b`})
	want := `{"F":"arn:aws:lambda:us-east-1:1:function:debit","T":"a\"b","U":"${Unknown}"}`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// sagaEngine returns an engine whose lambdas answer by leg and whose DynamoDB is the given client.
func sagaDefinition(t testing.TB, table string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "saga.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	return sfnengine.SubstituteDefinition(string(b), map[string]string{
		"DebitFunctionArn": "debit", "CreditFunctionArn": "credit", "TableName": table})
}

// startDynamo starts Dynoxide with a "transfers" table keyed by pk; without Dynoxide the test is skipped (or fails
// under CI=true).
func startDynamo(t *testing.T) *dynamodb.Client {
	t.Helper()
	if _, err := ddbserver.BinaryPath(); errors.Is(err, ddbserver.ErrBinaryNotFound) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dynoxide is required under CI: %v", err)
		}
		t.Skip("dynoxide not installed; run `make test` to install it")
	}
	srv, err := ddbserver.Start(context.Background(), ddbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ddb := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: staticCreds{}})
	_, err = ddb.CreateTable(context.Background(), &dynamodb.CreateTableInput{TableName: aws.String("transfers"),
		KeySchema:            []dtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: dtypes.KeyTypeHash}},
		AttributeDefinitions: []dtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: dtypes.ScalarAttributeTypeS}},
		BillingMode:          dtypes.BillingModePayPerRequest})
	if err != nil {
		t.Fatal(err)
	}
	return ddb
}

func TestDynamoDBErrorsAreNamedLikeAWS(t *testing.T) {
	ddb := startDynamo(t)
	eng := newEngine(t, sfnengine.Options{DynamoDB: ddb})
	tests := []struct {
		name      string
		params    string
		wantError string
		wantCause string
	}{
		{
			name:      "failed condition",
			params:    `{"TableName":"transfers","Key":{"pk":{"S":"x"}},"UpdateExpression":"SET v = :v","ConditionExpression":"attribute_exists(pk)","ExpressionAttributeValues":{":v":{"N":"1"}}}`,
			wantError: "DynamoDB.ConditionalCheckFailedException",
			wantCause: "Error Code: ConditionalCheckFailedException",
		},
		{
			name:      "missing table",
			params:    `{"TableName":"nope","Key":{"pk":{"S":"x"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"N":"1"}}}`,
			wantError: "DynamoDB.ResourceNotFoundException",
			wantCause: "(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ResourceNotFoundException; Request ID: ",
		},
		{
			name:      "malformed attribute value",
			params:    `{"TableName":"transfers","Key":{"pk":{"Q":"x"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"N":"1"}}}`,
			wantError: "DynamoDB.AmazonDynamoDBException",
			wantCause: "unknown attribute type",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := `{"StartAt":"U","States":{"U":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:updateItem","Parameters":` + tt.params +
				`,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`
			rec := run(t, eng, def, `{}`)
			var out map[string]string
			if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
				t.Fatalf("output %s: %v", *rec.Output, err)
			}
			if out["Error"] != tt.wantError || !strings.Contains(out["Cause"], tt.wantCause) {
				t.Fatalf("caught %s / %s, want %s / …%s…", out["Error"], out["Cause"], tt.wantError, tt.wantCause)
			}
		})
	}
}

func TestSagaAgainstDynoxide(t *testing.T) {
	ddb := startDynamo(t)
	ctx := context.Background()
	tests := []struct {
		name       string
		creditErr  error
		wantStatus string
		wantError  string
		wantItem   bool
		golden     string
	}{
		{name: "happy path settles the record", wantStatus: sfnengine.StatusSucceeded, wantItem: true, golden: "saga_succeeded.golden.json"},
		{name: "failed credit is refunded", creditErr: &sfnengine.FunctionError{Type: "AccountNotFound", Message: "no such account"},
			wantStatus: sfnengine.StatusFailed, wantError: "CreditFailed", golden: "saga_refunded.golden.json"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var legs []string
			var mu sync.Mutex
			invoke := invokerFunc(func(_ context.Context, name string, payload []byte) ([]byte, error) {
				var p struct{ Leg string }
				_ = json.Unmarshal(payload, &p)
				mu.Lock()
				legs = append(legs, p.Leg)
				mu.Unlock()
				if name == "credit" && tt.creditErr != nil {
					return nil, tt.creditErr
				}
				return []byte(`{"leg":"` + p.Leg + `","ok":true}`), nil
			})
			ids := 0
			eng := newEngine(t, sfnengine.Options{Lambda: invoke, DynamoDB: ddb,
				Clock: sfnengine.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
				NewID: func() string { ids++; return "id-" + string(rune('a'+ids)) }})
			id := "t" + string(rune('1'+i))
			sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "saga", Definition: sagaDefinition(t, "transfers"), RoleArn: testRoleArn})
			if err != nil {
				t.Fatal(err)
			}
			rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: "exec-" + id, Input: `{"id":"` + id + `","amount":5}`})
			if err != nil {
				t.Fatal(err)
			}
			rec, err = waitHistory(ctx, eng, rec.Arn)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != tt.wantStatus || (tt.wantError != "" && *rec.Error != tt.wantError) {
				t.Fatalf("status %s error %v cause %v", rec.Status, rec.Error, rec.Cause)
			}
			item, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("transfers"), Key: map[string]dtypes.AttributeValue{"pk": &dtypes.AttributeValueMemberS{Value: id}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := item.Item != nil; got != tt.wantItem {
				t.Fatalf("item written = %v, want %v", got, tt.wantItem)
			}
			checkGolden(t, tt.golden, rec.History)
		})
	}
}

type staticCreds struct{}

func (staticCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "test"}, nil
}

// checkGolden compares the history with testdata/<name>, ignoring DynamoDB's per-response HTTP metadata.
func checkGolden(t *testing.T, name string, h []sfnengine.Event) {
	t.Helper()
	var events []any
	for _, e := range h {
		b, _ := json.Marshal(e)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		scrubMetadata(m)
		events = append(events, m)
	}
	got, _ := json.MarshalIndent(events, "", "  ")
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	var a, b any
	_ = json.Unmarshal(want, &a)
	_ = json.Unmarshal(got, &b)
	if !jsonEqual(a, b) {
		t.Fatalf("history differs from %s:\n%s", path, got)
	}
}

// scrubMetadata blanks the volatile SdkHttpMetadata/SdkResponseMetadata inside JSON text fields.
func scrubMetadata(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, x := range m {
		switch t := x.(type) {
		case string:
			if strings.Contains(t, "SdkHttpMetadata") {
				var inner map[string]any
				if json.Unmarshal([]byte(t), &inner) == nil {
					delete(inner, "SdkHttpMetadata")
					delete(inner, "SdkResponseMetadata")
					b, _ := json.Marshal(inner)
					m[k] = string(b)
				}
			}
		case map[string]any:
			scrubMetadata(t)
		}
	}
}

func TestParallelAndMapFailures(t *testing.T) {
	tests := []struct {
		name       string
		def        string
		input      string
		wantStatus string
		wantError  string
		wantOutput string
	}{
		{
			name: "a failing branch fails the Parallel state with its own error",
			def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
			  {"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":10,"End":true}}},
			  {"StartAt":"F","States":{"F":{"Type":"Fail","Error":"BranchBroke","Cause":"b2"}}}]}}}`,
			input: `{}`, wantStatus: sfnengine.StatusFailed, wantError: "BranchBroke",
		},
		{
			name: "Catch on Parallel receives the branch error",
			def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","Next":"S","ResultPath":"$.r","Catch":[{"ErrorEquals":["BranchBroke"],"ResultPath":"$.err","Next":"S"}],
			  "Branches":[{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"BranchBroke","Cause":"b"}}}]},"S":{"Type":"Succeed"}}}`,
			input: `{"in":1}`, wantStatus: sfnengine.StatusSucceeded, wantOutput: `{"in":1,"err":{"Error":"BranchBroke","Cause":"b"}}`,
		},
		{
			name: "concurrent Map stops at the first failing item",
			def: `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":0,"End":true,"ItemProcessor":{"StartAt":"C","States":{
			  "C":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":3,"Next":"Bad"}],"Default":"Ok"},
			  "Bad":{"Type":"Fail","Error":"ItemBroke"},"Ok":{"Type":"Pass","End":true}}}}}}`,
			input: `[1,2,3,4,5]`, wantStatus: sfnengine.StatusFailed, wantError: "ItemBroke",
		},
		{
			name: "Map keeps item order and applies ItemSelector with $$.Map.Item",
			def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","End":true,
			  "ItemSelector":{"i.$":"$$.Map.Item.Index","v.$":"$$.Map.Item.Value","k.$":"$.k"},
			  "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`,
			input: `{"xs":["a","b","c"],"k":0}`, wantStatus: sfnengine.StatusSucceeded,
			wantOutput: `[{"v":"a","i":0,"k":0},{"v":"b","i":1,"k":0},{"v":"c","i":2,"k":0}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, sfnengine.Options{Clock: sfnengine.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
			rec := run(t, eng, tt.def, tt.input)
			if rec.Status != tt.wantStatus {
				t.Fatalf("status %s (%v %v)", rec.Status, rec.Error, rec.Cause)
			}
			if tt.wantError != "" && *rec.Error != tt.wantError {
				t.Fatalf("error %s, want %s", *rec.Error, tt.wantError)
			}
			if tt.wantOutput != "" && *rec.Output != tt.wantOutput {
				t.Fatalf("output %s, want %s", *rec.Output, tt.wantOutput)
			}
		})
	}
}

func TestPanickingInvokerFailsOnlyTheTask(t *testing.T) {
	invoke := invokerFunc(func(context.Context, string, []byte) ([]byte, error) { panic("invoker bug") })
	eng := newEngine(t, sfnengine.Options{Lambda: invoke})
	rec := run(t, eng, lambdaTask, `{"x":1}`)
	if rec.Status != sfnengine.StatusSucceeded {
		t.Fatalf("status %s", rec.Status)
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(*rec.Output), &out)
	if out["Error"] != "States.TaskFailed" || !strings.Contains(out["Cause"].(string), "invoker bug") {
		t.Fatalf("caught %v", out)
	}
}

func TestFailedStatusEventCarriesErrorAndCause(t *testing.T) {
	events := make(chan []byte, 4)
	eng := newEngine(t, sfnengine.Options{Subscribers: []sfnengine.Subscriber{func(_ context.Context, ev []byte) { events <- ev }}})
	run(t, eng, `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"it broke"}}}`, `{}`)
	<-events // RUNNING
	var ev struct {
		Detail struct {
			Status, Error, Cause string
			Output               *string
			StopDate             *int64
		}
	}
	if err := json.Unmarshal(<-events, &ev); err != nil {
		t.Fatal(err)
	}
	d := ev.Detail
	if d.Status != "FAILED" || d.Error != "Boom" || d.Cause != "it broke" || d.Output != nil || d.StopDate == nil {
		t.Fatalf("FAILED detail = %+v", d)
	}
}

// TestDynamoDBWireCodesBecomeJavaExceptionNames: the optimized integration names an error after the AWS SDK for Java
// exception class its wire code maps to, which is not always the wire code, and names codes without a class (such as
// on-demand throttling's ThrottlingException) DynamoDB.AmazonDynamoDBException. A server answers each code here.
func TestDynamoDBWireCodesBecomeJavaExceptionNames(t *testing.T) {
	tests := []struct {
		code      string
		status    int
		wantError string
	}{
		{"InternalServerError", http.StatusInternalServerError, "DynamoDB.InternalServerErrorException"},
		{"RequestLimitExceeded", http.StatusBadRequest, "DynamoDB.RequestLimitExceededException"},
		{"ProvisionedThroughputExceededException", http.StatusBadRequest, "DynamoDB.ProvisionedThroughputExceededException"},
		{"TransactionConflictException", http.StatusBadRequest, "DynamoDB.TransactionConflictException"},
		{"ThrottlingException", http.StatusBadRequest, "DynamoDB.AmazonDynamoDBException"},
		{"ValidationException", http.StatusBadRequest, "DynamoDB.AmazonDynamoDBException"},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(tt.status)
				fmt.Fprintf(w, `{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"injected"}`, tt.code)
			}))
			defer srv.Close()
			ddb := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: staticCreds{},
				RetryMaxAttempts: 1})
			eng := newEngine(t, sfnengine.Options{DynamoDB: ddb})
			def := `{"StartAt":"U","States":{"U":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:updateItem","Parameters":` +
				`{"TableName":"t","Key":{"pk":{"S":"x"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"N":"1"}}}` +
				`,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`
			rec := run(t, eng, def, `{}`)
			var out map[string]string
			if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
				t.Fatalf("output %s: %v", *rec.Output, err)
			}
			if out["Error"] != tt.wantError || !strings.Contains(out["Cause"], "Error Code: "+tt.code+";") {
				t.Fatalf("caught %s / %s, want %s", out["Error"], out["Cause"], tt.wantError)
			}
			if !slices.Contains(sfnengine.DynamoDBErrorNames(), tt.wantError) {
				t.Errorf("%s is missing from DynamoDBErrorNames", tt.wantError)
			}
		})
	}
}

// waitHistory waits for the execution like Engine.Wait and returns its record with its History.
func waitHistory(ctx context.Context, eng *sfnengine.Engine, arn string) (*sfnengine.ExecutionRecord, error) {
	rec, err := eng.Wait(ctx, arn)
	if err != nil {
		return nil, err
	}
	rec.History, err = eng.History(ctx, arn)
	return rec, err
}
