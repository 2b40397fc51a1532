package transferclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	// operatorAccountJSON is an account as the operator routes show it: with its owner's scope.
	operatorAccountJSON = `{"accountId":"acc-ivy","kind":"customer","currency":"EUR","balance":0,"version":1,` +
		`"createdAt":"2026-11-21T10:00:00.000Z","updatedAt":"2026-11-21T10:00:00.000Z",` +
		`"owner":"iam:arn:aws:iam::123456789012:user/ivy","links":{"self":"/operator/accounts/acc-ivy","transfers":"/operator/accounts/acc-ivy/transfers"}}`
	// fundingAccountJSON is a funding account as the operator routes show it: with its floor, without owner.
	fundingAccountJSON = `{"accountId":"funding-shop","kind":"funding","currency":"EUR","balance":-5000,"version":2,` +
		`"createdAt":"2026-11-21T10:00:00.000Z","updatedAt":"2026-11-21T10:00:01.000Z","floor":-1000000,` +
		`"links":{"self":"/operator/accounts/funding-shop","transfers":"/operator/accounts/funding-shop/transfers"}}`
	ivyARN = "arn:aws:iam::123456789012:user/ivy"
)

// TestOperatorPrefix calls every method of the client, as a client and as an operator, under a stage path: an
// operator's request goes to the same route under /operator/, and nothing else changes.
func TestOperatorPrefix(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		body   string
		call   func(c *Client) error
		method string
		// path is the client route's, after the stage path.
		path, query string
		// operatorOnly: a client sends nothing.
		operatorOnly bool
	}{
		{"Submit", transferJSON("tr_1", StatusInProgress), func(c *Client) error { _, err := c.Submit(ctx, "k", aliceToBob); return err },
			http.MethodPost, "/transfers", "", false},
		{"Get", transferJSON("tr_1", StatusCompleted), func(c *Client) error { _, err := c.Get(ctx, "tr_1"); return err },
			http.MethodGet, "/transfers/tr_1", "", false},
		{"Wait", transferJSON("tr_1", StatusCompleted), func(c *Client) error {
			_, err := c.Wait(ctx, "tr_1", time.Date(2026, 11, 21, 10, 1, 0, 0, time.UTC))
			return err
		}, http.MethodGet, "/transfers/tr_1", "", false},
		{"Get: an id is one path segment", transferJSON("tr_1", StatusCompleted), func(c *Client) error { _, err := c.Get(ctx, "../accounts/x"); return err },
			http.MethodGet, "/transfers/..%2Faccounts%2Fx", "", false},
		{"History", `{"transferId":"tr_1","executionArn":"a","events":[],"ledger":[]}`, func(c *Client) error { _, err := c.History(ctx, "tr_1"); return err },
			http.MethodGet, "/transfers/tr_1/history", "", false},
		{"Account", fundingAccountJSON, func(c *Client) error { _, err := c.Account(ctx, "funding-shop"); return err },
			http.MethodGet, "/accounts/funding-shop", "", false},
		{"OpenAccount", operatorAccountJSON, func(c *Client) error {
			_, err := c.OpenAccount(ctx, "k", OpenAccountRequest{Currency: "EUR", AccountID: "acc-ivy"})
			return err
		}, http.MethodPost, "/accounts", "", false},
		{"AccountTransfers", `{"accountId":"acc-ivy","transfers":[]}`, func(c *Client) error { _, err := c.AccountTransfers(ctx, "acc-ivy", 5, "t1"); return err },
			http.MethodGet, "/accounts/acc-ivy/transfers", "limit=5&nextToken=t1", false},
		{"AllAccountTransfers", `{"accountId":"acc-ivy","transfers":[]}`, func(c *Client) error { _, err := c.AllAccountTransfers(ctx, "acc-ivy", 0); return err },
			http.MethodGet, "/accounts/acc-ivy/transfers", "", false},
		{"AssignOwner", operatorAccountJSON, func(c *Client) error { _, err := c.AssignOwner(ctx, "acc-ivy", ivyARN); return err },
			http.MethodPut, "/accounts/acc-ivy/owner", "", true},
	}
	for _, tc := range tests {
		for _, operator := range []bool{false, true} {
			name := tc.name + "/client"
			want := "/Prod" + tc.path
			if operator {
				name = tc.name + "/operator"
				want = "/Prod/operator" + tc.path
			}
			t.Run(name, func(t *testing.T) {
				f := startFake(t, step{status: 200, body: tc.body})
				c := newTestClient(f, newFakeClock())
				c.Endpoint += "/Prod/"
				c.Operator = operator
				err := tc.call(c)
				reqs := f.requests()
				if tc.operatorOnly && !operator {
					if err == nil || !strings.Contains(err.Error(), "an operator route") || len(reqs) != 0 {
						t.Errorf("err = %v after %d requests; want an operator route error and nothing sent", err, len(reqs))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(reqs) != 1 {
					t.Fatalf("requests = %d, want 1", len(reqs))
				}
				if got := reqs[0]; got.method != tc.method || got.path != want || got.query != tc.query {
					t.Errorf("request = %s %s?%s, want %s %s?%s", got.method, got.path, got.query, tc.method, want, tc.query)
				}
			})
		}
	}
}

func TestAssignOwner(t *testing.T) {
	tests := []struct {
		name         string
		steps        []step
		wantAttempts int
		// wantErrStatus and wantCode describe the expected *APIError; 0 means success.
		wantErrStatus int
		wantCode      string
	}{
		{"assigned", []step{{status: 200, body: operatorAccountJSON}}, 1, 0, ""},
		{"503 is retried with the same body: the assignment can be repeated", []step{{status: 503, body: problemJSON(503, CodeServiceUnavailable, "x")}, {status: 200, body: operatorAccountJSON}}, 2, 0, ""},
		{"409 ACCOUNT_HAS_OWNER is not retried", []step{{status: 409, body: problemJSON(409, "ACCOUNT_HAS_OWNER", "the account already has another owner")}}, 1, 409, "ACCOUNT_HAS_OWNER"},
		{"409 FUNDING_ACCOUNT is not retried", []step{{status: 409, body: problemJSON(409, "FUNDING_ACCOUNT", "a funding account has no owner")}}, 1, 409, "FUNDING_ACCOUNT"},
		{"404 ACCOUNT_NOT_FOUND", []step{{status: 404, body: problemJSON(404, "ACCOUNT_NOT_FOUND", "no account with this id")}}, 1, 404, "ACCOUNT_NOT_FOUND"},
		{"403 ACCESS_DENIED from the gateway", []step{{status: 403, body: problemJSON(403, "ACCESS_DENIED", "User: arn:aws:iam::123456789012:user/bob is not authorized")}}, 1, 403, "ACCESS_DENIED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tc.steps...)
			c := newTestClient(f, newFakeClock())
			c.Operator = true
			a, err := c.AssignOwner(context.Background(), "acc-ivy", ivyARN)
			reqs := f.requests()
			if len(reqs) != tc.wantAttempts {
				t.Errorf("requests = %d, want %d", len(reqs), tc.wantAttempts)
			}
			for i, r := range reqs {
				if r.method != http.MethodPut || r.path != "/operator/accounts/acc-ivy/owner" || r.header.Get("Content-Type") != "application/json" ||
					string(r.body) != `{"owner":"`+ivyARN+`"}` {
					t.Errorf("attempt %d: %s %s, Content-Type %q, body %s", i+1, r.method, r.path, r.header.Get("Content-Type"), r.body)
				}
			}
			if tc.wantErrStatus == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if a.AccountID != "acc-ivy" || a.Owner != "iam:"+ivyARN || a.Floor != nil || string(a.Raw) != operatorAccountJSON {
					t.Errorf("account = %+v", a)
				}
				return
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.wantErrStatus || apiErr.Code != tc.wantCode {
				t.Fatalf("err = %v, want %d %s", err, tc.wantErrStatus, tc.wantCode)
			}
			if !strings.HasPrefix(err.Error(), "assign owner of acc-ivy: ") {
				t.Errorf("err = %q, want it to say what was being done", err)
			}
		})
	}
}

// TestOpenAccountOperatorFields: floor and owner are sent only when set (a floor of 0 is set), so a client's body
// never carries the operator's fields; the operator view's owner and floor are decoded.
func TestOpenAccountOperatorFields(t *testing.T) {
	zero, floor := int64(0), int64(-1000000)
	tests := []struct {
		name     string
		req      OpenAccountRequest
		answer   string
		wantBody string
	}{
		{"client: no operator fields", OpenAccountRequest{Currency: "EUR", AccountID: "acc-ivy"}, operatorAccountJSON,
			`{"accountId":"acc-ivy","currency":"EUR"}`},
		{"funding with a floor", OpenAccountRequest{Currency: "EUR", AccountID: "funding-shop", Kind: KindFunding, Floor: &floor}, fundingAccountJSON,
			`{"accountId":"funding-shop","currency":"EUR","kind":"funding","floor":-1000000}`},
		{"a floor of 0 is sent", OpenAccountRequest{Currency: "EUR", AccountID: "funding-shop", Kind: KindFunding, Floor: &zero}, fundingAccountJSON,
			`{"accountId":"funding-shop","currency":"EUR","kind":"funding","floor":0}`},
		{"customer with an owner", OpenAccountRequest{Currency: "EUR", AccountID: "acc-ivy", Owner: ivyARN}, operatorAccountJSON,
			`{"accountId":"acc-ivy","currency":"EUR","owner":"` + ivyARN + `"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, step{status: 201, body: tc.answer})
			c := newTestClient(f, newFakeClock())
			c.Operator = true
			res, err := c.OpenAccount(context.Background(), "k", tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(f.requests()[0].body); got != tc.wantBody {
				t.Errorf("body = %s, want %s", got, tc.wantBody)
			}
			var want Account
			if err := json.Unmarshal([]byte(tc.answer), &want); err != nil {
				t.Fatal(err)
			}
			got := res.Account
			if got.Owner != want.Owner || (got.Floor == nil) != (want.Floor == nil) || got.Floor != nil && *got.Floor != *want.Floor {
				t.Errorf("account owner %q floor %v, want %q %v", got.Owner, got.Floor, want.Owner, want.Floor)
			}
		})
	}
}

func TestOperatorView(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantOwner string
		wantFloor *int64
	}{
		{"customer account with owner", operatorAccountJSON, "iam:" + ivyARN, nil},
		{"funding account: floor, no owner", fundingAccountJSON, "", ptr(int64(-1000000))},
		{"client view: neither", `{"accountId":"acc-ivy","kind":"customer","currency":"EUR","balance":0,"version":1}`, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, step{status: 200, body: tc.body})
			a, err := newTestClient(f, newFakeClock()).Account(context.Background(), "x")
			if err != nil {
				t.Fatal(err)
			}
			if a.Owner != tc.wantOwner || (a.Floor == nil) != (tc.wantFloor == nil) || a.Floor != nil && *a.Floor != *tc.wantFloor {
				t.Errorf("owner %q floor %v, want %q %v", a.Owner, a.Floor, tc.wantOwner, tc.wantFloor)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
