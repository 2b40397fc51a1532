package e2e

import (
	"fmt"
	"net/http"
	"syscall"
	"testing"
)

// TestAccountsThroughTheStack runs the accounts' whole story on the local stack, workflow included: open a funding
// account and two customer accounts, fund one from the funding account, pay the other, list the payer's transfers;
// a customer account still refuses an overdraft while the funding account is below zero; and the seed's balances
// are opening transfers from funding-EUR that a restart on the same --data-dir does not repeat.
func TestAccountsThroughTheStack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startStack(t, "--data-dir", dir)
	operator := userCaller("operator")
	open := func(key string, body map[string]any, want int) map[string]any {
		t.Helper()
		r := s.do(http.MethodPost, "/accounts", body, map[string]string{"Idempotency-Key": key})
		if r.Status != want {
			t.Fatalf("POST /accounts %v: %d %s, want %d", body, r.Status, r.RawBody, want)
		}
		return r.Body
	}
	if r := operator.send(s, http.MethodPost, "/operator/accounts", map[string]any{"accountId": "funding-e2e", "currency": "EUR", "kind": "funding"},
		map[string]string{"Idempotency-Key": "e2e-open-funding"}); r.Status != http.StatusCreated {
		t.Fatalf("the operator opens funding-e2e: %d %s", r.Status, r.RawBody)
	}
	open("e2e-open-payer", map[string]any{"accountId": "acc-payer", "currency": "EUR"}, http.StatusCreated)
	payee := open("e2e-open-payee", map[string]any{"currency": "EUR"}, http.StatusCreated)["accountId"].(string)

	pay := func(key, src, dst string, amount int64) map[string]any {
		t.Helper()
		return s.waitTerminal(s.submitAccepted("submit "+key, key, transferBody(src, dst, amount, "EUR")), settle)
	}
	fund := operator.send(s, http.MethodPost, "/operator/transfers", transferBody("funding-e2e", "acc-payer", 5000, "EUR"),
		map[string]string{"Idempotency-Key": "e2e-fund"})
	if fund.Status != http.StatusAccepted {
		t.Fatalf("the operator funds acc-payer: %d %s", fund.Status, fund.RawBody)
	}
	fundID := fund.Body["transferId"].(string)
	if tr := s.waitTerminalAs(func() response { return operator.send(s, http.MethodGet, "/operator/transfers/"+fundID, nil, nil) }, fundID, settle); tr["status"] != "COMPLETED" {
		t.Fatalf("funding transfer: %v", tr)
	}
	if tr := pay("e2e-pay", "acc-payer", payee, 1250); tr["status"] != "COMPLETED" {
		t.Fatalf("payment: %v", tr)
	}
	refused := pay("e2e-overdraft", "acc-payer", payee, 3751)
	if refused["status"] != "FAILED" || refused["failure"].(map[string]any)["code"] != "INSUFFICIENT_FUNDS" {
		t.Errorf("an overdraft of a customer account: %v", refused)
	}
	for id, want := range map[string]int64{"funding-e2e": -5000, "acc-payer": 3750, payee: 1250} {
		if b := s.balance(id); b != want {
			t.Errorf("%s balance %d, want %d", id, b, want)
		}
	}

	r := s.do(http.MethodGet, "/accounts/acc-payer/transfers", nil, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("listing: %d %s", r.Status, r.RawBody)
	}
	entries := r.Body["transfers"].([]any)
	// The refused transfer never touched the account: two entries, newest first.
	if len(entries) != 2 {
		t.Fatalf("acc-payer's transfers: %s", r.RawBody)
	}
	first, second := entries[0].(map[string]any), entries[1].(map[string]any)
	if first["leg"] != "DEBIT" || first["amount"] != -1250.0 || first["counterpartyAccountId"] != payee || first["status"] != "COMPLETED" ||
		second["leg"] != "CREDIT" || second["amount"] != 5000.0 || second["counterpartyAccountId"] != "funding-e2e" {
		t.Errorf("acc-payer's transfers: %s", r.RawBody)
	}

	// The seed: acc-alice's balance is its opening transfer, and EUR sums to 0 with funding-EUR.
	openings := func(s *stack) []any {
		t.Helper()
		r := s.do(http.MethodGet, "/accounts/acc-alice/transfers", nil, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("acc-alice's transfers: %d %s", r.Status, r.RawBody)
		}
		return r.Body["transfers"].([]any)
	}
	seeded := openings(s)
	if len(seeded) != 1 || seeded[0].(map[string]any)["counterpartyAccountId"] != "funding-EUR" || seeded[0].(map[string]any)["status"] != "COMPLETED" {
		t.Fatalf("acc-alice's opening transfer: %v", seeded)
	}
	opening := seeded[0].(map[string]any)["transferId"].(string)
	// The opening transfers are the seed's operator's: the account's owner sees them in its listing, not by id.
	if tr := s.do(http.MethodGet, "/transfers/"+opening, nil, nil); tr.Status != http.StatusNotFound {
		t.Errorf("the owner GETs the operator's opening transfer: %d %s, want 404", tr.Status, tr.RawBody)
	}
	if tr := operator.send(s, http.MethodGet, "/operator/transfers/"+opening, nil, nil); tr.Status != http.StatusOK || tr.Body["reference"] != "opening balance" {
		t.Errorf("GET the opening transfer: %d %s", tr.Status, tr.RawBody)
	}
	if h := operator.send(s, http.MethodGet, "/operator/transfers/"+opening+"/history", nil, nil); h.Status != http.StatusOK || len(h.Body["ledger"].([]any)) != 2 {
		t.Errorf("the opening transfer's history: %d %s", h.Status, h.RawBody)
	}
	funding := s.balance("funding-EUR")
	var eur int64
	for _, a := range accounts {
		if a["currency"] == "EUR" {
			eur += s.balance(a["accountId"].(string))
		}
	}
	if eur+funding != 0 {
		t.Errorf("seeded EUR accounts %d + funding-EUR %d = %d, want 0", eur, funding, eur+funding)
	}

	s.stop(syscall.SIGTERM)
	s2 := startStack(t, "--data-dir", dir)
	if got := s2.balance("funding-EUR"); got != funding {
		t.Errorf("after a restart funding-EUR is %d, was %d: the seed ran again", got, funding)
	}
	if again := openings(s2); len(again) != 1 || fmt.Sprint(again[0]) != fmt.Sprint(seeded[0]) {
		t.Errorf("after a restart acc-alice's transfers are %v, were %v", again, seeded)
	}
	if b := s2.balance("acc-payer"); b != 3750 {
		t.Errorf("after a restart acc-payer is %d, want 3750", b)
	}
}
