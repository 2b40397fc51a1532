package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// settling is the CREDIT of transfer id that also settles the record, as the workflow's Credit state asks for it.
func settling(id string, amount int64) ledger.LegRequest {
	r := leg(id, ledger.LegCredit, "dst", amount)
	r.Settle = true
	return r
}

// TestSettlingCreditSettlesTheRecord: a CREDIT with Settle writes the entry, moves the money and settles the record
// COMPLETED in one transaction, at the entry's time, with the retention started and the record out of the InProgress
// index; a repeat writes nothing; a CREDIT that is refused (no DEBIT, REFUND written) leaves the record IN_PROGRESS.
func TestSettlingCreditSettlesTheRecord(t *testing.T) {
	e := newEnv(t).srcDst(t, 100, 0)
	ctx := context.Background()

	id := e.transfer(t, "src", "dst", 30, "EUR")
	e.apply(t, leg(id, ledger.LegDebit, "src", 30))
	at := t0.Add(1500 * time.Millisecond)
	en, replayed, err := e.ledger.ApplyLeg(ctx, settling(id, 30), at)
	if err != nil || replayed {
		t.Fatalf("settling CREDIT: replayed %v, %v", replayed, err)
	}
	rec := e.record(t, id)
	if rec.Status != ledger.StatusCompleted || rec.CompletedAt != en.CreatedAt || rec.UpdatedAt != en.CreatedAt ||
		rec.CompletedAt != at.UTC().Format(ledger.TimeLayout) {
		t.Errorf("record %s completedAt %q updatedAt %q, want COMPLETED at the CREDIT's time %q", rec.Status, rec.CompletedAt, rec.UpdatedAt, en.CreatedAt)
	}
	if rec.ExpiresAt == 0 || rec.ExpiresAt != rec.RetainUntil || rec.SweepShard != "" {
		t.Errorf("record expiresAt %d retainUntil %d sweepShard %q, want the retention started and no sweep shard", rec.ExpiresAt, rec.RetainUntil, rec.SweepShard)
	}
	if b := e.balance(t, "dst"); b != 30 {
		t.Errorf("dst balance %d, want 30", b)
	}

	again, replayed, err := e.ledger.ApplyLeg(ctx, settling(id, 30), at.Add(time.Second))
	if err != nil || !replayed || again != en {
		t.Errorf("repeat: %+v replayed %v, %v; want the stored entry", again, replayed, err)
	}
	if got, err := e.ledger.Completion(ctx, id, at.Add(time.Second)); err != nil || got != rec.CompletedAt {
		t.Errorf("Completion = %q, %v; want %q", got, err, rec.CompletedAt)
	}
	if b := e.balance(t, "dst"); b != 30 {
		t.Errorf("dst balance %d after the repeat, want 30", b)
	}

	// Refused CREDITs settle nothing.
	noDebit := e.transfer(t, "src", "dst", 5, "EUR")
	if _, _, err := e.ledger.ApplyLeg(ctx, settling(noDebit, 5), t0); !errors.Is(err, ledger.ErrDebitNotApplied) {
		t.Errorf("settling CREDIT without a DEBIT: %v, want ErrDebitNotApplied", err)
	}
	refunded := e.transfer(t, "src", "dst", 5, "EUR")
	for _, l := range []string{ledger.LegDebit, ledger.LegRefund} {
		e.apply(t, leg(refunded, l, "src", 5))
	}
	if _, _, err := e.ledger.ApplyLeg(ctx, settling(refunded, 5), t0); !errors.Is(err, ledger.ErrRefundApplied) {
		t.Errorf("settling CREDIT after the REFUND: %v, want ErrRefundApplied", err)
	}
	for _, id := range []string{noDebit, refunded} {
		if rec := e.record(t, id); rec.Status != ledger.StatusInProgress || rec.ExpiresAt != 0 {
			t.Errorf("%s after a refused CREDIT: %s, expiresAt %d; want IN_PROGRESS", id, rec.Status, rec.ExpiresAt)
		}
	}
}

// TestRefundAfterASettlingCredit: once the CREDIT has settled the record, a REFUND is refused as ErrCreditApplied
// (the transfer went through), not merely as a transfer no longer in progress: the workflow then completes rather than
// stopping as already settled.
func TestRefundAfterASettlingCredit(t *testing.T) {
	e := newEnv(t).srcDst(t, 100, 0)
	ctx := context.Background()
	id := e.transfer(t, "src", "dst", 10, "EUR")
	e.apply(t, leg(id, ledger.LegDebit, "src", 10), settling(id, 10))
	if _, _, err := e.ledger.ApplyLeg(ctx, leg(id, ledger.LegRefund, "src", 10), t0); !errors.Is(err, ledger.ErrCreditApplied) {
		t.Errorf("REFUND after the settling CREDIT: %v, want ErrCreditApplied", err)
	}
	if b := e.balance(t, "src"); b != 90 {
		t.Errorf("src balance %d, want 90: no refund", b)
	}
}

// TestCompletion: a replayed settling CREDIT learns when the record was settled. A record an older definition's CREDIT
// left IN_PROGRESS is settled now; a FAILED or missing record is not in progress.
func TestCompletion(t *testing.T) {
	e := newEnv(t).srcDst(t, 100, 0)
	ctx := context.Background()

	older := e.transfer(t, "src", "dst", 10, "EUR")
	e.apply(t, leg(older, ledger.LegDebit, "src", 10), leg(older, ledger.LegCredit, "dst", 10))
	now := t0.Add(time.Minute)
	got, err := e.ledger.Completion(ctx, older, now)
	if want := now.UTC().Format(ledger.TimeLayout); err != nil || got != want {
		t.Errorf("Completion of a credited record in progress = %q, %v; want %q", got, err, want)
	}
	if rec := e.record(t, older); rec.Status != ledger.StatusCompleted || rec.CompletedAt != got {
		t.Errorf("record %s completedAt %q, want COMPLETED at %q", rec.Status, rec.CompletedAt, got)
	}

	failed := e.transfer(t, "src", "dst", 10, "EUR")
	e.fail(t, failed, "TIMED_OUT")
	missing, err := ledger.NewTransferID(ledger.KeyHash("test", "never reserved"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{failed, missing} {
		if _, err := e.ledger.Completion(ctx, id, now); !errors.Is(err, ledger.ErrTransferNotInProgress) {
			t.Errorf("Completion of %s: %v, want ErrTransferNotInProgress", id, err)
		}
	}
}

// TestSettleIsOnlyForACredit: Settle on a DEBIT or REFUND is a malformed request, refused before any I/O.
func TestSettleIsOnlyForACredit(t *testing.T) {
	for _, l := range []string{ledger.LegDebit, ledger.LegRefund} {
		r := leg("tr_aaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb", l, "src", 1)
		r.Settle = true
		if err := r.Validate(); !errors.Is(err, ledger.ErrInvalidLeg) {
			t.Errorf("%s with settle: %v, want ErrInvalidLeg", l, err)
		}
	}
}
