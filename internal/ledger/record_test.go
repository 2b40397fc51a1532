package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// newRecord is a record about to be reserved under key, with a fresh transfer id.
func newRecord(t *testing.T, key, hash string, ttl time.Duration) ledger.Transfer {
	t.Helper()
	id, err := ledger.NewTransferID(ledger.KeyHash("test", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.NewTransferRecord(ledger.Transfer{
		TransferID: id, Scope: "test", IdempotencyKey: key, RequestHash: hash,
		SourceAccountID: "src", DestinationAccountID: "dst", Amount: 10, Currency: "EUR",
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:transfer:" + id,
	}, t0, ttl)
}

// put writes rec as it is, as an older version of the code (or a test) might have left it.
func (e *env) put(t *testing.T, rec ledger.Transfer) {
	t.Helper()
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) record(t *testing.T, id string) ledger.Transfer {
	t.Helper()
	rec, err := e.store.GetRecord(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestReserveTakesOverOnlySettledExpiredRecords: a key is reusable once its record is settled and its TTL has passed;
// a record in progress is never taken over, even one that carries a past expiresAt (as records written before
// retention started at settlement did).
func TestReserveTakesOverOnlySettledExpiredRecords(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	past := t0.Add(-time.Hour).Unix()
	tests := []struct {
		name     string
		status   string
		expires  int64
		takeover bool
	}{
		{"in progress without expiresAt", ledger.StatusInProgress, 0, false},
		{"in progress with a past expiresAt", ledger.StatusInProgress, past, false},
		{"completed, retention not over", ledger.StatusCompleted, t0.Add(time.Hour).Unix(), false},
		{"completed, retention over", ledger.StatusCompleted, past, true},
		{"failed, retention over", ledger.StatusFailed, past, true},
		{"failed, kept forever", ledger.StatusFailed, ledger.KeepForever, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("takeover-%d", i)
			old := newRecord(t, key, "h", 24*time.Hour)
			old.Status, old.ExpiresAt = tt.status, tt.expires
			e.put(t, old)
			rec := newRecord(t, key, "h", 24*time.Hour)
			existing, created, err := e.store.Reserve(ctx, rec, t0)
			if err != nil {
				t.Fatal(err)
			}
			if created != tt.takeover {
				t.Fatalf("created = %v, want %v", created, tt.takeover)
			}
			want := old.TransferID
			if tt.takeover {
				want = rec.TransferID
			} else if existing.TransferID != old.TransferID {
				t.Errorf("existing = %s, want the old record %s", existing.TransferID, old.TransferID)
			}
			if got := e.record(t, want); got.TransferID != want {
				t.Errorf("stored record %s, want %s", got.TransferID, want)
			}
		})
	}
}

// TestReserveRecognisesItsOwnRetry: the SDK's retry of a PutItem whose reply was lost sends the same item, and its
// condition fails against what the first attempt wrote. The same transfer id and request hash mean it is the
// request's own reservation; another request with the same key and payload is a duplicate.
func TestReserveRecognisesItsOwnRetry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := newRecord(t, "own", "h", 24*time.Hour)
	if _, created, err := e.store.Reserve(ctx, rec, t0); err != nil || !created {
		t.Fatalf("first attempt: created %v, %v", created, err)
	}
	if _, created, err := e.store.Reserve(ctx, rec, t0); err != nil || !created {
		t.Fatalf("the retry of the same attempt chain: created %v, %v; want created", created, err)
	}
	other := newRecord(t, "own", "h", 24*time.Hour)
	existing, created, err := e.store.Reserve(ctx, other, t0)
	if err != nil || created || existing.TransferID != rec.TransferID {
		t.Fatalf("a second request: created %v, existing %s, %v; want the first record", created, existing.TransferID, err)
	}
	settled := newRecord(t, "own-settled", "h", 24*time.Hour)
	if _, _, err := e.store.Reserve(ctx, settled, t0); err != nil {
		t.Fatal(err)
	}
	e.fail(t, settled.TransferID, "ABORTED")
	if existing, created, err := e.store.Reserve(ctx, settled, t0); err != nil || created || existing.Status != ledger.StatusFailed {
		t.Fatalf("a late retry of a settled reservation: created %v, status %s, %v; want the settled duplicate", created, existing.Status, err)
	}
	changed := rec
	changed.RequestHash = "another payload"
	if _, created, err := e.store.Reserve(ctx, changed, t0); err != nil || created {
		t.Fatalf("same transfer id, other hash: created %v, %v; want a duplicate", created, err)
	}
}

// TestSettlementStartsRetention: the record has no TTL attribute until it is settled; the settlement copies
// retainUntil into expiresAt and keeps the failure's error.
func TestSettlementStartsRetention(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := newRecord(t, "retention", "h", 48*time.Hour)
	if _, _, err := e.store.Reserve(ctx, rec, t0); err != nil {
		t.Fatal(err)
	}
	if got := e.record(t, rec.TransferID); got.ExpiresAt != 0 || got.RetainUntil != t0.Add(48*time.Hour).Unix() {
		t.Fatalf("reserved: expiresAt %d, retainUntil %d", got.ExpiresAt, got.RetainUntil)
	}
	failure := ledger.Failure{Code: "WORKFLOW_FAILED", Error: "SettlementRejected", Cause: "refused"}
	if err := e.ledger.SettleTransfer(ctx, rec.TransferID, ledger.StatusFailed, failure, 0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got := e.record(t, rec.TransferID)
	if got.ExpiresAt != got.RetainUntil || got.FailureCode != "WORKFLOW_FAILED" ||
		got.FailureError != `{"Error":"SettlementRejected","Cause":"refused"}` || got.SweepShard != "" {
		t.Errorf("settled record = %+v", got)
	}

	// A record without retainUntil (written before it existed) is kept forever.
	legacy := newRecord(t, "legacy", "h", 0)
	legacy.RetainUntil = 0
	e.put(t, legacy)
	e.fail(t, legacy.TransferID, "ORPHANED")
	if got := e.record(t, legacy.TransferID); got.ExpiresAt != ledger.KeepForever || got.FailureError != "" {
		t.Errorf("legacy record: expiresAt %d, failureError %q", got.ExpiresAt, got.FailureError)
	}
}

// TestClaimRedrive: one claim per window, none once the record has settled; each claim keeps the record at least a
// day past the re-drive, and a released claim frees the window at once.
func TestClaimRedrive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := newRecord(t, "redrive", "h", 24*time.Hour)
	if _, _, err := e.store.Reserve(ctx, rec, t0); err != nil {
		t.Fatal(err)
	}
	window := 10 * time.Second
	at := t0.Add(30 * time.Hour) // past the record's own retainUntil
	steps := []struct {
		name     string
		now      time.Time
		claimed  bool
		standing time.Time
	}{
		{"first claim", at, true, time.Time{}},
		{"inside its window", at.Add(9 * time.Second), false, at},
		{"after the window", at.Add(window), true, time.Time{}},
		{"right after that claim", at.Add(window + time.Millisecond), false, at.Add(window)},
	}
	for _, s := range steps {
		claimed, standing, err := e.store.ClaimRedrive(ctx, rec, s.now, window)
		if err != nil || claimed != s.claimed || !standing.Equal(s.standing) {
			t.Errorf("%s: claimed %v, standing %v, %v; want %v, %v", s.name, claimed, standing, err, s.claimed, s.standing)
		}
	}
	if got := e.record(t, rec.TransferID).RetainUntil; got != at.Add(window).Add(ledger.MinRetention).Unix() {
		t.Errorf("retainUntil = %d, want a day past the last claim (%d)", got, at.Add(window).Add(ledger.MinRetention).Unix())
	}
	if err := e.store.ReleaseRedrive(ctx, rec.TransferID, at); err != nil {
		t.Fatal(err)
	}
	if claimed, _, _ := e.store.ClaimRedrive(ctx, rec, at.Add(window+2*time.Millisecond), window); claimed {
		t.Error("releasing an older claim freed the standing one")
	}
	if err := e.store.ReleaseRedrive(ctx, rec.TransferID, at.Add(window)); err != nil {
		t.Fatal(err)
	}
	if claimed, _, err := e.store.ClaimRedrive(ctx, rec, at.Add(window+3*time.Millisecond), window); !claimed || err != nil {
		t.Errorf("after the release: claimed %v, %v; want the window free", claimed, err)
	}
	e.fail(t, rec.TransferID, "ABORTED")
	claimed, standing, err := e.store.ClaimRedrive(ctx, rec, at.Add(time.Hour), window)
	if err != nil || claimed || !standing.IsZero() {
		t.Errorf("settled: claimed %v, standing %v, %v; want no claim", claimed, standing, err)
	}
}

// TestStaleInShard reads one shard oldest first, at most limit records, and continues from where it left off.
func TestStaleInShard(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	byShard := map[string][]ledger.Transfer{}
	for i := 0; len(byShard["IN_PROGRESS#03"]) < 5; i++ {
		rec := newRecord(t, fmt.Sprintf("stale-%d", i), "h", 0)
		rec.CreatedAt = t0.Add(time.Duration(i) * time.Second).Format(ledger.TimeLayout)
		byShard[rec.SweepShard] = append(byShard[rec.SweepShard], rec)
		e.put(t, rec)
	}
	want := byShard["IN_PROGRESS#03"]
	settled := want[1]
	e.fail(t, settled.TransferID, "ABORTED")
	cutoff := t0.Add(time.Hour)
	got, next, err := e.store.StaleInShard(ctx, 3, cutoff, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := ids([]ledger.Transfer{want[0], want[2], want[3]}); ids(got) != want || next == nil {
		t.Errorf("first 3 = %s, more %v; want %s, more", ids(got), next != nil, want)
	}
	rest, next, err := e.store.StaleInShard(ctx, 3, cutoff, 3, next)
	if err != nil || ids(rest) != ids(want[4:]) || next != nil {
		t.Errorf("from the cursor: %s, more %v, %v; want %s and no more", ids(rest), next != nil, err, ids(want[4:]))
	}
	if all, next, err := e.store.StaleInShard(ctx, 3, cutoff, 10, nil); err != nil || len(all) != 4 || next != nil {
		t.Errorf("all: %d, more %v, %v; want the 4 in progress and no more", len(all), next != nil, err)
	}
	if none, _, _ := e.store.StaleInShard(ctx, 3, t0, 10, nil); len(none) != 0 {
		t.Errorf("before the cutoff: %d, want none", len(none))
	}
}

func ids(ts []ledger.Transfer) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.TransferID)
	}
	return strings.Join(s, ",")
}

// TestDebitRefusesImpossibleTransfers: a transfer whose destination does not exist or holds another currency is
// refused inside the DEBIT's own transaction, naming the account, and nothing moves. A destination that could never
// be credited wins over a short balance; the source is reported before the destination.
func TestDebitRefusesImpossibleTransfers(t *testing.T) {
	e := newEnv(t).srcDst(t, 1000, 0)
	ctx := context.Background()
	e.account(t, "usd", "USD", 0)
	tests := []struct {
		name, src, dst string
		amount         int64
		account        string
		want           error
	}{
		{"unknown destination", "src", "ghost", 10, "ghost", ledger.ErrAccountNotFound},
		{"destination in another currency", "src", "usd", 10, "usd", ledger.ErrCurrencyMismatch},
		{"unknown destination and a short balance", "src", "ghost", 5000, "ghost", ledger.ErrAccountNotFound},
		{"unknown source and destination", "nobody", "ghost", 10, "nobody", ledger.ErrAccountNotFound},
		{"source in another currency, unknown destination", "usd", "ghost", 10, "usd", ledger.ErrCurrencyMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.transfer(t, tt.src, tt.dst, tt.amount, "EUR")
			_, _, err := e.ledger.ApplyLeg(ctx, debitTo(id, tt.src, tt.dst, tt.amount), t0)
			var ae *ledger.AccountError
			if !errors.Is(err, tt.want) || !errors.As(err, &ae) || ae.AccountID != tt.account {
				t.Fatalf("err = %v, want %v naming %s", err, tt.want, tt.account)
			}
			if b := e.balance(t, "src"); b != 1000 {
				t.Errorf("source balance %d, want 1000", b)
			}
			if entries, _ := e.store.Entries(ctx, id); len(entries) != 0 {
				t.Errorf("entries = %v, want none", entries)
			}
			if rec := e.record(t, id); len(rec.Legs) != 0 {
				t.Errorf("record legs = %v, want none", rec.Legs)
			}
		})
	}
}

// TestDebitWithoutDestinationStillApplies: an execution started by the definition before the destination check, still
// running across a deploy, sends its DEBIT without destinationAccountId. It is applied as before (no destination
// check), so the transfer completes; a bad destination is then refused at the credit and the debit refunded.
func TestDebitWithoutDestinationStillApplies(t *testing.T) {
	e := newEnv(t).srcDst(t, 1000, 0)
	ctx := context.Background()
	ok := e.transfer(t, "src", "dst", 10, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, debitTo(ok, "src", "", 10), t0); err != nil {
		t.Fatalf("a DEBIT from the older definition: %v", err)
	}
	e.apply(t, leg(ok, ledger.LegCredit, "dst", 10))
	bad := e.transfer(t, "src", "ghost", 10, "EUR")
	e.apply(t, debitTo(bad, "src", "", 10))
	if _, _, err := e.ledger.ApplyLeg(ctx, leg(bad, ledger.LegCredit, "ghost", 10), t0); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Fatalf("credit to an unknown destination: %v, want ErrAccountNotFound", err)
	}
	e.apply(t, leg(bad, ledger.LegRefund, "src", 10))
	if src, dst := e.balance(t, "src"), e.balance(t, "dst"); src != 990 || dst != 10 {
		t.Errorf("balances %d %d, want 990 10", src, dst)
	}
}
