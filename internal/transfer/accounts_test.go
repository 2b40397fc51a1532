package transfer_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transfer"
)

func (h *harness) postAccount(key, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.postJSON("/accounts", key, body)
}

func (h *harness) listTransfers(account string, query map[string]string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.getPath("/accounts/{accountId}/transfers", "/accounts/"+account+"/transfers", map[string]string{"accountId": account}, query)
}

// TestOpenAccount: 201 with the account and Location; a replay is 200 with Idempotent-Replayed and writes nothing;
// the key with another body is 422; the id with another key and the same attributes is 200 (already open), with
// other attributes 409 ACCOUNT_EXISTS; an id the API chooses; a key used for a transfer may open an account.
func TestOpenAccount(t *testing.T) {
	h := newHarness(t)
	resp := h.postAccount("open-1", `{"currency":"EUR","accountId":"acc-erin"}`)
	var a transfer.AccountView
	decode(t, resp, &a)
	want := transfer.AccountView{AccountID: "acc-erin", Kind: "customer", Currency: "EUR", Balance: 0, Version: 1,
		CreatedAt: "2026-11-21T10:00:00.123Z", UpdatedAt: "2026-11-21T10:00:00.123Z",
		Links: transfer.AccountLinks{Self: "/accounts/acc-erin", Transfers: "/accounts/acc-erin/transfers"}}
	if resp.StatusCode != http.StatusCreated || a != want || resp.Headers["Location"] != "/accounts/acc-erin" {
		t.Fatalf("open: %d %+v %v", resp.StatusCode, a, resp.Headers)
	}
	if _, ok := resp.Headers["Idempotent-Replayed"]; ok {
		t.Errorf("a first answer says Idempotent-Replayed")
	}
	items := h.items()
	if items != 2 {
		t.Errorf("items after one open = %d, want 2 (the account and its key record)", items)
	}

	h.clock.Advance(time.Minute)
	// Same request, other spelling: the canonical request is the same.
	resp = h.postAccount("open-1", `{ "accountId": "acc-erin", "kind": "customer", "currency": "EUR" }`)
	var replay transfer.AccountView
	decode(t, resp, &replay)
	if resp.StatusCode != http.StatusOK || resp.Headers["Idempotent-Replayed"] != "true" || replay != want {
		t.Errorf("replay: %d %v %+v", resp.StatusCode, resp.Headers, replay)
	}
	wantProblem(t, h.postAccount("open-1", `{"currency":"USD","accountId":"acc-erin"}`), 422, "IDEMPOTENCY_KEY_REUSED")
	wantProblem(t, h.postAccount("open-1", `{"currency":"EUR","accountId":"acc-frank"}`), 422, "IDEMPOTENCY_KEY_REUSED")

	resp = h.postAccount("open-2", `{"currency":"EUR","accountId":"acc-erin","kind":"customer"}`)
	if resp.StatusCode != http.StatusOK || resp.Headers["Idempotent-Replayed"] != "" {
		t.Errorf("same account, same attributes, another key: %d %v %s", resp.StatusCode, resp.Headers, resp.Body)
	}
	wantProblem(t, h.postAccount("open-3", `{"currency":"USD","accountId":"acc-erin"}`), 409, "ACCOUNT_EXISTS")
	wantProblem(t, h.postAccount("open-4", `{"currency":"EUR","accountId":"acc-erin","kind":"funding"}`), 403, "OPERATOR_REQUIRED")
	if got := h.items(); got != items {
		t.Errorf("items = %d after replays and refusals, want %d: they write nothing", got, items)
	}

	// An id chosen by the API, kept by the key: the replay names the same account.
	resp = h.postAccount("open-5", `{"currency":"GBP","kind":"customer"}`)
	var gen transfer.AccountView
	decode(t, resp, &gen)
	if resp.StatusCode != http.StatusCreated || !regexp.MustCompile(`^acc_[a-z2-7]{26}$`).MatchString(gen.AccountID) || gen.Kind != "customer" {
		t.Fatalf("generated: %d %+v", resp.StatusCode, gen)
	}
	resp = h.postAccount("open-5", `{"currency":"GBP"}`)
	var again transfer.AccountView
	decode(t, resp, &again)
	if resp.StatusCode != http.StatusOK || again.AccountID != gen.AccountID {
		t.Errorf("replay of a generated id: %d %+v, want %s", resp.StatusCode, again, gen.AccountID)
	}

	// Transfers and accounts keep their keys apart: a transfer's key opens an account, and the transfer's replay
	// is still the transfer.
	if resp := h.post("shared-key", aliceToBob); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("transfer: %d %s", resp.StatusCode, resp.Body)
	}
	if resp := h.postAccount("shared-key", `{"currency":"EUR"}`); resp.StatusCode != http.StatusCreated {
		t.Errorf("an account with a transfer's key: %d %s", resp.StatusCode, resp.Body)
	}
	h.clock.Advance(time.Minute)
	var tr transfer.Resource
	decode(t, h.post("shared-key", aliceToBob), &tr)
	if tr.SourceAccountID != "acc-alice" {
		t.Errorf("the transfer's replay after the account: %+v", tr)
	}

	// Another caller's key is another key.
	req := events.APIGatewayProxyRequest{
		Resource: "/accounts", Path: "/accounts", HTTPMethod: http.MethodPost,
		Headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": "open-1"},
		Body:    `{"currency":"EUR","accountId":"acc-grace"}`,
	}
	req.RequestContext.Identity.UserArn = "arn:aws:iam::123456789012:user/other"
	if resp := h.do(req); resp.StatusCode != http.StatusCreated {
		t.Errorf("another caller's key open-1: %d %s", resp.StatusCode, resp.Body)
	}
}

// TestOpenAccountRejectsWithoutWriting: every 4xx names its problem (and each bad field) and writes nothing.
func TestOpenAccountRejectsWithoutWriting(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name, key, contentType, body string
		status                       int
		code                         string
		fields                       []string
	}{
		{name: "no key", body: `{"currency":"EUR"}`, status: 400, code: "IDEMPOTENCY_KEY_MISSING"},
		{name: "bad key", key: `"a b"`, body: `{"currency":"EUR"}`, status: 400, code: "IDEMPOTENCY_KEY_INVALID"},
		{name: "text", key: "k", contentType: "text/plain", body: `{"currency":"EUR"}`, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "too large", key: "k", body: `{"currency":"EUR","accountId":"` + strings.Repeat("a", 17<<10) + `"}`, status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "not an object", key: "k", body: `[]`, status: 400, code: "VALIDATION_ERROR", fields: []string{"body"}},
		{name: "every field bad", key: "k", body: `{"currency":"eur","accountId":"a/b","kind":"savings","balance":5}`, status: 400,
			code: "VALIDATION_ERROR", fields: []string{"balance", "accountId", "currency", "kind"}},
		{name: "no currency", key: "k", body: `{"accountId":"acc-x"}`, status: 400, code: "VALIDATION_ERROR", fields: []string{"currency"}},
		{name: "empty id", key: "k", body: `{"currency":"EUR","accountId":""}`, status: 400, code: "VALIDATION_ERROR", fields: []string{"accountId"}},
		{name: "id not a string", key: "k", body: `{"currency":"EUR","accountId":7}`, status: 400, code: "VALIDATION_ERROR", fields: []string{"accountId"}},
		{name: "repeated field", key: "k", body: `{"currency":"EUR","currency":"USD"}`, status: 400, code: "VALIDATION_ERROR", fields: []string{"body"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := events.APIGatewayProxyRequest{
				Resource: "/accounts", Path: "/accounts", HTTPMethod: http.MethodPost,
				Headers: map[string]string{"Content-Type": "application/json"}, Body: tc.body,
			}
			if tc.contentType != "" {
				req.Headers["Content-Type"] = tc.contentType
			}
			if tc.key != "" {
				req.Headers["Idempotency-Key"] = tc.key
			}
			p := wantProblem(t, h.do(req), tc.status, tc.code)
			var fields []string
			for _, e := range p.Errors {
				fields = append(fields, e.Field)
			}
			if !slices.Equal(fields, tc.fields) {
				t.Errorf("errors name %v, want %v", fields, tc.fields)
			}
			if n := h.items(); n != 0 {
				t.Errorf("%d items written", n)
			}
		})
	}
	resp := h.do(events.APIGatewayProxyRequest{Resource: "/accounts", Path: "/accounts", HTTPMethod: http.MethodGet})
	wantProblem(t, resp, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
}

// moveMoney submits a transfer through the API (its record) and applies its DEBIT and CREDIT as the workflow would,
// at the harness clock's time; it returns the transfer id.
func (h *harness) moveMoney(key, src, dst string, amount int64) string {
	h.t.Helper()
	body := fmt.Sprintf(`{"sourceAccountId":%q,"destinationAccountId":%q,"amount":%d,"currency":"EUR","reference":%q}`, src, dst, amount, key)
	var tr transfer.Resource
	decode(h.t, h.post(key, body), &tr)
	if tr.TransferID == "" {
		h.t.Fatalf("submit %s: no transfer", key)
	}
	rec, err := ledger.NewStore(h.db, h.table).GetRecord(context.Background(), tr.TransferID)
	if err != nil {
		h.t.Fatal(err)
	}
	l := ledger.NewLedger(h.db, h.table)
	for _, leg := range []string{ledger.LegDebit, ledger.LegCredit} {
		if _, _, err := l.ApplyLeg(context.Background(), rec.LegRequest(leg), h.clock.Now()); err != nil {
			h.t.Fatalf("%s %s: %v", leg, key, err)
		}
		h.clock.Advance(time.Millisecond)
	}
	return tr.TransferID
}

func (h *harness) page(account string, query map[string]string) transfer.AccountTransfers {
	h.t.Helper()
	resp := h.listTransfers(account, query)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("list %s %v: %d %s", account, query, resp.StatusCode, resp.Body)
	}
	var p transfer.AccountTransfers
	decode(h.t, resp, &p)
	return p
}

// TestAccountTransfersNewestFirstAcrossPages: the listing is newest first; paging with nextToken while new
// transfers arrive between pages neither repeats nor skips an entry (the new ones are newer than the first page,
// so they are not in the later pages); each entry names its leg, signed amount, counterparty and status.
func TestAccountTransfersNewestFirstAcrossPages(t *testing.T) {
	h := newHarness(t)
	store := ledger.NewStore(h.db, h.table)
	for _, id := range []string{"acc-alice", "acc-bob", "acc-carol"} {
		if _, err := store.CreateOwnedAccount(context.Background(), "anonymous", id, "EUR", 100000, h.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var before []string // the transfer ids touching acc-alice, oldest first
	for i := range 7 {
		h.clock.Advance(time.Second)
		if i%2 == 0 {
			before = append(before, h.moveMoney(fmt.Sprintf("t%d", i), "acc-alice", "acc-bob", int64(100+i)))
		} else {
			before = append(before, h.moveMoney(fmt.Sprintf("t%d", i), "acc-carol", "acc-alice", int64(100+i)))
		}
		h.moveMoney(fmt.Sprintf("other%d", i), "acc-bob", "acc-carol", 1) // not alice's
	}

	first := h.page("acc-alice", map[string]string{"limit": "3"})
	if first.NextToken == "" || len(first.Transfers) != 3 {
		t.Fatalf("page 1: %+v", first)
	}
	e := first.Transfers[0]
	want := transfer.AccountTransfer{TransferID: before[6], Leg: "DEBIT", Direction: "out", Amount: -106, Currency: "EUR",
		CounterpartyAccountID: "acc-bob", CreatedAt: e.CreatedAt, Status: "IN_PROGRESS", Reference: "t6",
		Links: transfer.AccountTransferLinks{Transfer: "/transfers/" + before[6]}}
	if e != want {
		t.Errorf("newest entry = %+v, want %+v", e, want)
	}
	if c := first.Transfers[1]; c.Leg != "CREDIT" || c.Direction != "in" || c.Amount != 105 || c.CounterpartyAccountID != "acc-carol" {
		t.Errorf("a CREDIT entry = %+v", c)
	}

	// New transfers between pages.
	h.clock.Advance(time.Second)
	newer := h.moveMoney("t-new", "acc-alice", "acc-carol", 5)
	got := slices.Clone(first.Transfers)
	token := first.NextToken
	for pages := 1; token != ""; pages++ {
		if pages > 10 {
			t.Fatal("more pages than entries")
		}
		p := h.page("acc-alice", map[string]string{"limit": "3", "nextToken": token})
		got = append(got, p.Transfers...)
		token = p.NextToken
		h.clock.Advance(time.Second)
		h.moveMoney(fmt.Sprintf("t-during-%d", pages), "acc-carol", "acc-alice", 7)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.TransferID)
	}
	wantIDs := slices.Clone(before)
	slices.Reverse(wantIDs)
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("paged ids = %v, want %v (newest first, no repeats, no gaps)", ids, wantIDs)
	}
	for i := 1; i < len(got); i++ {
		if got[i].CreatedAt > got[i-1].CreatedAt {
			t.Errorf("entry %d (%s) is newer than entry %d (%s)", i, got[i].CreatedAt, i-1, got[i-1].CreatedAt)
		}
	}
	// A fresh listing starts with the newest, those added while paging included.
	fresh := h.page("acc-alice", nil)
	// t-new, then one transfer after each of the two later pages: t-during-1 and t-during-2, newest first.
	if len(fresh.Transfers) != len(before)+3 || fresh.Transfers[2].TransferID != newer {
		t.Fatalf("fresh listing: %d entries, 3rd %s, want %d and %s", len(fresh.Transfers), fresh.Transfers[2].TransferID, len(before)+3, newer)
	}
	if fresh.NextToken != "" {
		t.Errorf("a listing shorter than the default page has nextToken %q", fresh.NextToken)
	}
	// To another caller the listing is a missing account's: the same 404, word for word.
	req := events.APIGatewayProxyRequest{Resource: "/accounts/{accountId}/transfers", Path: "/accounts/acc-alice/transfers",
		HTTPMethod: http.MethodGet, PathParameters: map[string]string{"accountId": "acc-alice"}}
	req.RequestContext.Identity.UserArn = "arn:aws:iam::123456789012:user/other"
	foreign := h.do(req)
	req.PathParameters["accountId"], req.Path = "acc-nobody", "/accounts/acc-nobody/transfers"
	missing := h.do(req)
	if foreign.StatusCode != http.StatusNotFound || foreign.Body != missing.Body {
		t.Errorf("another caller's listing: %d %s, want the missing account's 404 %s", foreign.StatusCode, foreign.Body, missing.Body)
	}
}

// TestAccountTransfersRefusesForeignAndForgedTokens: a token of another account (as given, or with the account
// swapped), or one that names no entry of the account, is a 400 naming nextToken, never a listing; limits outside 1 to 50 are 400; an
// unknown account is 404.
func TestAccountTransfersRefusesForeignAndForgedTokens(t *testing.T) {
	h := newHarness(t)
	store := ledger.NewStore(h.db, h.table)
	for _, id := range []string{"acc-alice", "acc-bob"} {
		if _, err := store.CreateOwnedAccount(context.Background(), "anonymous", id, "EUR", 1000, h.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		h.clock.Advance(time.Second)
		h.moveMoney(fmt.Sprintf("t%d", i), "acc-alice", "acc-bob", 10)
	}
	bobs := h.page("acc-bob", map[string]string{"limit": "1"})
	if bobs.NextToken == "" {
		t.Fatal("no nextToken")
	}
	raw, err := base64.RawURLEncoding.DecodeString(bobs.NextToken)
	if err != nil {
		t.Fatalf("token %q: %v", bobs.NextToken, err)
	}
	forged := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tokens := map[string]string{
		"another account's":      bobs.NextToken,
		"not base64":             "!!!",
		"not JSON":               forged("hello"),
		"account swapped":        forged(strings.Replace(string(raw), "acc-bob", "acc-alice", 1)),
		"cursor not an entry":    forged(`{"v":1,"a":"acc-alice","k":"2026-11-21T10:00:00.000Z#x#DEBIT"}`),
		"unknown field":          forged(`{"v":1,"a":"acc-alice","k":"2026-11-21T10:00:00.000Z#tr_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa#DEBIT","x":1}`),
		"another version":        forged(`{"v":2,"a":"acc-alice","k":"2026-11-21T10:00:00.000Z#tr_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa#DEBIT"}`),
		"empty":                  "",
		"padded standard base64": base64.StdEncoding.EncodeToString(raw),
	}
	for name, tok := range tokens {
		t.Run(name, func(t *testing.T) {
			p := wantProblem(t, h.listTransfers("acc-alice", map[string]string{"nextToken": tok}), 400, "VALIDATION_ERROR")
			if len(p.Errors) != 1 || p.Errors[0].Field != "nextToken" {
				t.Errorf("errors = %+v", p.Errors)
			}
		})
	}
	// acc-alice's own token is accepted.
	alices := h.page("acc-alice", map[string]string{"limit": "2"})
	if p := h.page("acc-alice", map[string]string{"nextToken": alices.NextToken}); len(p.Transfers) != 1 {
		t.Errorf("acc-alice's own token lists %d entries, want the last 1", len(p.Transfers))
	}
	for _, limit := range []string{"0", "51", "x", "-1", ""} {
		p := wantProblem(t, h.listTransfers("acc-alice", map[string]string{"limit": limit}), 400, "VALIDATION_ERROR")
		if len(p.Errors) != 1 || p.Errors[0].Field != "limit" {
			t.Errorf("limit %q: errors = %+v", limit, p.Errors)
		}
	}
	if p := h.page("acc-alice", map[string]string{"limit": "50"}); len(p.Transfers) != 3 {
		t.Errorf("limit 50: %d entries", len(p.Transfers))
	}
	wantProblem(t, h.listTransfers("acc-nobody", nil), 404, "ACCOUNT_NOT_FOUND")
	wantProblem(t, h.listTransfers("bad.id", nil), 404, "ACCOUNT_NOT_FOUND")
}
