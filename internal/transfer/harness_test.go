package transfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/internal/clocktest"
	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
	"github.com/transferflow/orchestrator/internal/metrics/metricstest"
	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/internal/transfer"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

const testStateMachineArn = "arn:aws:states:us-east-1:123456789012:stateMachine:Transfer"

// sfnFault is what the fake Step Functions does with one StartExecution call.
type sfnFault int

const (
	sfnOK sfnFault = iota
	// sfnDrop closes the connection before the call reaches the service: nothing is created.
	sfnDrop
	// sfnLoseReply creates the execution, then closes the connection instead of answering.
	sfnLoseReply
	// sfnHang never answers; the caller's deadline ends the call. Nothing is created.
	sfnHang
	// sfnThrottle answers ThrottlingException.
	sfnThrottle
)

// fakeSFN speaks the Step Functions JSON protocol for StartExecution with Standard-workflow naming rules: the same
// name and input return the existing execution, the same name with another input is ExecutionAlreadyExists. Faults
// are chosen per call. It stands in for Step Functions only where faults must be injected on the wire.
type fakeSFN struct {
	mu         sync.Mutex
	executions map[string]string // name → input
	created    atomic.Int64
	calls      atomic.Int64
	fault      func(call int64) sfnFault
	srv        *httptest.Server
}

func startFakeSFN(t *testing.T) *fakeSFN {
	t.Helper()
	f := &fakeSFN{executions: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSFN) setFault(fn func(call int64) sfnFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fn
}

func (f *fakeSFN) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Header.Get("X-Amz-Target") {
	case "AWSStepFunctions.StartExecution":
	case "AWSStepFunctions.GetExecutionHistory":
		f.serveHistory(w, r)
		return
	default:
		writeSFNError(w, "UnknownOperationException", "only StartExecution and GetExecutionHistory are served")
		return
	}
	var in struct{ StateMachineArn, Name, Input string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeSFNError(w, "ValidationException", err.Error())
		return
	}
	call := f.calls.Add(1)
	f.mu.Lock()
	fault := sfnOK
	if f.fault != nil {
		fault = f.fault(call)
	}
	f.mu.Unlock()
	switch fault {
	case sfnDrop:
		hangUp(w)
		return
	case sfnHang:
		<-r.Context().Done()
		return
	case sfnThrottle:
		writeSFNError(w, "ThrottlingException", "Rate exceeded")
		return
	}
	f.mu.Lock()
	prev, exists := f.executions[in.Name]
	if !exists {
		f.executions[in.Name] = in.Input
		f.created.Add(1)
	}
	f.mu.Unlock()
	if exists && prev != in.Input {
		writeSFNError(w, "ExecutionAlreadyExists", "Execution Already Exists: '"+in.Name+"'")
		return
	}
	if fault == sfnLoseReply {
		hangUp(w)
		return
	}
	arn := transfer.ExecutionArn(in.StateMachineArn, in.Name)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	fmt.Fprintf(w, `{"executionArn":%q,"startDate":%d}`, arn, time.Now().Unix())
}

// serveHistory answers GetExecutionHistory for an execution this fake created, from testdata/history-page*.json:
// the first page without a token, the second with the first page's nextToken.
func (f *fakeSFN) serveHistory(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		NextToken    string `json:"nextToken"`
		MaxResults   int    `json:"maxResults"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeSFNError(w, "ValidationException", err.Error())
		return
	}
	name := in.ExecutionArn[strings.LastIndex(in.ExecutionArn, ":")+1:]
	if f.input(name) == "" {
		writeSFNError(w, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+in.ExecutionArn+"'")
		return
	}
	page := "testdata/history-page1.json"
	switch in.NextToken {
	case "":
	case "page-2":
		page = "testdata/history-page2.json"
	default:
		writeSFNError(w, "InvalidToken", "Invalid Token: '"+in.NextToken+"'")
		return
	}
	b, err := os.ReadFile(page)
	if err != nil {
		writeSFNError(w, "InternalError", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = w.Write(b)
}

func (f *fakeSFN) input(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.executions[name]
}

func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func writeSFNError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `{"__type":%q,"message":%q}`, code, msg)
}

// wire is an http.RoundTripper in front of Dynoxide that counts requests and can answer instead of the server, or
// lose the server's reply.
type wire struct {
	requests  atomic.Int64
	mu        sync.Mutex
	intercept func(target string) *http.Response
	// lose names an X-Amz-Target whose next request reaches the server and commits there, but whose reply is lost on
	// the way back: the caller sees a reset connection. lost counts such replies.
	lose string
	lost int
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	w.requests.Add(1)
	w.mu.Lock()
	icpt := w.intercept
	lose := w.lose != "" && r.Header.Get("X-Amz-Target") == w.lose
	if lose {
		w.lose = ""
		w.lost++
	}
	w.mu.Unlock()
	if lose {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, errors.New("read tcp: connection reset by peer")
	}
	if icpt != nil {
		if resp := icpt(r.Header.Get("X-Amz-Target")); resp != nil {
			resp.Request = r
			return resp, nil
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// loseNextReply makes the next request for target commit on the server and lose its reply.
func (w *wire) loseNextReply(target string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lose = target
}

func (w *wire) lostReplies() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost
}

func (w *wire) setIntercept(fn func(target string) *http.Response) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.intercept = fn
}

// throttled is DynamoDB's answer to a request over the table's throughput.
func throttled() *http.Response {
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}`
	return &http.Response{
		StatusCode: http.StatusBadRequest,
		Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:       io.NopCloser(strings.NewReader(body)),
	}
}

type harness struct {
	t     *testing.T
	db    *dynamodb.Client
	table string
	wire  *wire
	sfn   *fakeSFN
	clock *clocktest.Clock
	h     *transfer.Orchestrator
	logs  *bytes.Buffer
	// metrics has the handler's EMF lines, stamped by the harness clock.
	metrics *metricstest.Buffer
}

type harnessOption func(*dynamodb.Options, *sfn.Options)

// withoutRetries makes the SDK clients give up after one attempt, so a fault reaches the handler at once.
func withoutRetries(d *dynamodb.Options, s *sfn.Options) {
	d.RetryMaxAttempts = 1
	s.RetryMaxAttempts = 1
}

func newHarness(t *testing.T, opts ...harnessOption) *harness {
	t.Helper()
	return newHarnessEnv(t, nil, opts...)
}

// newHarnessEnv is newHarness with the function's environment given these variables besides TABLE_NAME and
// STATE_MACHINE_ARN.
func newHarnessEnv(t *testing.T, extra map[string]string, opts ...harnessOption) *harness {
	t.Helper()
	srv, tables := ddbserver.StartWithTablesT(t)
	h := &harness{t: t, table: tables["TransfersTable"], wire: &wire{}, sfn: startFakeSFN(t),
		clock: clocktest.New(time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC)), logs: &bytes.Buffer{}, metrics: &metricstest.Buffer{}}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	h.db = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.HTTPClient = &http.Client{Transport: h.wire}
		for _, opt := range opts {
			opt(o, &sfn.Options{})
		}
	})
	sfnClient := sfn.NewFromConfig(cfg, func(o *sfn.Options) {
		o.BaseEndpoint = aws.String(h.sfn.srv.URL)
		for _, opt := range opts {
			opt(&dynamodb.Options{}, o)
		}
	})
	env := map[string]string{"TABLE_NAME": h.table, "STATE_MACHINE_ARN": testStateMachineArn}
	for k, v := range extra {
		env[k] = v
	}
	c, err := transfer.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// The handler is wired as in production, then given this test's clients and clock.
	h.h = transfer.NewOrchestratorHandler(cfg, c, slog.New(slog.NewJSONHandler(syncio.NewWriter(h.logs), nil)))
	h.h.Store = ledger.NewStore(h.db, h.table)
	h.h.SFN = sfnClient
	h.h.History = sfnClient
	h.h.Legs = h.h.Store.(*ledger.Store)
	h.h.Accounts = h.h.Store.(*ledger.Store)
	h.h.Openings = h.h.Store.(*ledger.Store)
	h.h.Owners = h.h.Store.(*ledger.Store)
	h.h.Activity = h.h.Store.(*ledger.Store)
	h.h.Now = h.clock.Now
	emitter := metrics.New(h.metrics, testMetricsNamespace)
	emitter.Now = h.clock.Now
	h.h.Metrics = emitter
	return h
}

const testMetricsNamespace = "TransferOrchestrator/test"

const aliceToBob = `{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR","reference":"invoice 2026-118"}`

// post submits body with the Idempotency-Key key (omitted when empty) as the anonymous caller.
func (h *harness) post(key, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.postJSON("/transfers", key, body)
}

// postJSON sends the JSON body to the POST route path (a path without parameters) with the Idempotency-Key key
// (omitted when empty) as the anonymous caller.
func (h *harness) postJSON(path, key, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	req := events.APIGatewayProxyRequest{
		Resource: path, Path: path, HTTPMethod: http.MethodPost,
		Headers: map[string]string{"Content-Type": "application/json"},
		Body:    body,
	}
	if key != "" {
		req.Headers["Idempotency-Key"] = key
	}
	return h.do(req)
}

func (h *harness) get(id string, scopeArn string) events.APIGatewayProxyResponse {
	h.t.Helper()
	req := events.APIGatewayProxyRequest{
		Resource: "/transfers/{transferId}", Path: "/transfers/" + id, HTTPMethod: http.MethodGet,
		PathParameters: map[string]string{"transferId": id},
	}
	req.RequestContext.Identity.UserArn = scopeArn
	return h.do(req)
}

func (h *harness) do(req events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	h.t.Helper()
	resp, err := h.h.Handle(context.Background(), req)
	if err != nil {
		h.t.Fatalf("Handle returned an error: %v", err)
	}
	return resp
}

// items counts the items in the table.
func (h *harness) items() int {
	h.t.Helper()
	out, err := h.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(h.table), Select: "COUNT"})
	if err != nil {
		h.t.Fatal(err)
	}
	return int(out.Count)
}

// records reads every transfer record in the table.
func (h *harness) records() []ledger.Transfer {
	h.t.Helper()
	out, err := h.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(h.table)})
	if err != nil {
		h.t.Fatal(err)
	}
	var recs []ledger.Transfer
	for _, item := range out.Items {
		if sk, ok := item["sk"].(*ddbtypes.AttributeValueMemberS); ok && sk.Value == "TRANSFER" {
			var r ledger.Transfer
			if err := attributevalue.UnmarshalMap(item, &r); err != nil {
				h.t.Fatal(err)
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// decode unmarshals a response body into v.
func decode(t *testing.T, resp events.APIGatewayProxyResponse, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(resp.Body), v); err != nil {
		t.Fatalf("decode %q: %v", resp.Body, err)
	}
}

// wantReplay fails the test at once unless resp is an answer with status from an earlier request with the same key
// (Idempotent-Replayed), and returns the transfer it shows.
func wantReplay(t *testing.T, resp events.APIGatewayProxyResponse, status int) transfer.Resource {
	t.Helper()
	if resp.StatusCode != status || resp.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("status %d, headers %v, body %s; want a %d replay", resp.StatusCode, resp.Headers, resp.Body, status)
	}
	var got transfer.Resource
	decode(t, resp, &got)
	return got
}

type problemBody struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
	Errors []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

func wantProblem(t *testing.T, resp events.APIGatewayProxyResponse, status int, code string) problemBody {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status = %d, want %d (body %s)", resp.StatusCode, status, resp.Body)
	}
	if ct := resp.Headers["Content-Type"]; ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json", ct)
	}
	var p problemBody
	decode(t, resp, &p)
	if p.Code != code || p.Status != status || p.Type == "" || p.Title == "" || p.Detail == "" {
		t.Fatalf("problem = %+v, want code %s with type, title, status and detail", p, code)
	}
	return p
}
