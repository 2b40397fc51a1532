package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// TestFundingAccountsMayGoNegative: a DEBIT of a funding account below zero is applied (in the same single
// transaction, no extra request), while a customer account, and an account item without a kind, still refuse an
// overdraft; the balances still sum to what they did.
func TestFundingAccountsMayGoNegative(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.store.CreateAccountOfKind(ctx, "funding-EUR", "EUR", ledger.KindFunding, 0, t0); err != nil {
		t.Fatal(err)
	}
	e.account(t, "acc-alice", "EUR", 0)
	e.account(t, "dst", "EUR", 0)
	// An account written before kinds existed has no kind attribute: it is a customer account.
	item, err := attributevalue.MarshalMap(map[string]any{"pk": ledger.AccountKey("acc-old"), "sk": "ACCOUNT", "accountId": "acc-old",
		"balance": 10, "currency": "EUR", "version": 1, "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: item}); err != nil {
		t.Fatal(err)
	}
	if a, err := e.store.GetAccount(ctx, "acc-old"); err != nil || a.AccountKind() != ledger.KindCustomer {
		t.Fatalf("an account without kind: %+v, %v; want a customer account", a, err)
	}

	calls, gets := 0, 0
	counted := ledger.NewLedger(&hookedDB{Client: e.db, gets: &gets, before: func(*dynamodb.TransactWriteItemsInput) { calls++ }}, e.table)
	fund := e.operatorTransfer(t, "funding-EUR", "acc-alice", 5000, "EUR")
	if _, _, err := counted.ApplyLeg(ctx, operatorDebit(fund, "funding-EUR", "acc-alice", 5000), t0); err != nil {
		t.Fatalf("DEBIT of the funding account below zero: %v", err)
	}
	if calls != 1 || gets != 1 {
		t.Errorf("the funding DEBIT took %d transactions and %d reads, want 1 and 1 (its floor)", calls, gets)
	}
	e.apply(t, leg(fund, ledger.LegCredit, "acc-alice", 5000))
	if f, a := e.balance(t, "funding-EUR"), e.balance(t, "acc-alice"); f != -5000 || a != 5000 {
		t.Errorf("balances funding %d alice %d, want -5000 5000", f, a)
	}

	over := e.transfer(t, "acc-alice", "dst", 5001, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, debitTo(over, "acc-alice", "dst", 5001), t0); !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Errorf("overdraft of customer acc-alice: %v, want ErrInsufficientFunds", err)
	}
	// An account without owner (written before owners) is an operator's to debit, and still a customer account.
	old := e.operatorTransfer(t, "acc-old", "dst", 11, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, operatorDebit(old, "acc-old", "dst", 11), t0); !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Errorf("operator's overdraft of acc-old: %v, want ErrInsufficientFunds", err)
	}
	// The funding account stops at its floor: DefaultFundingFloor, as CreateAccountOfKind opened it.
	if _, err := e.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.table),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: ledger.AccountKey("funding-EUR")},
			"sk": &ddbtypes.AttributeValueMemberS{Value: "ACCOUNT"}},
		UpdateExpression:          aws.String("SET balance = :b"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":b": &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(ledger.DefaultFundingFloor + 10)}},
	}); err != nil {
		t.Fatal(err)
	}
	under := e.operatorTransfer(t, "funding-EUR", "dst", 11, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, operatorDebit(under, "funding-EUR", "dst", 11), t0); !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Errorf("a funding DEBIT past its floor: %v, want ErrInsufficientFunds", err)
	}
	at := e.operatorTransfer(t, "funding-EUR", "dst", 10, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, operatorDebit(at, "funding-EUR", "dst", 10), t0); err != nil {
		t.Errorf("a funding DEBIT down to its floor: %v", err)
	}
	if got := e.balance(t, "funding-EUR"); got != ledger.DefaultFundingFloor {
		t.Errorf("funding balance %d, want its floor %d", got, ledger.DefaultFundingFloor)
	}
}

// TestOpenAccountIsAtomicAndIdempotent: OpenAccount writes the key record and the account together, replays by key,
// refuses the key with another request, and tells an account already open from one open with other attributes.
func TestOpenAccountIsAtomicAndIdempotent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	req := ledger.OpenRequest{Scope: "s", IdempotencyKey: "k1", RequestHash: "h1", AccountID: "acc-a", Currency: "EUR", Kind: ledger.KindFunding,
		Floor: aws.Int64(-1000)}
	a, oc, err := e.store.OpenAccount(ctx, req, t0, time.Hour)
	if err != nil || oc != ledger.Opened || a.Balance != 0 || a.Kind != ledger.KindFunding || a.Version != 1 {
		t.Fatalf("open: %+v %v %v", a, oc, err)
	}
	if _, oc, err := e.store.OpenAccount(ctx, req, t0.Add(time.Minute), time.Hour); err != nil || oc != ledger.Replayed {
		t.Errorf("replay: %v %v", oc, err)
	}
	other := req
	other.RequestHash = "h2"
	if _, _, err := e.store.OpenAccount(ctx, other, t0, time.Hour); !errors.Is(err, ledger.ErrKeyReused) {
		t.Errorf("key with another request: %v, want ErrKeyReused", err)
	}
	// After the key's TTL the key may open something else.
	other.AccountID = "acc-b"
	if _, oc, err := e.store.OpenAccount(ctx, other, t0.Add(2*time.Hour), time.Hour); err != nil || oc != ledger.Opened {
		t.Errorf("expired key reused: %v %v", oc, err)
	}
	same := req
	same.IdempotencyKey, same.RequestHash = "k3", "h3"
	if _, oc, err := e.store.OpenAccount(ctx, same, t0, 0); err != nil || oc != ledger.AlreadyOpen {
		t.Errorf("same account, another key: %v %v, want AlreadyOpen", oc, err)
	}
	same.Currency = "USD"
	if _, _, err := e.store.OpenAccount(ctx, same, t0, 0); !errors.Is(err, ledger.ErrAccountConflict) {
		t.Errorf("same id, other currency: %v, want ErrAccountConflict", err)
	}
	// The refused and already-open requests recorded no key: a key record exists only with its account.
	out, err := e.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.table), Key: map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: ledger.AccountKeyPK("s", "k3")}, "sk": &ddbtypes.AttributeValueMemberS{Value: "ACCOUNTKEY"}}})
	if err != nil || len(out.Item) != 0 {
		t.Errorf("key k3 recorded: %v %v", out.Item, err)
	}
}

// TestSeedOpeningsExplainEveryBalance: each seeded balance is a COMPLETED opening transfer from the currency's
// funding account, with its DEBIT and CREDIT; every balance is its entries' sum; each currency sums to 0; seeding
// again (a restart) writes nothing and changes nothing, even after the accounts moved on.
func TestSeedOpeningsExplainEveryBalance(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var openings []ledger.Opening
	for i := range 30 { // more than one transaction's worth in EUR
		openings = append(openings, ledger.Opening{AccountID: fmt.Sprintf("acc-%02d", i), Currency: "EUR", Balance: int64(i * 100)})
	}
	openings = append(openings, ledger.Opening{AccountID: "acc-usd", Currency: "USD", Balance: 700})
	opts := ledger.SeedOptions{Scope: "local", ExecutionArn: func(id string) string { return "arn:aws:states:us-east-1:1:execution:m:" + id }}
	res, err := e.store.SeedOpenings(ctx, openings, opts, t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Opened != 31 || res.Funded != 30 || res.Existing != 0 || res.Transactions != 3 {
		t.Errorf("result %+v, want 31 opened, 30 funded (acc-00 opens at 0), in 3 transactions", res)
	}
	check := func() {
		t.Helper()
		sums := map[string]int64{}
		for _, o := range openings {
			a, err := e.store.GetAccount(ctx, o.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			sums[o.Currency] += a.Balance
			id := ledger.OpeningTransferID("local", o.AccountID)
			entries, err := e.store.Entries(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if o.Balance == 0 {
				if len(entries) != 0 || a.Version != 1 {
					t.Errorf("%s opened at 0 has entries %v, version %d", o.AccountID, entries, a.Version)
				}
				continue
			}
			rec, err := e.store.GetTransfer(ctx, "local", id, t0)
			if err != nil {
				t.Fatalf("%s: opening transfer %s: %v", o.AccountID, id, err)
			}
			if rec.Status != ledger.StatusCompleted || rec.SourceAccountID != "funding-"+o.Currency || rec.DestinationAccountID != o.AccountID ||
				rec.Amount != o.Balance || rec.Reference != "opening balance" || rec.Origin != ledger.OriginOpeningBalance ||
				rec.ExecutionArn != opts.ExecutionArn(id) || len(rec.Legs) != 2 {
				t.Errorf("%s: opening transfer %+v", o.AccountID, rec)
			}
			if len(entries) != 2 || entries[0].Leg != ledger.LegCredit || entries[0].AccountID != o.AccountID ||
				entries[1].Leg != ledger.LegDebit || entries[1].AccountID != "funding-"+o.Currency || entries[1].Amount != o.Balance {
				t.Errorf("%s: entries %+v", o.AccountID, entries)
			}
			if a.Balance != o.Balance || a.Version != 2 {
				t.Errorf("%s: balance %d version %d, want %d and 2", o.AccountID, a.Balance, a.Version, o.Balance)
			}
		}
		for cur, want := range map[string]struct{ sum, debits int64 }{"EUR": {43500, 29}, "USD": {700, 1}} {
			f, err := e.store.GetAccount(ctx, ledger.FundingAccountID(cur))
			if err != nil {
				t.Fatal(err)
			}
			if f.AccountKind() != ledger.KindFunding || f.Balance != -want.sum || f.Version != 1+want.debits || sums[cur]+f.Balance != 0 {
				t.Errorf("%s: %+v, customers sum %d; want a funding account at %d, version %d, and a sum of 0", cur, f, sums[cur], -want.sum, 1+want.debits)
			}
		}
	}
	check()
	// The funding account's listing shows its DEBITs, each naming the account it funded.
	page, err := e.store.ListActivity(ctx, "funding-USD", 10, "")
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Counterparty != "acc-usd" || page.Entries[0].Leg != ledger.LegDebit {
		t.Errorf("funding-USD's activity: %+v, %v", page, err)
	}

	res, err = e.store.SeedOpenings(ctx, openings, opts, t0.Add(time.Hour))
	if err != nil || res.Opened != 0 || res.Existing != 31 || res.Transactions != 0 {
		t.Errorf("seeding again: %+v, %v; want everything existing and no transaction", res, err)
	}
	check()

	// A new account in the file is opened; the others are left alone.
	openings = append(openings, ledger.Opening{AccountID: "acc-late", Currency: "EUR", Balance: 1})
	if res, err = e.store.SeedOpenings(ctx, openings, opts, t0.Add(2*time.Hour)); err != nil || res.Opened != 1 || res.Existing != 31 {
		t.Errorf("seeding with one more: %+v, %v", res, err)
	}
	for _, bad := range [][]ledger.Opening{
		{{AccountID: "x", Currency: "EUR", Balance: -1}},
		{{AccountID: "x", Currency: "EUR"}, {AccountID: "x", Currency: "EUR"}},
		{{AccountID: "funding-EUR", Currency: "EUR", Balance: 5}},
	} {
		if _, err := e.store.SeedOpenings(ctx, bad, opts, t0); err == nil {
			t.Errorf("seed %+v: no error", bad)
		}
	}
}
