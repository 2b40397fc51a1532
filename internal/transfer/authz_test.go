package transfer_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// Callers of the authorization tests, as API Gateway reports them.
const (
	aliceArn    = "arn:aws:iam::123456789012:user/alice"
	malloryArn  = "arn:aws:iam::123456789012:user/mallory"
	operatorArn = "arn:aws:iam::123456789012:user/operator"
)

// call sends method on resource (path parameters filled from params) as the caller arn, with body when not empty.
func (h *harness) call(arn, method, resource string, params map[string]string, key, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	path := resource
	for k, v := range params {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	req := events.APIGatewayProxyRequest{Resource: resource, Path: path, HTTPMethod: method, PathParameters: params,
		Headers: map[string]string{}}
	if body != "" {
		req.Headers["Content-Type"], req.Body = "application/json", body
	}
	if key != "" {
		req.Headers["Idempotency-Key"] = key
	}
	req.RequestContext.Identity.UserArn = arn
	return h.do(req)
}

// TestClientRoutesServeOnlyTheOwner: accounts are their opener's; another client reads, lists and opens nothing of
// them, and each refusal is word for word what a missing account gets. A client opens no funding account and sets
// no owner or floor; the operator routes do, and read any account with its owner and floor.
func TestClientRoutesServeOnlyTheOwner(t *testing.T) {
	h := newHarness(t)
	acct := map[string]string{"accountId": "acc-a"}
	if resp := h.call(aliceArn, http.MethodPost, "/accounts", nil, "open", `{"accountId":"acc-a","currency":"EUR"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("alice opens acc-a: %d %s", resp.StatusCode, resp.Body)
	}
	if resp := h.call(aliceArn, http.MethodGet, "/accounts/{accountId}", acct, "", ""); resp.StatusCode != http.StatusOK ||
		strings.Contains(resp.Body, "owner") {
		t.Errorf("alice reads acc-a: %d %s (the owner is not shown to clients)", resp.StatusCode, resp.Body)
	}
	missing := map[string]string{"accountId": "acc-none"}
	for _, route := range []string{"/accounts/{accountId}", "/accounts/{accountId}/transfers"} {
		foreign := h.call(malloryArn, http.MethodGet, route, acct, "", "")
		none := h.call(malloryArn, http.MethodGet, route, missing, "", "")
		if foreign.StatusCode != http.StatusNotFound || foreign.Body != none.Body {
			t.Errorf("mallory GET %s of acc-a: %d %s, want the missing account's %d %s", route, foreign.StatusCode, foreign.Body, none.StatusCode, none.Body)
		}
	}
	wantProblem(t, h.call(malloryArn, http.MethodPost, "/accounts", nil, "take", `{"accountId":"acc-a","currency":"EUR"}`),
		http.StatusConflict, "ACCOUNT_EXISTS")
	wantProblem(t, h.call(malloryArn, http.MethodPost, "/accounts", nil, "fund", `{"accountId":"f","currency":"EUR","kind":"funding"}`),
		http.StatusForbidden, "OPERATOR_REQUIRED")
	p := wantProblem(t, h.call(malloryArn, http.MethodPost, "/accounts", nil, "own", `{"currency":"EUR","owner":"`+malloryArn+`","floor":-5}`),
		http.StatusBadRequest, "VALIDATION_ERROR")
	if len(p.Errors) != 2 {
		t.Errorf("a client's owner and floor: errors %+v, want both named", p.Errors)
	}
	if got := h.items(); got != 2 {
		t.Errorf("items = %d, want 2 (acc-a and its key): refusals write nothing", got)
	}

	// The operator: any account, with its owner; a funding account with its floor; accounts for others.
	var view transfer.AccountView
	decode(t, h.call(operatorArn, http.MethodGet, "/operator/accounts/{accountId}", acct, "", ""), &view)
	if view.Owner != "iam:"+aliceArn {
		t.Errorf("operator's view of acc-a: owner %q, want alice's scope", view.Owner)
	}
	resp := h.call(operatorArn, http.MethodPost, "/operator/accounts", nil, "fund", `{"accountId":"funding-x","currency":"EUR","kind":"funding","floor":-500}`)
	view = transfer.AccountView{}
	decode(t, resp, &view)
	if resp.StatusCode != http.StatusCreated || view.Floor == nil || *view.Floor != -500 || view.Owner != "" {
		t.Errorf("operator opens a funding account: %d %s", resp.StatusCode, resp.Body)
	}
	resp = h.call(operatorArn, http.MethodPost, "/operator/accounts", nil, "for-bob", `{"accountId":"acc-bob","currency":"EUR","owner":"arn:aws:sts::123456789012:assumed-role/bob/session-1"}`)
	decode(t, resp, &view)
	if resp.StatusCode != http.StatusCreated || view.Owner != "iam:arn:aws:sts::123456789012:assumed-role/bob" {
		t.Errorf("operator opens acc-bob for bob's role: %d %s", resp.StatusCode, resp.Body)
	}
	bob := "arn:aws:sts::123456789012:assumed-role/bob/session-2"
	if resp := h.call(bob, http.MethodGet, "/accounts/{accountId}", map[string]string{"accountId": "acc-bob"}, "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("bob, in another session of his role, reads acc-bob: %d %s", resp.StatusCode, resp.Body)
	}
}

// TestAssignOwnerRoute: an account without owner (opened before owners) is only operators' until one assigns it an
// owner; then it is that owner's, and no second owner can be assigned.
func TestAssignOwnerRoute(t *testing.T) {
	h := newHarness(t)
	if _, err := ledger.NewStore(h.db, h.table).CreateAccount(context.Background(), "acc-old", "EUR", 700, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	old := map[string]string{"accountId": "acc-old"}
	wantProblem(t, h.call(aliceArn, http.MethodGet, "/accounts/{accountId}", old, "", ""), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
	route := "/operator/accounts/{accountId}/owner"
	wantProblem(t, h.call(operatorArn, http.MethodPut, route, old, "", `{"owner":"not an arn"}`), http.StatusBadRequest, "VALIDATION_ERROR")
	wantProblem(t, h.call(operatorArn, http.MethodPut, route, old, "", `{"owner":"`+aliceArn+`","x":1}`), http.StatusBadRequest, "VALIDATION_ERROR")
	for range 2 { // the same owner again is the same answer
		if resp := h.call(operatorArn, http.MethodPut, route, old, "", `{"owner":"`+aliceArn+`"}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("assign: %d %s", resp.StatusCode, resp.Body)
		}
	}
	if resp := h.call(aliceArn, http.MethodGet, "/accounts/{accountId}", old, "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("alice reads acc-old once it is hers: %d %s", resp.StatusCode, resp.Body)
	}
	wantProblem(t, h.call(operatorArn, http.MethodPut, route, old, "", `{"owner":"`+malloryArn+`"}`), http.StatusConflict, "ACCOUNT_HAS_OWNER")
	wantProblem(t, h.call(operatorArn, http.MethodPut, route, map[string]string{"accountId": "nobody"}, "", `{"owner":"`+aliceArn+`"}`),
		http.StatusNotFound, "ACCOUNT_NOT_FOUND")
}

// TestTransferBounds: an amount over MAX_TRANSFER_AMOUNT is refused before anything is written, naming amount; a
// key used on the client route is not a replay on the operator route; an operator's transfer is readable by any
// operator, and by its submitter's client route, not by another client.
func TestTransferBounds(t *testing.T) {
	h := newHarness(t)
	h.h.MaxTransferAmount = 1000
	body := `{"sourceAccountId":"acc-a","destinationAccountId":"acc-b","amount":1001,"currency":"EUR"}`
	p := wantProblem(t, h.call(aliceArn, http.MethodPost, "/transfers", nil, "big", body), http.StatusBadRequest, "VALIDATION_ERROR")
	if len(p.Errors) != 1 || p.Errors[0].Field != "amount" {
		t.Errorf("errors %+v, want amount named", p.Errors)
	}
	if got := h.items(); got != 0 {
		t.Errorf("items = %d after a refused transfer, want 0", got)
	}
	ok := `{"sourceAccountId":"acc-a","destinationAccountId":"acc-b","amount":1000,"currency":"EUR"}`
	var tr transfer.Resource
	decode(t, h.call(operatorArn, http.MethodPost, "/transfers", nil, "k", ok), &tr)
	wantProblem(t, h.call(operatorArn, http.MethodPost, "/operator/transfers", nil, "k", ok), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	var op transfer.Resource
	resp := h.call(operatorArn, http.MethodPost, "/operator/transfers", nil, "k2", ok)
	decode(t, resp, &op)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("operator transfer: %d %s", resp.StatusCode, resp.Body)
	}
	recs := h.records()
	operators := 0
	for _, r := range recs {
		if r.Operator {
			operators++
			if r.TransferID != op.TransferID {
				t.Errorf("record %s is marked an operator's", r.TransferID)
			}
		}
	}
	if operators != 1 {
		t.Errorf("%d operator records, want 1", operators)
	}
	id := map[string]string{"transferId": op.TransferID}
	for _, tc := range []struct {
		name, arn, route string
		want             int
	}{
		{"another operator, operator route", "arn:aws:iam::123456789012:user/operator-2", "/operator/transfers/{transferId}", http.StatusOK},
		{"another operator, its history", "arn:aws:iam::123456789012:user/operator-2", "/operator/transfers/{transferId}/history", http.StatusOK},
		{"the submitter, client route", operatorArn, "/transfers/{transferId}", http.StatusOK},
		{"a client, client route", aliceArn, "/transfers/{transferId}", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if resp := h.call(tc.arn, http.MethodGet, tc.route, id, "", ""); resp.StatusCode != tc.want {
				t.Errorf("%d %s, want %d", resp.StatusCode, resp.Body, tc.want)
			}
		})
	}
}
