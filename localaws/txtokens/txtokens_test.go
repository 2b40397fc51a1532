package txtokens

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// recorder is a Doer that remembers the bodies of the TransactWriteItems it sent.
type recorder struct {
	base Doer
	mu   sync.Mutex
	sent [][]byte
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	if req.Header.Get("X-Amz-Target") == target {
		b, _ := io.ReadAll(req.Body)
		if int64(len(b)) != req.ContentLength {
			return nil, fmt.Errorf("recorder: a body of %d bytes sent with Content-Length %d", len(b), req.ContentLength)
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.sent = append(r.sent, b)
		r.mu.Unlock()
	}
	return r.base.Do(req)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent)
}

// fakeClock returns a clock that stands still until advanced.
func fakeClock() (now func() time.Time, advance func(time.Duration)) {
	var offset atomic.Int64
	start := time.Unix(1_800_000_000, 0)
	return func() time.Time { return start.Add(time.Duration(offset.Load())) }, func(d time.Duration) { offset.Add(int64(d)) }
}

// fixture is a table on the test's DynamoDB server and a client whose HTTP client is a Client over a recorder.
type fixture struct {
	store   string
	db      *dynamodb.Client
	keep    *Client
	rec     *recorder
	advance func(time.Duration)
}

const table = "tokens"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := ddbserver.StartT(t)
	store, _ := ddbserver.TestStore()
	now, advance := fakeClock()
	f := &fixture{store: store, advance: advance}
	f.rec = &recorder{base: http.DefaultClient}
	f.keep = New(f.rec, time.Minute, now)
	f.db = dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), HTTPClient: f.keep,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), RetryMaxAttempts: 1,
	})
	ctx := context.Background()
	_, err := f.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	return f
}

// add is a transaction that adds n to the counter of item pk, under token (none when ""), with a condition that the
// counter stays below limit.
func add(pk string, n, limit int, token string) *dynamodb.TransactWriteItemsInput {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
		TableName:                 aws.String(table),
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
		UpdateExpression:          aws.String("ADD n :n SET touched = :t, a1 = :v1, a2 = :v2, a3 = :v3"),
		ConditionExpression:       aws.String("attribute_not_exists(n) OR n < :limit"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": num(n), ":limit": num(limit), ":t": &types.AttributeValueMemberBOOL{Value: true}, ":v1": num(1), ":v2": num(2), ":v3": num(3)},
	}}}}
	if token != "" {
		in.ClientRequestToken = aws.String(token)
	}
	return in
}

func num(n int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(n)} }

func (f *fixture) counter(t *testing.T, pk string) int {
	t.Helper()
	out, err := f.db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
	})
	if err != nil {
		t.Fatalf("get %s: %v", pk, err)
	}
	v, ok := out.Item["n"].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(v.Value)
	return n
}

// TestRepeatedTokenWritesOnce runs on both stores: a repeated token with the same items (its maps written in
// another order by the SDK, as a retry may be) is answered as the first call and writes nothing again; another
// token writes; the same token with other items is refused. Against Dynoxide the Client keeps the tokens and the
// server never sees one; against DynamoDB Local the server keeps them and the Client passes everything through.
func TestRepeatedTokenWritesOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 8 { // the SDK's random map order: eight calls give other orders with near certainty
		if _, err := f.db.TransactWriteItems(ctx, add("a", 1, 100, "token-a")); err != nil {
			t.Fatalf("call %d with token-a: %v", i+1, err)
		}
	}
	if got := f.counter(t, "a"); got != 1 {
		t.Fatalf("after 8 calls with one token the counter is %d, want 1", got)
	}
	if _, err := f.db.TransactWriteItems(ctx, add("a", 1, 100, "token-b")); err != nil {
		t.Fatalf("token-b: %v", err)
	}
	if got := f.counter(t, "a"); got != 2 {
		t.Fatalf("after another token the counter is %d, want 2", got)
	}
	_, err := f.db.TransactWriteItems(ctx, add("a", 5, 100, "token-a"))
	var mismatch *types.IdempotentParameterMismatchException
	if !errors.As(err, &mismatch) {
		t.Fatalf("token-a with other items: %v, want IdempotentParameterMismatchException", err)
	}
	if got := f.counter(t, "a"); got != 2 {
		t.Fatalf("after the refused call the counter is %d, want 2", got)
	}

	switch f.store {
	case ddbserver.Dynoxide:
		if !f.keep.Keeping() {
			t.Fatal("the Client does not keep the tokens of a Dynoxide server")
		}
		if n := f.rec.count(); n != 2 {
			t.Errorf("the server got %d transactions, want 2 (one per token; the repeats answered by the Client)", n)
		}
		for _, b := range f.rec.sent {
			if bytes.Contains(b, []byte("ClientRequestToken")) {
				t.Errorf("a transaction reached Dynoxide with its token: %s", b)
			}
		}
	default:
		if f.keep.Keeping() {
			t.Fatalf("the Client keeps tokens for %s, which keeps its own", f.store)
		}
		if n := f.rec.count(); n != 10 {
			t.Errorf("the server got %d transactions, want all 10", n)
		}
	}
}

// TestFailedCallIsNotKept: a transaction refused by its condition leaves nothing behind its token, so the same
// token runs it again once the condition holds (as DynamoDB, which keeps the token of a call that succeeded).
func TestFailedCallIsNotKept(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.db.TransactWriteItems(ctx, add("b", 3, 100, "")); err != nil {
		t.Fatal(err)
	}
	_, err := f.db.TransactWriteItems(ctx, add("b", 1, 3, "token-c"))
	var cancelled *types.TransactionCanceledException
	if !errors.As(err, &cancelled) {
		t.Fatalf("over the limit: %v, want TransactionCanceledException", err)
	}
	if _, err := f.db.TransactWriteItems(ctx, add("b", -3, 100, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.TransactWriteItems(ctx, add("b", 1, 3, "token-c")); err != nil {
		t.Fatalf("the same token once the condition holds: %v", err)
	}
	if got := f.counter(t, "b"); got != 1 {
		t.Fatalf("counter %d, want 1", got)
	}
}

// TestTokensLeaveAfterTheWindow: the Client's window (a minute here) bounds what it holds; a token used again after
// it is a new call, as DynamoDB treats one after its 10 minutes.
func TestTokensLeaveAfterTheWindow(t *testing.T) {
	f := newFixture(t)
	if f.store != ddbserver.Dynoxide {
		t.Skip("the window is the Client's, which keeps tokens only for Dynoxide")
	}
	ctx := context.Background()
	for i := range 50 {
		if _, err := f.db.TransactWriteItems(ctx, add("c", 1, 1000, "token-"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		f.advance(2 * time.Second)
	}
	// Call i finished at 2i s and it is now 100 s: calls 0 to 20 finished a minute ago or more and left; 29 remain.
	if n := f.keep.Kept(); n != 29 {
		t.Errorf("kept %d tokens, want 29", n)
	}
	if _, err := f.db.TransactWriteItems(ctx, add("c", 1, 1000, "token-0")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.TransactWriteItems(ctx, add("c", 1, 1000, "token-49")); err != nil {
		t.Fatal(err)
	}
	if got := f.counter(t, "c"); got != 51 {
		t.Errorf("counter %d, want 51: token-0 runs again after the window, token-49 within it does not", got)
	}
	f.advance(2 * time.Minute)
	if n := f.keep.Kept(); n != 0 {
		t.Errorf("kept %d tokens two minutes after the last call, want 0", n)
	}
}

// TestTokenInFlight: while a call is in flight, the same token is refused with TransactionInProgressException,
// as DynamoDB refuses it; the first call's answer is kept.
func TestTokenInFlight(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "Dynoxide/1.2.1")
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if r.Header.Get("X-Amz-Target") == target {
			calls++
			arrived <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()
	c := New(srv.Client(), time.Minute, nil)
	send := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"ClientRequestToken":"t","TransactItems":[{"Put":{"TableName":"x","Item":{"pk":{"S":"1"}}}}]}`))
		req.Header.Set("X-Amz-Target", target)
		return c.Do(req)
	}
	// Any answer from the server arms the Client.
	arm, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
	if resp, err := c.Do(arm); err != nil || !c.Keeping() {
		t.Fatalf("arming: %v, keeping %v", err, c.Keeping())
	} else {
		_ = resp.Body.Close()
	}
	first := make(chan error, 1)
	go func() {
		resp, err := send()
		if err == nil {
			_ = resp.Body.Close()
		}
		first <- err
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the first call never reached the server")
	}
	resp, err := send()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "#TransactionInProgressException") {
		close(release)
		t.Fatalf("the same token in flight: %d %s", resp.StatusCode, body)
	}
	checkCRC(t, resp, body)
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	resp, err = send()
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "{}" || calls != 1 {
		t.Fatalf("the same token after the call: %d %s, %d calls reached the server", resp.StatusCode, body, calls)
	}
	checkCRC(t, resp, body)
}

// checkCRC fails the test unless resp carries the X-Amz-Crc32 of body, which the AWS SDK checks on DynamoDB's
// answers.
func checkCRC(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if got, want := resp.Header.Get("X-Amz-Crc32"), strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10); got != want {
		t.Errorf("X-Amz-Crc32 %q, want %q for %s", got, want, body)
	}
}

// fakeDynoxide is a server that answers as Dynoxide (its Server header) with answer for each TransactWriteItems,
// counting them.
type fakeDynoxide struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  int
	answer func(w http.ResponseWriter) // nil: 200 {}
}

func newFakeDynoxide(t *testing.T, server string) *fakeDynoxide {
	f := &fakeDynoxide{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if server != "" {
			w.Header().Set("Server", server)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if r.Header.Get("X-Amz-Target") == target {
			f.mu.Lock()
			f.calls++
			answer := f.answer
			f.mu.Unlock()
			if answer != nil {
				answer(w)
				return
			}
		}
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDynoxide) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeDynoxide) setAnswer(a func(w http.ResponseWriter)) {
	f.mu.Lock()
	f.answer = a
	f.mu.Unlock()
}

// call sends one TransactWriteItems with token through c and returns its status (0 for a transport error).
func call(t *testing.T, c *Client, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"ClientRequestToken":"`+token+`","TransactItems":[{"Put":{"TableName":"x","Item":{"pk":{"S":"1"}}}}]}`))
	req.Header.Set("X-Amz-Target", target)
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// arm sends c one request that is not a transaction, so that it sees the server's Server header.
func arm(t *testing.T, c *Client, url string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// TestOnlyDynoxideArmsTheClient: a server that does not say it is Dynoxide gets every token (it keeps its own).
func TestOnlyDynoxideArmsTheClient(t *testing.T) {
	f := newFakeDynoxide(t, "Jetty(9.4.57)")
	c := New(f.srv.Client(), time.Minute, nil)
	arm(t, c, f.srv.URL)
	for range 2 {
		if code := call(t, c, f.srv.URL, "t"); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
	}
	if c.Keeping() || f.count() != 2 || c.Kept() != 0 {
		t.Fatalf("keeping %v, %d calls reached the server, %d kept: want false, 2, 0", c.Keeping(), f.count(), c.Kept())
	}
}

// TestCallsWithoutASuccessAreNotKept: a call answered with a server error, or with no answer at all (the connection
// dropped), leaves its token free, so the same token is sent on again, not refused as in flight.
func TestCallsWithoutASuccessAreNotKept(t *testing.T) {
	f := newFakeDynoxide(t, "Dynoxide/1.2.1")
	c := New(f.srv.Client(), time.Minute, nil)
	arm(t, c, f.srv.URL)
	f.setAnswer(func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}`)
	})
	if code := call(t, c, f.srv.URL, "t"); code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", code)
	}
	f.setAnswer(func(w http.ResponseWriter) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	if code := call(t, c, f.srv.URL, "t"); code != 0 {
		t.Fatalf("status %d, want a transport error", code)
	}
	if n := c.Kept(); n != 0 {
		t.Fatalf("%d tokens kept after calls without a success", n)
	}
	f.setAnswer(nil)
	if code := call(t, c, f.srv.URL, "t"); code != http.StatusOK {
		t.Fatalf("status %d, want 200", code)
	}
	if n := f.count(); n != 3 {
		t.Fatalf("%d calls reached the server, want 3", n)
	}
	if code := call(t, c, f.srv.URL, "t"); code != http.StatusOK || f.count() != 3 {
		t.Fatalf("the repeat after a success: status %d, %d calls reached the server (want 200, 3)", code, f.count())
	}
}

// TestManyTokensThroughTheWindow: past the queue's compaction (1,024 expired entries), tokens within the window are
// still answered from the Client and those past it are sent again.
func TestManyTokensThroughTheWindow(t *testing.T) {
	f := newFakeDynoxide(t, "Dynoxide/1.2.1")
	now, advance := fakeClock()
	c := New(f.srv.Client(), 100*time.Second, now)
	arm(t, c, f.srv.URL)
	const n = 3000
	for i := range n {
		if code := call(t, c, f.srv.URL, "t"+strconv.Itoa(i)); code != http.StatusOK {
			t.Fatalf("token %d: status %d", i, code)
		}
		advance(100 * time.Millisecond) // call i finished at i/10 s
	}
	// Now is 300 s: calls 0 to 2000 finished 100 s ago or more.
	if k := c.Kept(); k != n-2001 {
		t.Fatalf("kept %d, want %d", k, n-2001)
	}
	before := f.count()
	for _, i := range []int{2001, 2500, n - 1} {
		if code := call(t, c, f.srv.URL, "t"+strconv.Itoa(i)); code != http.StatusOK {
			t.Fatalf("token %d again: status %d", i, code)
		}
	}
	if f.count() != before {
		t.Fatalf("%d repeats within the window reached the server", f.count()-before)
	}
	for _, i := range []int{0, 1500, 2000} {
		if code := call(t, c, f.srv.URL, "t"+strconv.Itoa(i)); code != http.StatusOK {
			t.Fatalf("token %d again: status %d", i, code)
		}
	}
	if f.count() != before+3 {
		t.Fatalf("%d of 3 repeats past the window reached the server", f.count()-before)
	}
}
