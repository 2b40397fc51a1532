package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/transferclient"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

const machineArn = "arn:aws:states:us-east-1:000000000000:stateMachine:TransferStateMachine"

// fakeSFN holds executions newest first and counts the calls.
type fakeSFN struct {
	executions []types.ExecutionListItem
	lists      atomic.Int64
	maxResults []int32
	mu         sync.Mutex
}

func (f *fakeSFN) ListStateMachines(context.Context, *sfn.ListStateMachinesInput, ...func(*sfn.Options)) (*sfn.ListStateMachinesOutput, error) {
	return &sfn.ListStateMachinesOutput{StateMachines: []types.StateMachineListItem{{Name: aws.String("TransferStateMachine"), StateMachineArn: aws.String(machineArn)}}}, nil
}

func (f *fakeSFN) ListExecutions(_ context.Context, in *sfn.ListExecutionsInput, _ ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error) {
	f.lists.Add(1)
	f.mu.Lock()
	f.maxResults = append(f.maxResults, in.MaxResults)
	f.mu.Unlock()
	start := 0
	if in.NextToken != nil {
		start, _ = strconv.Atoi(*in.NextToken)
	}
	end := min(start+int(in.MaxResults), len(f.executions))
	out := &sfn.ListExecutionsOutput{Executions: f.executions[start:end]}
	if end < len(f.executions) {
		out.NextToken = aws.String(strconv.Itoa(end))
	}
	return out, nil
}

func (f *fakeSFN) DescribeExecution(context.Context, *sfn.DescribeExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	return nil, fmt.Errorf("not in this fake")
}

func (f *fakeSFN) DescribeStateMachineForExecution(context.Context, *sfn.DescribeStateMachineForExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeStateMachineForExecutionOutput, error) {
	return nil, fmt.Errorf("not in this fake")
}

func (f *fakeSFN) GetExecutionHistory(context.Context, *sfn.GetExecutionHistoryInput, ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	return nil, fmt.Errorf("not in this fake")
}

// fakeAPI answers every transfer as COMPLETED and counts the reads.
type fakeAPI struct {
	gets      atomic.Int64
	reference string
}

func (f *fakeAPI) Get(_ context.Context, id string) (transferclient.Transfer, error) {
	f.gets.Add(1)
	t := transferclient.Transfer{TransferID: id, Status: "COMPLETED", SourceAccountID: "acc-a", DestinationAccountID: "acc-b",
		Amount: 1250, Currency: "EUR", Reference: f.reference, ExecutionArn: "arn:aws:states:us-east-1:000000000000:execution:TransferStateMachine:" + id}
	t.Raw, _ = json.Marshal(t)
	return t, nil
}

func (f *fakeAPI) History(_ context.Context, id string) (transferclient.History, error) {
	return transferclient.History{TransferID: id}, nil
}

func (f *fakeAPI) Account(context.Context, string) (transferclient.Account, error) {
	return transferclient.Account{}, &transferclient.APIError{Status: 404, Code: "ACCOUNT_NOT_FOUND"}
}

func (f *fakeAPI) AccountTransfers(context.Context, string, int, string) (transferclient.AccountTransfers, error) {
	return transferclient.AccountTransfers{}, nil
}

func transferID(i int) string { return fmt.Sprintf("tr_%042d", i) }

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1:8085"
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// countingSFN counts the listings a page makes, and their page sizes, on the real Step Functions API.
type countingSFN struct {
	stepFunctions
	lists      atomic.Int64
	maxResults []int32
	mu         sync.Mutex
}

func (c *countingSFN) ListExecutions(ctx context.Context, in *sfn.ListExecutionsInput, opts ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error) {
	c.lists.Add(1)
	c.mu.Lock()
	c.maxResults = append(c.maxResults, in.MaxResults)
	c.mu.Unlock()
	return c.stepFunctions.ListExecutions(ctx, in, opts...)
}

// TestListingPagesTenThousandTransfers: with 10,000 executions of the workflow on the local Step Functions, a page
// reads one page of executions (25) and the 25 transfers on it, and its next link reads the next 25, never the whole
// listing.
func TestListingPagesTenThousandTransfers(t *testing.T) {
	server := stepfunctions.RunT(t)
	client := server.Client()
	ctx := context.Background()
	sm, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("TransferStateMachine"),
		RoleArn:    aws.String("arn:aws:iam::123456789012:role/states"),
		Definition: aws.String(`{"StartAt":"Done","States":{"Done":{"Type":"Pass","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Started through the engine rather than 10,000 API requests: the listing, not the starting, is under test.
	for i := range 10_000 {
		if _, err := server.Engine().StartExecution(ctx, sfnengine.StartInput{StateMachineArn: *sm.StateMachineArn, Name: transferID(i)}); err != nil {
			t.Fatal(err)
		}
	}
	f := &countingSFN{stepFunctions: client}
	api := &fakeAPI{}
	s, err := New(Config{API: api, SFN: f})
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, s, "/transfers")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if n := strings.Count(body, `<tr data-transfer="`); n != pageSize {
		t.Errorf("rows = %d, want %d", n, pageSize)
	}
	if f.lists.Load() != 1 || f.maxResults[0] != pageSize || api.gets.Load() != pageSize {
		t.Errorf("ListExecutions calls = %d (MaxResults %v), transfer reads = %d; want 1 (25) and 25", f.lists.Load(), f.maxResults, api.gets.Load())
	}
	first := rowIDs(body)
	i := strings.Index(body, `rel="next"`)
	j := strings.LastIndex(body[:max(i, 0)], `href="`)
	if i < 0 || j < 0 {
		t.Fatal("no next link")
	}
	link := body[j+len(`href="`):]
	link = strings.ReplaceAll(link[:strings.Index(link, `"`)], "&amp;", "&")
	code, body = get(t, s, link)
	second := rowIDs(body)
	if code != http.StatusOK || len(second) != pageSize {
		t.Fatalf("next page %s: status %d, %d rows", link, code, len(second))
	}
	for _, id := range second {
		if slices.Contains(first, id) {
			t.Errorf("%s is on both pages", id)
		}
	}
	if f.lists.Load() != 2 || api.gets.Load() != 2*pageSize {
		t.Errorf("after two pages: %d listings, %d reads; want 2 and 50", f.lists.Load(), api.gets.Load())
	}
	// The first page again, as its live refresh asks for it: its transfers have settled, so none is read again.
	if code, body = get(t, s, "/transfers"); code != http.StatusOK || len(rowIDs(body)) != pageSize || api.gets.Load() != 2*pageSize {
		t.Errorf("the first page again: status %d, %d rows, %d reads in all; want 25 rows and still 50 reads", code, len(rowIDs(body)), api.gets.Load())
	}
}

// rowIDs are the transfer ids of a listing page's rows, in order.
func rowIDs(body string) []string {
	var ids []string
	for _, part := range strings.Split(body, `<tr data-transfer="`)[1:] {
		ids = append(ids, part[:strings.Index(part, `"`)])
	}
	return ids
}

// TestTransfersFilters: a time window stops the listing at the first older execution; an unknown status is a 400.
func TestTransfersFilters(t *testing.T) {
	f := &fakeSFN{}
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for i := range 100 {
		at := start.Add(-time.Duration(i) * time.Minute)
		f.executions = append(f.executions, types.ExecutionListItem{Name: aws.String(transferID(i)), StartDate: &at, Status: types.ExecutionStatusSucceeded})
	}
	s, err := New(Config{API: &fakeAPI{}, SFN: f, StateMachineArn: machineArn})
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"from": {"2026-11-29T09:55"}, "to": {"2026-11-29T09:58"}}
	code, body := get(t, s, "/transfers?"+q.Encode())
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	// 09:58, 09:57, 09:56, 09:55: executions 2 to 5.
	if n := strings.Count(body, `<tr data-transfer="`); n != 4 || !strings.Contains(body, transferID(2)) || !strings.Contains(body, transferID(5)) {
		t.Errorf("rows = %d, want executions 2 to 5", n)
	}
	if strings.Contains(body, `rel="next"`) {
		t.Error("a next link past the window's start")
	}
	for _, bad := range []string{"status=DONE", "workflow=OK", "from=yesterday"} {
		if code, _ := get(t, s, "/transfers?"+bad); code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, code)
		}
	}
}

// TestPagesEscape: what the API answers is text on the page, never markup.
func TestPagesEscape(t *testing.T) {
	s, err := New(Config{API: &fakeAPI{reference: `<script>alert(1)</script>`}})
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, s, "/transfers/"+transferID(1))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the reference is not escaped")
	}
	if !strings.Contains(body, "No drawing: no Step Functions client") {
		t.Error("without a Step Functions client the page does not say why there is no drawing")
	}
}

// TestSecurityHeaders: pages cannot be framed and load only the console's own script and styles.
func TestSecurityHeaders(t *testing.T) {
	s, err := New(Config{API: &fakeAPI{}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/accounts", nil)
	req.Host = "localhost:8085"
	s.ServeHTTP(rec, req)
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "script-src 'unsafe-inline'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if code, body := get(t, s, "/assets/console.js"); code != http.StatusOK || !strings.Contains(body, "X-Console-Fragment") {
		t.Errorf("console.js: %d", code)
	}
}

func ev(id int64, typ, state, errName string) event {
	return event{ID: id, Type: typ, State: state, Error: errName, Time: time.Unix(1_800_000_000+id, 0)}
}

// TestWalk reads the path, retries, caught errors and the current state from histories of the transfer workflow.
func TestWalk(t *testing.T) {
	completed := []event{ev(1, "ExecutionStarted", "", ""), ev(2, "TaskStateEntered", "Debit", ""), ev(3, "TaskScheduled", "", ""),
		ev(4, "TaskFailed", "", "TransientError"), ev(5, "TaskScheduled", "", ""), ev(6, "TaskSucceeded", "", ""),
		ev(7, "TaskStateExited", "Debit", ""), ev(8, "TaskStateEntered", "Credit", ""), ev(9, "TaskScheduled", "", ""),
		ev(10, "TaskSucceeded", "", ""), ev(11, "TaskStateExited", "Credit", ""), ev(12, "ExecutionSucceeded", "", "")}
	p := walk(completed)
	if !p.Visited["Debit"] || !p.Visited["Credit"] || !p.Edges[[2]string{"Debit", "Credit"}] || p.Current != "" {
		t.Errorf("completed: %+v", p)
	}
	if p.Retried["Debit"] != 1 || len(p.Caught) != 0 || strings.Join(p.Order, ",") != "Debit,Credit" {
		t.Errorf("completed: retried %v, caught %v, order %v; want Debit retried once, nothing caught", p.Retried, p.Caught, p.Order)
	}

	caught := []event{ev(1, "ExecutionStarted", "", ""), ev(2, "TaskStateEntered", "Debit", ""), ev(3, "TaskScheduled", "", ""),
		ev(4, "TaskFailed", "", "InsufficientFunds"), ev(5, "TaskStateExited", "Debit", ""), ev(6, "PassStateEntered", "InsufficientFunds", ""),
		ev(7, "PassStateExited", "InsufficientFunds", ""), ev(8, "TaskStateEntered", "MarkFailed", "")}
	p = walk(caught)
	if p.Caught["Debit"] != "InsufficientFunds" || !p.Edges[[2]string{"Debit", "InsufficientFunds"}] || p.Retried["Debit"] != 0 {
		t.Errorf("caught: %+v", p)
	}
	if p.Current != "MarkFailed" {
		t.Errorf("current = %q, want MarkFailed (entered, not exited, execution running)", p.Current)
	}

	timedOut := append(completed[:8:8], ev(9, "TaskScheduled", "", ""), ev(10, "ExecutionTimedOut", "", "States.Timeout"))
	p = walk(timedOut)
	if p.Current != "" || p.Failed != "" {
		t.Errorf("timed out: current %q failed %q; want neither (the execution ended, it did not fail in a state)", p.Current, p.Failed)
	}
	failed := append(completed[:8:8], ev(9, "TaskScheduled", "", ""), ev(10, "TaskFailed", "", "Boom"), ev(11, "ExecutionFailed", "", "Boom"))
	if p = walk(failed); p.Failed != "Credit" {
		t.Errorf("failed in = %q, want Credit", p.Failed)
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{1250, "EUR", "12.50 EUR"}, {5, "EUR", "0.05 EUR"}, {0, "USD", "0.00 USD"}, {-1250, "EUR", "−12.50 EUR"},
		{1250, "JPY", "1250 JPY"}, {1250, "KWD", "1.250 KWD"}, {-9223372036854775808, "EUR", "−92233720368547758.08 EUR"},
	} {
		if got := money(tc.minor, tc.currency); got != tc.want {
			t.Errorf("money(%d, %s) = %q, want %q", tc.minor, tc.currency, got, tc.want)
		}
	}
}

func TestAWSConsoleURL(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:states:eu-west-1:123456789013:execution:Transfer:tr_1": "https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1#/v2/executions/details/arn:aws:states:eu-west-1:123456789013:execution:Transfer:tr_1",
		"arn:aws:states:us-east-1:000000000000:execution:Transfer:tr_1": "", // the local stack's account
		"arn:aws:states:local:111111111111:execution:Transfer:tr_1":     "", // not a region
		"arn:aws:states:eu-west-1:123456789013:stateMachine:Transfer":   "", // not an execution
		"": "",
	} {
		if got := awsConsoleURL(arn); got != want {
			t.Errorf("awsConsoleURL(%q) = %q, want %q", arn, got, want)
		}
	}
}

// TestRefusesOtherHostNames: a request that names the console by another host name (a DNS rebinding page's) is
// refused before anything is read; an IP address or localhost is served.
func TestRefusesOtherHostNames(t *testing.T) {
	api := &fakeAPI{}
	s, err := New(Config{API: api})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{
		"127.0.0.1:8085": 200, "localhost:8085": 200, "[::1]:8085": 200, "10.0.0.7:8085": 200, "app.localhost": 200,
		"attacker.example:8085": http.StatusMisdirectedRequest, "localhost.attacker.example": http.StatusMisdirectedRequest, "": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest(http.MethodGet, "/transfers/"+transferID(1), nil)
		req.Host = host
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: status %d, want %d", host, rec.Code, want)
		}
	}
	if n := api.gets.Load(); n != 5 {
		t.Errorf("%d transfer reads, want 5 (one per served request, none for a refused one)", n)
	}
}

// TestEventsFromBothSources: an event reads the same from the SDK's types (the Step Functions API) as from the
// service's JSON (the transfer API's history).
func TestEventsFromBothSources(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	sdk := []types.HistoryEvent{
		{Id: 2, PreviousEventId: 1, Timestamp: &at, Type: types.HistoryEventTypeTaskStateEntered,
			StateEnteredEventDetails: &types.StateEnteredEventDetails{Name: aws.String("Debit"), Input: aws.String(`{"a":1}`)}},
		{Id: 3, PreviousEventId: 2, Timestamp: &at, Type: types.HistoryEventTypeTaskFailed,
			TaskFailedEventDetails: &types.TaskFailedEventDetails{Error: aws.String("InsufficientFunds"), Cause: aws.String("no money"), Resource: aws.String("invoke"), ResourceType: aws.String("lambda")}},
		{Id: 4, PreviousEventId: 3, Timestamp: &at, Type: types.HistoryEventTypeTaskStateExited,
			StateExitedEventDetails: &types.StateExitedEventDetails{Name: aws.String("Debit"), Output: aws.String(`{"b":2}`)}},
	}
	wire := `[{"id":2,"previousEventId":1,"timestamp":1795946400,"type":"TaskStateEntered","stateEnteredEventDetails":{"name":"Debit","input":"{\"a\":1}"}},
		{"id":3,"previousEventId":2,"timestamp":1795946400,"type":"TaskFailed","taskFailedEventDetails":{"error":"InsufficientFunds","cause":"no money","resource":"invoke","resourceType":"lambda"}},
		{"id":4,"previousEventId":3,"timestamp":1795946400,"type":"TaskStateExited","stateExitedEventDetails":{"name":"Debit","output":"{\"b\":2}"}}]`
	var api []transferclient.Event
	if err := json.Unmarshal([]byte(wire), &api); err != nil {
		t.Fatal(err)
	}
	a, b := fromSFN(sdk), fromAPI(api)
	for i := range a {
		if !a[i].Time.Equal(b[i].Time) {
			t.Errorf("event %d: times %v and %v", i, a[i].Time, b[i].Time)
		}
		a[i].Time, b[i].Time = time.Time{}, time.Time{}
	}
	want := []event{{ID: 2, Prev: 1, Type: "TaskStateEntered", State: "Debit", Input: `{"a":1}`},
		{ID: 3, Prev: 2, Type: "TaskFailed", Error: "InsufficientFunds", Cause: "no money"},
		{ID: 4, Prev: 3, Type: "TaskStateExited", State: "Debit", Output: `{"b":2}`}}
	if !slices.Equal(a, want) || !slices.Equal(b, want) {
		t.Errorf("from the SDK:\n%+v\nfrom the API:\n%+v\nwant:\n%+v", a, b, want)
	}
}
