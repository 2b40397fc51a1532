package transferclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/transfer"
)

var aliceToBob = SubmitRequest{
	SourceAccountID: "acc-alice", DestinationAccountID: "acc-bob", Amount: 1250, Currency: "EUR", Reference: "invoice 2026-118",
}

func TestSubmitRetries(t *testing.T) {
	accepted := step{status: http.StatusAccepted, body: transferJSON("tr_1", StatusInProgress)}
	tests := []struct {
		name         string
		steps        []step
		wantAttempts int
		// wantMinSleeps are lower bounds of each sleep, in order; their count is the number of retries.
		wantMinSleeps []time.Duration
		wantStatus    int
		wantReplayed  bool
		// wantErrStatus and wantCode describe the expected *APIError; 0 means success.
		wantErrStatus int
		wantCode      string
		wantRetryErr  bool
	}{
		{
			name:          "503 with Retry-After, then 202",
			steps:         []step{{status: 503, body: problemJSON(503, CodeServiceUnavailable, "try again"), retryAfter: "2"}, accepted},
			wantAttempts:  2,
			wantMinSleeps: []time.Duration{2 * time.Second},
			wantStatus:    202,
		},
		{
			name:          "dropped connection, then a replay",
			steps:         []step{{drop: true}, {status: 202, body: transferJSON("tr_1", StatusInProgress), replayed: true}},
			wantAttempts:  2,
			wantMinSleeps: []time.Duration{DefaultBaseBackoff / 2},
			wantStatus:    202,
			wantReplayed:  true,
		},
		{
			name:          "409 REQUEST_IN_PROGRESS honours Retry-After, then the terminal replay",
			steps:         []step{{status: 409, body: problemJSON(409, CodeRequestInProgress, "wait"), retryAfter: "3"}, {status: 200, body: transferJSON("tr_1", StatusCompleted), replayed: true}},
			wantAttempts:  2,
			wantMinSleeps: []time.Duration{3 * time.Second},
			wantStatus:    200,
			wantReplayed:  true,
		},
		{
			name:          "429 without Retry-After backs off, then 202",
			steps:         []step{{status: 429, body: `{"message":"Too Many Requests"}`}, accepted},
			wantAttempts:  2,
			wantMinSleeps: []time.Duration{DefaultBaseBackoff / 2},
			wantStatus:    202,
		},
		{
			name:          "504 from the gateway, twice, then 202",
			steps:         []step{{status: 504, body: `{"message":"Endpoint request timed out"}`}, {status: 504, body: `{"message":"Endpoint request timed out"}`}, accepted},
			wantAttempts:  3,
			wantMinSleeps: []time.Duration{DefaultBaseBackoff / 2, DefaultBaseBackoff},
			wantStatus:    202,
		},
		{
			name:          "422 IDEMPOTENCY_KEY_REUSED is not retried",
			steps:         []step{{status: 422, body: problemJSON(422, "IDEMPOTENCY_KEY_REUSED", "other payload")}, accepted},
			wantAttempts:  1,
			wantErrStatus: 422,
			wantCode:      "IDEMPOTENCY_KEY_REUSED",
		},
		{
			name:          "409 with another code is not retried",
			steps:         []step{{status: 409, body: problemJSON(409, "CONFLICT", "x"), retryAfter: "1"}, accepted},
			wantAttempts:  1,
			wantErrStatus: 409,
			wantCode:      "CONFLICT",
		},
		{
			name:          "400 is not retried",
			steps:         []step{{status: 400, body: problemJSON(400, "VALIDATION_ERROR", "bad")}, accepted},
			wantAttempts:  1,
			wantErrStatus: 400,
			wantCode:      "VALIDATION_ERROR",
		},
		{
			name:          "500 forever gives up after MaxAttempts",
			steps:         []step{{status: 500, body: problemJSON(500, "INTERNAL_ERROR", "x")}},
			wantAttempts:  DefaultMaxAttempts,
			wantMinSleeps: []time.Duration{125 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second},
			wantErrStatus: 500,
			wantCode:      "INTERNAL_ERROR",
			wantRetryErr:  true,
		},
		{
			name:          "a Retry-After past MaxRetryAfter ends the call at once",
			steps:         []step{{status: 503, body: problemJSON(503, CodeServiceUnavailable, "x"), retryAfter: "3600"}, accepted},
			wantAttempts:  1,
			wantErrStatus: 503,
			wantCode:      CodeServiceUnavailable,
			wantRetryErr:  true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tc.steps...)
			clk := newFakeClock()
			c := newTestClient(f, clk)
			key := `k-1"quoted\back`
			res, err := c.Submit(context.Background(), key, aliceToBob)

			reqs := f.requests()
			if len(reqs) != tc.wantAttempts {
				t.Fatalf("requests = %d, want %d", len(reqs), tc.wantAttempts)
			}
			for i, r := range reqs {
				// The server's own parser must read back exactly the key, from every attempt.
				got, kerr := transfer.ParseIdempotencyKey(r.header.Values("Idempotency-Key"))
				if kerr != nil || got != key {
					t.Errorf("attempt %d: key = %q, %v; want %q", i+1, got, kerr, key)
				}
				if !bytes.Equal(r.body, reqs[0].body) {
					t.Errorf("attempt %d: body %s differs from the first %s", i+1, r.body, reqs[0].body)
				}
				if r.method != http.MethodPost || r.path != "/transfers" {
					t.Errorf("attempt %d: %s %s", i+1, r.method, r.path)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("attempt %d: Content-Type %q", i+1, ct)
				}
			}
			// The body passes the orchestrator's strict validation and says what was asked.
			dec, derr := transfer.DecodeRequest(reqs[0].body)
			if derr != nil {
				t.Fatalf("the orchestrator refuses the body %s: %v", reqs[0].body, derr)
			}
			if dec.Amount != 1250 || dec.SourceAccountID != "acc-alice" || dec.DestinationAccountID != "acc-bob" || dec.Currency != "EUR" || dec.Reference != "invoice 2026-118" {
				t.Errorf("decoded body = %+v", dec)
			}

			sleeps := clk.Sleeps()
			if len(sleeps) != len(tc.wantMinSleeps) {
				t.Fatalf("sleeps = %v, want %d of them", sleeps, len(tc.wantMinSleeps))
			}
			for i, min := range tc.wantMinSleeps {
				if sleeps[i] < min {
					t.Errorf("sleep %d = %v, want at least %v", i+1, sleeps[i], min)
				}
			}

			if tc.wantErrStatus == 0 {
				if err != nil {
					t.Fatalf("Submit: %v", err)
				}
				if res.Status != tc.wantStatus || res.Replayed != tc.wantReplayed || res.Attempts != tc.wantAttempts || res.Transfer.TransferID != "tr_1" {
					t.Errorf("result = %+v", res)
				}
				return
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.wantErrStatus || apiErr.Code != tc.wantCode {
				t.Fatalf("err = %v, want status %d code %s", err, tc.wantErrStatus, tc.wantCode)
			}
			var retryErr *RetryError
			if errors.As(err, &retryErr) != tc.wantRetryErr {
				t.Errorf("err = %v: RetryError %v, want %v", err, !tc.wantRetryErr, tc.wantRetryErr)
			}
		})
	}
}

func TestSubmitValidationErrorsCarryFields(t *testing.T) {
	f := startFake(t, step{status: 400, body: `{"type":"/problems/validation-error","title":"Bad Request","status":400,"detail":"invalid fields","code":"VALIDATION_ERROR","errors":[{"field":"amount","message":"must be an integer"}]}`})
	_, err := newTestClient(f, newFakeClock()).Submit(context.Background(), "k", aliceToBob)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || len(apiErr.Errors) != 1 || apiErr.Errors[0].Field != "amount" {
		t.Fatalf("err = %#v", err)
	}
}

func TestSubmitRefusesBadKeysBeforeSending(t *testing.T) {
	for _, key := range []string{"", "has space", strings.Repeat("k", 256), "é"} {
		f := startFake(t, step{status: 202, body: transferJSON("tr_1", StatusInProgress)})
		if _, err := newTestClient(f, newFakeClock()).Submit(context.Background(), key, aliceToBob); err == nil {
			t.Errorf("key %q: no error", key)
		}
		if n := len(f.requests()); n != 0 {
			t.Errorf("key %q: %d requests sent", key, n)
		}
	}
}

func TestCancelledContextStopsRetrying(t *testing.T) {
	f := startFake(t, step{status: 503, body: problemJSON(503, CodeServiceUnavailable, "x"), retryAfter: "1"})
	ctx, cancel := context.WithCancel(context.Background())
	c := newTestClient(f, newFakeClock())
	c.OnRetry = func(Retry) { cancel() }
	_, err := c.Submit(ctx, "k", aliceToBob)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

func TestGetAndAccountPaths(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string // appended to the fake's URL
		call     func(c *Client) error
		wantPath string
	}{
		{"get", "", func(c *Client) error { _, err := c.Get(context.Background(), "tr_1"); return err }, "/transfers/tr_1"},
		{"get under a stage path", "/Prod/", func(c *Client) error { _, err := c.Get(context.Background(), "tr_1"); return err }, "/Prod/transfers/tr_1"},
		{"an id is one path segment", "", func(c *Client) error { _, err := c.Get(context.Background(), "../accounts/x"); return err }, "/transfers/..%2Faccounts%2Fx"},
		{"account", "/Prod", func(c *Client) error { _, err := c.Account(context.Background(), "acc-alice"); return err }, "/Prod/accounts/acc-alice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := transferJSON("tr_1", StatusCompleted)
			if strings.Contains(tc.wantPath, "/accounts/") {
				body = `{"accountId":"acc-alice","balance":8750,"currency":"EUR","version":3}`
			}
			f := startFake(t, step{status: 200, body: body})
			c := newTestClient(f, newFakeClock())
			c.Endpoint += tc.endpoint
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			if got := f.requests()[0]; got.method != http.MethodGet || got.path != tc.wantPath {
				t.Errorf("request = %s %s, want GET %s", got.method, got.path, tc.wantPath)
			}
		})
	}
}

func TestNotFoundIsNotRetried(t *testing.T) {
	f := startFake(t, step{status: 404, body: problemJSON(404, "TRANSFER_NOT_FOUND", "no such transfer")})
	_, err := newTestClient(f, newFakeClock()).Get(context.Background(), "tr_x")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != "TRANSFER_NOT_FOUND" {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

func TestWait(t *testing.T) {
	inProgress := step{status: 200, body: transferJSON("tr_1", StatusInProgress)}
	tests := []struct {
		name       string
		steps      []step
		timeout    time.Duration
		wantStatus string
		wantErr    error
		wantPolls  int
	}{
		{"completes on the third poll", []step{inProgress, inProgress, {status: 200, body: transferJSON("tr_1", StatusCompleted)}}, time.Minute, StatusCompleted, nil, 3},
		{"FAILED is terminal", []step{inProgress, {status: 200, body: transferJSON("tr_1", StatusFailed)}}, time.Minute, StatusFailed, nil, 2},
		// Polls at 0, 0.5, 1.25, 2.375, 4.06 and 5 s (the deadline): six, then the timeout.
		{"still in progress at the deadline", []step{inProgress}, 5 * time.Second, StatusInProgress, ErrWaitTimeout, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tc.steps...)
			clk := newFakeClock()
			c := newTestClient(f, clk)
			deadline := clk.Now().Add(tc.timeout)
			tr, err := c.Wait(context.Background(), "tr_1", deadline)
			if !errors.Is(err, tc.wantErr) || tr.Status != tc.wantStatus {
				t.Fatalf("Wait = %s, %v; want %s, %v", tr.Status, err, tc.wantStatus, tc.wantErr)
			}
			if n := len(f.requests()); n != tc.wantPolls {
				t.Errorf("polls = %d, want %d", n, tc.wantPolls)
			}
			if clk.Now().After(deadline) {
				t.Errorf("slept past the deadline: now %v, deadline %v", clk.Now(), deadline)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name, in string
		want     time.Duration
	}{
		{"seconds", "3", 3 * time.Second},
		{"zero", "0", 0},
		{"absent", "", 0},
		{"negative", "-1", 0},
		{"garbage", "soon", 0},
		{"http date", "Sat, 21 Nov 2026 10:00:07 GMT", 7 * time.Second},
		{"http date in the past", "Sat, 21 Nov 2026 09:00:00 GMT", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseRetryAfter(tc.in, now); got != tc.want {
				t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	for attempt := 1; attempt <= 12; attempt++ {
		base := min(DefaultBaseBackoff<<min(attempt-1, 10), DefaultMaxBackoff)
		lo := (&Client{Jitter: func() float64 { return 0 }}).backoff(attempt)
		hi := (&Client{Jitter: func() float64 { return 0.999999 }}).backoff(attempt)
		if lo != base/2 || hi > base || hi < lo {
			t.Errorf("attempt %d: backoff in [%v, %v], want [%v, %v]", attempt, lo, hi, base/2, base)
		}
	}
}

func TestHistoryFollowsNextToken(t *testing.T) {
	h, _ := loadHistory(t, "history_completed.json")
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/transfers/tr_01JD3X7K9Q/history" {
			t.Errorf("path %s", r.URL.Path)
		}
		tok := r.URL.Query().Get("nextToken")
		tokens = append(tokens, tok)
		// Pages of 8 events; the token is opaque to the client.
		start := map[string]int{"": 0, "p2+/=": 8, "p3": 16}[tok]
		end := min(start+8, len(h.Events))
		page := map[string]any{"transferId": h.TransferID, "executionArn": h.ExecutionArn, "events": h.Events[start:end], "ledger": h.Ledger}
		if next := map[int]string{0: "p2+/=", 8: "p3"}[start]; next != "" {
			page["nextToken"] = next
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(page)
	}))
	t.Cleanup(srv.Close)
	c := &Client{Endpoint: srv.URL, HTTP: srv.Client()}
	got, err := c.History(context.Background(), "tr_01JD3X7K9Q")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "p2+/=", "p3"}; !slices.Equal(tokens, want) {
		t.Errorf("tokens sent = %q, want %q", tokens, want)
	}
	if len(got.Events) != len(h.Events) || len(got.Ledger) != 2 {
		t.Fatalf("events = %d, legs = %d; want %d, 2", len(got.Events), len(got.Ledger), len(h.Events))
	}
	for i, e := range got.Events {
		if e.ID != int64(i+1) {
			t.Errorf("event %d has id %d", i, e.ID)
		}
	}
}

func TestHistoryJSONHasListsNotNull(t *testing.T) {
	f := startFake(t, step{status: 200, body: `{"transferId":"tr_1","executionArn":"a","events":[]}`})
	h, err := newTestClient(f, newFakeClock()).History(context.Background(), "tr_1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(h)
	if want := `{"transferId":"tr_1","executionArn":"a","events":[],"ledger":[]}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}

func TestHistoryStopsOnARepeatedToken(t *testing.T) {
	f := startFake(t, step{status: 200, body: `{"transferId":"tr_1","executionArn":"a","events":[],"ledger":[],"nextToken":"same"}`})
	_, err := newTestClient(f, newFakeClock()).History(context.Background(), "tr_1")
	if err == nil || !strings.Contains(err.Error(), "repeated nextToken") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}
