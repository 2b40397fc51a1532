package transfer_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/transfer"
)

// fakeHistory answers GetExecutionHistory from the histories a test sets, in pages of maxResults events with tokens
// of its own ("<executionArn>#<offset>", valid for that execution only), and counts its calls. It stands behind the
// handler's historyReader where a test must see whether Step Functions was asked.
type fakeHistory struct {
	mu     sync.Mutex
	events map[string][]sfntypes.HistoryEvent
	calls  atomic.Int64
}

func (f *fakeHistory) set(arn string, evs []sfntypes.HistoryEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.events == nil {
		f.events = map[string][]sfntypes.HistoryEvent{}
	}
	f.events[arn] = evs
}

func (f *fakeHistory) GetExecutionHistory(_ context.Context, in *sfn.GetExecutionHistoryInput, _ ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	arn := aws.ToString(in.ExecutionArn)
	evs, ok := f.events[arn]
	if !ok {
		return nil, &sfntypes.ExecutionDoesNotExist{Message: aws.String("Execution Does Not Exist: '" + arn + "'")}
	}
	from := 0
	if tok := aws.ToString(in.NextToken); tok != "" {
		tokArn, off, found := strings.Cut(tok, "#")
		n, err := strconv.Atoi(off)
		if !found || tokArn != arn || err != nil || n > len(evs) {
			return nil, &sfntypes.InvalidToken{Message: aws.String("Invalid Token: '" + tok + "'")}
		}
		from = n
	}
	to := min(from+int(in.MaxResults), len(evs))
	out := &sfn.GetExecutionHistoryOutput{Events: slices.Clone(evs[from:to])}
	if to < len(evs) {
		out.NextToken = aws.String(fmt.Sprintf("%s#%d", arn, to))
	}
	return out, nil
}

// history builds an execution history of these event types, one a millisecond, the last at end.
func historyOf(end time.Time, types ...sfntypes.HistoryEventType) []sfntypes.HistoryEvent {
	evs := make([]sfntypes.HistoryEvent, len(types))
	for i, typ := range types {
		ts := end.Add(time.Duration(i+1-len(types)) * time.Millisecond)
		evs[i] = sfntypes.HistoryEvent{Id: int64(i + 1), PreviousEventId: int64(i), Type: typ, Timestamp: &ts}
	}
	return evs
}

// Histories of the tests: one still running, and whole ones ending each way.
var (
	runningTypes = []sfntypes.HistoryEventType{sfntypes.HistoryEventTypeExecutionStarted, sfntypes.HistoryEventTypeTaskStateEntered,
		sfntypes.HistoryEventTypeTaskScheduled}
	succeededTypes = append(slices.Clone(runningTypes), sfntypes.HistoryEventTypeTaskStarted, sfntypes.HistoryEventTypeTaskSucceeded,
		sfntypes.HistoryEventTypeTaskStateExited, sfntypes.HistoryEventTypeExecutionSucceeded)
	failedTypes = append(slices.Clone(runningTypes), sfntypes.HistoryEventTypeTaskStarted, sfntypes.HistoryEventTypeTaskFailed,
		sfntypes.HistoryEventTypeExecutionFailed)
)

// historyEnv is a harness whose history reads go to a fakeHistory, with a cache of maxBytes.
func historyEnv(t *testing.T, maxBytes int64) (*harness, *fakeHistory) {
	t.Helper()
	h := newHarness(t)
	f := &fakeHistory{}
	h.h.History = f
	h.h.HistoryCache = transfer.NewHistoryCache(maxBytes, time.Hour)
	return h, f
}

// submitAs submits a transfer as the caller arn and returns it.
func (h *harness) submitAs(arn, key string) transfer.Resource {
	h.t.Helper()
	resp := h.call(arn, http.MethodPost, "/transfers", nil, key, aliceToBob)
	if resp.StatusCode != http.StatusAccepted {
		h.t.Fatalf("submit %s: %d %s", key, resp.StatusCode, resp.Body)
	}
	var tr transfer.Resource
	decode(h.t, resp, &tr)
	return tr
}

// readHistory reads a transfer's history as arn on resource (the client or operator route), with these query
// parameters.
func (h *harness) readHistory(arn, resource, id string, query map[string]string) events.APIGatewayProxyResponse {
	h.t.Helper()
	req := events.APIGatewayProxyRequest{Resource: resource, HTTPMethod: http.MethodGet,
		Path:           strings.ReplaceAll(resource, "{transferId}", id),
		PathParameters: map[string]string{"transferId": id}, QueryStringParameters: query}
	req.RequestContext.Identity.UserArn = arn
	return h.do(req)
}

const clientHistory, operatorHistory = "/transfers/{transferId}/history", "/operator/transfers/{transferId}/history"

// wantCalls checks how many times Step Functions was asked so far.
func wantCalls(t *testing.T, f *fakeHistory, want int64, after string) {
	t.Helper()
	if got := f.calls.Load(); got != want {
		t.Errorf("after %s: %d GetExecutionHistory calls, want %d", after, got, want)
	}
}

// wantCacheMetric checks that the request's record counts a cache hit, a miss ("hit", "miss") or neither ("").
func wantCacheMetric(t *testing.T, h *harness, seen *int, want string) {
	t.Helper()
	l := h.record(t, seen)
	hit, isHit := l.Metrics[transfer.MetricHistoryCacheHits]
	miss, isMiss := l.Metrics[transfer.MetricHistoryCacheMisses]
	got := ""
	switch {
	case isHit && isMiss:
		got = "both"
	case isHit && hit.Value == 1 && hit.Unit == "Count":
		got = "hit"
	case isMiss && miss.Value == 1 && miss.Unit == "Count":
		got = "miss"
	case isHit || isMiss:
		got = fmt.Sprintf("hit %+v miss %+v", hit, miss)
	}
	if got != want {
		t.Errorf("history cache metric %q, want %q", got, want)
	}
}

// TestHistoryCacheSparesStepFunctions: the history of an execution that succeeded is read from Step Functions once;
// the next reads, on the client and the operator route, answer the same body from the cache, each counted as a hit.
// Every read is authorized first: another client gets exactly a missing transfer's 404, without a call. A page is
// served for the cache's max age, then read again.
func TestHistoryCacheSparesStepFunctions(t *testing.T) {
	h, f := historyEnv(t, 1<<20)
	tr := h.submitAs(aliceArn, "cache-1")
	f.set(tr.ExecutionArn, historyOf(h.clock.Now(), succeededTypes...))
	seen := len(h.metrics.Lines(t))

	first := h.readHistory(aliceArn, clientHistory, tr.TransferID, nil)
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first read: %d %s", first.StatusCode, first.Body)
	}
	var hist transfer.History
	decode(t, first, &hist)
	if len(hist.Events) != len(succeededTypes) || hist.Events[len(succeededTypes)-1]["type"] != "ExecutionSucceeded" || hist.NextToken != "" {
		t.Fatalf("first read: %s", first.Body)
	}
	wantCalls(t, f, 1, "the first read")
	wantCacheMetric(t, h, &seen, "miss")

	again := h.readHistory(aliceArn, clientHistory, tr.TransferID, nil)
	if again.StatusCode != http.StatusOK || again.Body != first.Body {
		t.Errorf("second read: %d %s, want the first's body %s", again.StatusCode, again.Body, first.Body)
	}
	wantCalls(t, f, 1, "a second read")
	wantCacheMetric(t, h, &seen, "hit")

	op := h.readHistory(operatorArn, operatorHistory, tr.TransferID, nil)
	if op.StatusCode != http.StatusOK || op.Body != first.Body {
		t.Errorf("operator read: %d %s, want %s", op.StatusCode, op.Body, first.Body)
	}
	wantCalls(t, f, 1, "the operator's read")
	wantCacheMetric(t, h, &seen, "hit")

	foreign := h.readHistory(malloryArn, clientHistory, tr.TransferID, nil)
	wantCacheMetric(t, h, &seen, "")
	none := h.readHistory(malloryArn, clientHistory, "tr_nope", nil)
	wantCacheMetric(t, h, &seen, "")
	if foreign.StatusCode != http.StatusNotFound || foreign.Body != none.Body {
		t.Errorf("mallory reads alice's cached history: %d %s, want the missing transfer's %d %s",
			foreign.StatusCode, foreign.Body, none.StatusCode, none.Body)
	}
	wantCalls(t, f, 1, "mallory's reads")

	h.clock.Advance(time.Hour)
	if resp := h.readHistory(aliceArn, clientHistory, tr.TransferID, nil); resp.Body != first.Body {
		t.Errorf("read after the max age: %s", resp.Body)
	}
	wantCalls(t, f, 2, "a read after the max age")
	wantCacheMetric(t, h, &seen, "miss")
}

// TestHistoryCacheKeepsNoOpenExecution: a running execution's history is read from Step Functions every time, so its
// new events show at once; once it has succeeded, the next read is cached. An execution that failed is cached only
// once it can no longer be redriven (14 days after it closed), and one that was redriven is running again.
func TestHistoryCacheKeepsNoOpenExecution(t *testing.T) {
	h, f := historyEnv(t, 1<<20)
	now := h.clock.Now()
	tr := h.submitAs(aliceArn, "open-1")
	f.set(tr.ExecutionArn, historyOf(now, runningTypes...))
	for i := range 2 {
		var hist transfer.History
		decode(t, h.readHistory(aliceArn, clientHistory, tr.TransferID, nil), &hist)
		if len(hist.Events) != len(runningTypes) {
			t.Fatalf("read %d of the running execution: %d events", i, len(hist.Events))
		}
	}
	wantCalls(t, f, 2, "two reads of a running execution")
	if n := h.h.HistoryCache.Len(); n != 0 {
		t.Errorf("the cache holds %d entries for a running execution", n)
	}

	f.set(tr.ExecutionArn, historyOf(now, succeededTypes...))
	var hist transfer.History
	decode(t, h.readHistory(aliceArn, clientHistory, tr.TransferID, nil), &hist)
	if len(hist.Events) != len(succeededTypes) {
		t.Errorf("after it succeeded: %d events, want %d (the new ones shown)", len(hist.Events), len(succeededTypes))
	}
	h.readHistory(aliceArn, clientHistory, tr.TransferID, nil)
	wantCalls(t, f, 3, "two reads once it succeeded")

	cases := []struct {
		name   string
		events []sfntypes.HistoryEvent
		calls  int64 // for two reads
	}{
		{"failed an hour ago (redrivable)", historyOf(now.Add(-time.Hour), failedTypes...), 2},
		{"failed 15 days ago", historyOf(now.Add(-15*24*time.Hour), failedTypes...), 1},
		{"redriven after failing 20 days ago", append(historyOf(now.Add(-20*24*time.Hour), failedTypes...),
			sfntypes.HistoryEvent{Id: int64(len(failedTypes) + 1), Type: sfntypes.HistoryEventTypeExecutionRedriven, Timestamp: &now}), 2},
	}
	for i, c := range cases {
		tr := h.submitAs(aliceArn, "ended-"+strconv.Itoa(i))
		f.set(tr.ExecutionArn, c.events)
		before := f.calls.Load()
		h.readHistory(aliceArn, clientHistory, tr.TransferID, nil)
		h.readHistory(aliceArn, clientHistory, tr.TransferID, nil)
		if got := f.calls.Load() - before; got != c.calls {
			t.Errorf("%s: two reads made %d calls, want %d", c.name, got, c.calls)
		}
	}
}

// TestHistoryCacheEvictsByBytes: the cache holds what its byte bound allows, dropping the least recently read
// execution first, and keeps no page larger than itself.
func TestHistoryCacheEvictsByBytes(t *testing.T) {
	h, f := historyEnv(t, 1<<20)
	ids := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		tr := h.submitAs(aliceArn, "evict-"+name)
		f.set(tr.ExecutionArn, historyOf(h.clock.Now(), succeededTypes...))
		ids[name] = tr.TransferID
	}
	h.readHistory(aliceArn, clientHistory, ids["a"], nil)
	one := h.h.HistoryCache.Bytes() // a page and its execution's marker: every execution here costs as much
	if one == 0 {
		t.Fatal("the first read cached nothing")
	}

	h.h.HistoryCache = transfer.NewHistoryCache(2*one+one/2, time.Hour) // room for two executions
	calls := f.calls.Load()
	read := func(name string, hit bool) {
		t.Helper()
		if resp := h.readHistory(aliceArn, clientHistory, ids[name], nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("read %s: %d %s", name, resp.StatusCode, resp.Body)
		}
		if !hit {
			calls++
		}
		wantCalls(t, f, calls, "reading "+name)
		if b := h.h.HistoryCache.Bytes(); b > 2*one+one/2 {
			t.Errorf("the cache holds %d bytes, over its bound %d", b, 2*one+one/2)
		}
	}
	read("a", false)
	read("b", false)
	read("a", true)  // a is now the most recently read
	read("c", false) // evicts b
	read("a", true)
	read("b", false) // was evicted; evicts c
	read("c", false)

	h.h.HistoryCache = transfer.NewHistoryCache(one/2, time.Hour)
	calls = f.calls.Load()
	read("a", false)
	read("a", false)
	if n := h.h.HistoryCache.Len(); n != 0 {
		t.Errorf("a cache smaller than one page holds %d entries", n)
	}
}

// TestHistoryCachePagesStayConsistent: with maxResults, each page is cached under its own token and size and answers
// exactly what Step Functions answered, nextToken included, so a caller walking the pages gets the same history
// whether each comes from the cache or not. The pages before the last are cached once the last has shown that the
// execution ended. A token is only ever looked up under the execution of the transfer being read.
func TestHistoryCachePagesStayConsistent(t *testing.T) {
	h, f := historyEnv(t, 1<<20)
	tr := h.submitAs(aliceArn, "pages-1")
	f.set(tr.ExecutionArn, historyOf(h.clock.Now(), succeededTypes...)) // 7 events: pages of 3, 3 and 1
	walk := func() []string {
		t.Helper()
		var bodies []string
		query := map[string]string{"maxResults": "3"}
		for range 4 {
			resp := h.readHistory(aliceArn, clientHistory, tr.TransferID, query)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("page %d: %d %s", len(bodies)+1, resp.StatusCode, resp.Body)
			}
			bodies = append(bodies, resp.Body)
			var page transfer.History
			decode(t, resp, &page)
			if page.NextToken == "" {
				return bodies
			}
			query = map[string]string{"maxResults": "3", "nextToken": page.NextToken}
		}
		t.Fatal("more pages than the history has")
		return nil
	}

	first := walk()
	var ids []any
	for _, b := range first {
		var page transfer.History
		decode(t, events.APIGatewayProxyResponse{Body: b}, &page)
		for _, ev := range page.Events {
			ids = append(ids, ev["id"])
		}
	}
	if fmt.Sprint(ids) != "[1 2 3 4 5 6 7]" || len(first) != 3 {
		t.Fatalf("pages %d, event ids %v, want 3 pages of the 7 events in order", len(first), ids)
	}
	wantCalls(t, f, 3, "the first walk (only the last page is known to be final)")
	second := walk()
	wantCalls(t, f, 5, "the second walk (the first two pages read and cached, the last from the cache)")
	third := walk()
	wantCalls(t, f, 5, "the third walk (every page from the cache)")
	if !slices.Equal(first, second) || !slices.Equal(first, third) {
		t.Errorf("the walks differ:\n%q\n%q\n%q", first, second, third)
	}

	h.readHistory(aliceArn, clientHistory, tr.TransferID, map[string]string{"maxResults": "7"})
	wantCalls(t, f, 6, "a read with another maxResults (another page)")

	var page1 transfer.History
	decode(t, events.APIGatewayProxyResponse{Body: first[0]}, &page1)
	other := h.submitAs(aliceArn, "pages-2")
	f.set(other.ExecutionArn, historyOf(h.clock.Now(), succeededTypes...))
	wantProblem(t, h.readHistory(aliceArn, clientHistory, other.TransferID, map[string]string{"maxResults": "3", "nextToken": page1.NextToken}),
		http.StatusBadRequest, "VALIDATION_ERROR")
	wantProblem(t, h.readHistory(aliceArn, clientHistory, tr.TransferID, map[string]string{"maxResults": "3", "nextToken": "forged"}),
		http.StatusBadRequest, "VALIDATION_ERROR")
}
