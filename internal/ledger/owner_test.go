package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// TestDebitTakesOnlyTheOwnersMoney: a DEBIT on a client's authority takes money only out of an account that client
// owns; out of any other account (another's, a funding account, one without an owner) it is refused exactly as a
// DEBIT out of a missing account, before the account's currency or balance could tell that it exists, and writes
// nothing. An operator's DEBIT takes money only out of accounts without an owner. A DEBIT with no authority moves
// nothing, yet an applied DEBIT repeated without one is still its replay.
func TestDebitTakesOnlyTheOwnersMoney(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, a := range []struct {
		id, owner, currency string
		balance             int64
	}{
		{"mine", testScope, "EUR", 100}, {"theirs", "mallory", "EUR", 100}, {"theirs-usd", "mallory", "USD", 100},
		{"dst", "someone", "EUR", 0},
	} {
		if _, err := e.store.CreateOwnedAccount(ctx, a.owner, a.id, a.currency, a.balance, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.CreateAccountOfKind(ctx, "funding-EUR", "EUR", ledger.KindFunding, 0, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateAccount(ctx, "ownerless", "EUR", 100, t0); err != nil {
		t.Fatal(err)
	}
	notFound := func(t *testing.T, err error, account string) {
		t.Helper()
		var ae *ledger.AccountError
		if !errors.As(err, &ae) || !errors.Is(err, ledger.ErrAccountNotFound) || ae.AccountID != account {
			t.Errorf("err = %v, want ErrAccountNotFound naming %s", err, account)
		}
	}
	for _, tc := range []struct {
		name, source, currency string
		amount                 int64
		operator               bool
	}{
		{"another's account", "theirs", "EUR", 10, false},
		{"another's account, more than its balance", "theirs", "EUR", 1000, false},
		{"another's account in another currency", "theirs-usd", "EUR", 10, false},
		{"a funding account", "funding-EUR", "EUR", 10, false},
		{"an account without owner", "ownerless", "EUR", 10, false},
		{"a missing account", "nobody", "EUR", 10, false},
		{"operator: an owned account", "mine", "EUR", 10, true},
		{"operator: a missing account", "nobody", "EUR", 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.balance(t, "dst")
			var req ledger.LegRequest
			if tc.operator {
				id := e.operatorTransfer(t, tc.source, "dst", tc.amount, tc.currency)
				req = operatorDebit(id, tc.source, "dst", tc.amount)
			} else {
				id := e.transfer(t, tc.source, "dst", tc.amount, tc.currency)
				req = debitTo(id, tc.source, "dst", tc.amount)
			}
			_, _, err := e.ledger.ApplyLeg(ctx, req, t0)
			notFound(t, err, tc.source)
			if entries, err := e.store.Entries(ctx, req.TransferID); err != nil || len(entries) != 0 {
				t.Errorf("entries %v, %v; want none", entries, err)
			}
			if got := e.balance(t, "dst"); got != before {
				t.Errorf("dst balance %d, want %d", got, before)
			}
		})
	}
	for _, a := range []string{"theirs", "theirs-usd", "ownerless", "mine"} {
		if got := e.balance(t, a); got != 100 {
			t.Errorf("%s balance %d, want 100 untouched", a, got)
		}
	}

	// The owner's own DEBIT, and an operator's of the account without owner, apply.
	mine := e.transfer(t, "mine", "dst", 10, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, debitTo(mine, "mine", "dst", 10), t0); err != nil {
		t.Fatalf("owner's DEBIT: %v", err)
	}
	legacy := e.operatorTransfer(t, "ownerless", "dst", 10, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, operatorDebit(legacy, "ownerless", "dst", 10), t0); err != nil {
		t.Fatalf("operator's DEBIT of an account without owner: %v", err)
	}

	// Without authority: refused as missing; the DEBIT already applied is still its replay.
	noAuth := debitTo(mine, "mine", "dst", 10)
	noAuth.Owner = ""
	if _, replayed, err := e.ledger.ApplyLeg(ctx, noAuth, t0); err != nil || !replayed {
		t.Errorf("applied DEBIT repeated without authority: replayed %v, %v; want its replay", replayed, err)
	}
	fresh := e.transfer(t, "mine", "dst", 10, "EUR")
	noAuth = debitTo(fresh, "mine", "dst", 10)
	noAuth.Owner = ""
	_, _, err := e.ledger.ApplyLeg(ctx, noAuth, t0)
	notFound(t, err, "mine")

	// The record fences the authority: a DEBIT naming an owner other than the submitter, or an operator's DEBIT of
	// a client's transfer, is refused whatever the account says.
	forged := debitTo(fresh, "mine", "dst", 10)
	forged.Owner = "mallory"
	if _, _, err := e.ledger.ApplyLeg(ctx, forged, t0); !errors.Is(err, ledger.ErrLegMismatch) {
		t.Errorf("DEBIT naming another owner than the record's: %v, want ErrLegMismatch", err)
	}
	forged = operatorDebit(fresh, "mine", "dst", 10)
	if _, _, err := e.ledger.ApplyLeg(ctx, forged, t0); !errors.Is(err, ledger.ErrLegMismatch) {
		t.Errorf("operator's DEBIT of a client's transfer: %v, want ErrLegMismatch", err)
	}
}

// TestAssignOwner: an operator gives an account without owner its owner once; the same owner again is answered with
// the account, another owner is ErrHasOwner, a funding account ErrFundingAccount, a missing one ErrNotFound.
func TestAssignOwner(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.store.CreateAccount(ctx, "legacy", "EUR", 5, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateAccountOfKind(ctx, "funding-EUR", "EUR", ledger.KindFunding, 0, t0); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Hour)
	a, err := e.store.AssignOwner(ctx, "legacy", "alice", later)
	if err != nil || a.Owner != "alice" || a.Balance != 5 || a.Version != 1 || a.UpdatedAt != later.Format(ledger.TimeLayout) {
		t.Fatalf("assign: %+v, %v", a, err)
	}
	if again, err := e.store.AssignOwner(ctx, "legacy", "alice", later.Add(time.Hour)); err != nil || again != a {
		t.Errorf("the same owner again: %+v, %v; want %+v", again, err, a)
	}
	for _, tc := range []struct {
		name, account, owner string
		want                 error
	}{
		{"another owner", "legacy", "mallory", ledger.ErrHasOwner},
		{"a funding account", "funding-EUR", "alice", ledger.ErrFundingAccount},
		{"a missing account", "nobody", "alice", ledger.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.store.AssignOwner(ctx, tc.account, tc.owner, later); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if got, _ := e.store.GetAccount(ctx, "legacy"); got.Owner != "alice" {
		t.Errorf("owner %q, want alice", got.Owner)
	}
}

// TestOpenAccountOwners: an account opened for one owner is AlreadyOpen to a new key of the same owner only; to
// another owner it is ErrAccountConflict, which returns nothing of the account. A funding account gets its floor and
// no owner.
func TestOpenAccountOwners(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	req := ledger.OpenRequest{Scope: "alice", IdempotencyKey: "k1", RequestHash: "h1", AccountID: "acc-a", Currency: "EUR",
		Kind: ledger.KindCustomer, Owner: "alice"}
	if a, oc, err := e.store.OpenAccount(ctx, req, t0, 0); err != nil || oc != ledger.Opened || a.Owner != "alice" {
		t.Fatalf("open: %+v %v %v", a, oc, err)
	}
	same := req
	same.IdempotencyKey = "k2"
	if _, oc, err := e.store.OpenAccount(ctx, same, t0, 0); err != nil || oc != ledger.AlreadyOpen {
		t.Errorf("same owner, new key: %v %v; want AlreadyOpen", oc, err)
	}
	other := same
	other.Scope, other.Owner = "mallory", "mallory"
	a, _, err := e.store.OpenAccount(ctx, other, t0, 0)
	if !errors.Is(err, ledger.ErrAccountConflict) || a != (ledger.Account{}) {
		t.Errorf("another owner: %+v, %v; want ErrAccountConflict and no account", a, err)
	}
	funding := ledger.OpenRequest{Scope: "op", IdempotencyKey: "k1", RequestHash: "h", AccountID: "funding-x", Currency: "EUR",
		Kind: ledger.KindFunding, Floor: aws.Int64(-500)}
	if a, _, err := e.store.OpenAccount(ctx, funding, t0, 0); err != nil || a.Owner != "" || a.FundingFloor() != -500 {
		t.Errorf("funding: %+v, %v", a, err)
	}
	for _, bad := range []ledger.OpenRequest{
		{Scope: "op", IdempotencyKey: "k9", RequestHash: "h", AccountID: "f2", Currency: "EUR", Kind: ledger.KindFunding},
		{Scope: "op", IdempotencyKey: "k9", RequestHash: "h", AccountID: "f2", Currency: "EUR", Kind: ledger.KindFunding, Floor: aws.Int64(1)},
		{Scope: "op", IdempotencyKey: "k9", RequestHash: "h", AccountID: "f2", Currency: "EUR", Kind: ledger.KindFunding, Floor: aws.Int64(0), Owner: "x"},
		{Scope: "op", IdempotencyKey: "k9", RequestHash: "h", AccountID: "f2", Currency: "EUR", Kind: ledger.KindCustomer, Floor: aws.Int64(0)},
	} {
		if _, _, err := e.store.OpenAccount(ctx, bad, t0, 0); err == nil {
			t.Errorf("OpenAccount(%+v) = nil error, want a refusal", bad)
		}
	}
}
