package ledger

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTransferIDAndRecordKey(t *testing.T) {
	kh := KeyHash("anonymous", "order-1")
	if len(kh) != 26 || KeyHash("iam:x", "order-1") == kh {
		t.Fatalf("key hash %q must be 26 characters and depend on the scope", kh)
	}
	id, err := NewTransferID(kh, bytes.NewReader(make([]byte, 10)))
	if err != nil {
		t.Fatal(err)
	}
	if want := "tr_" + kh + strings.Repeat("a", 16); id != want {
		t.Fatalf("id = %q, want %q", id, want)
	}
	pk, ok := RecordKey(id)
	if !ok || pk != "TRANSFER#"+kh {
		t.Fatalf("RecordKey = %q, %v", pk, ok)
	}
	for _, bad := range []string{"", "tr_", "tr_" + kh, "xx_" + kh + strings.Repeat("a", 16), "tr_" + strings.ToUpper(kh) + strings.Repeat("a", 16), "tr_" + kh + strings.Repeat("1", 16)} {
		if _, ok := RecordKey(bad); ok {
			t.Errorf("RecordKey(%q) accepted", bad)
		}
	}
}

func TestNewTransferRecord(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	id, _ := NewTransferID(KeyHash("anonymous", "k"), nil)
	rec := NewTransferRecord(Transfer{TransferID: id}, now, 24*time.Hour)
	if rec.CreatedAt != "2026-11-21T09:00:00.123Z" || rec.UpdatedAt != rec.CreatedAt {
		t.Errorf("times = %q %q", rec.CreatedAt, rec.UpdatedAt)
	}
	if rec.Status != StatusInProgress || rec.SK != "TRANSFER" || !strings.HasPrefix(rec.SweepShard, "IN_PROGRESS#") {
		t.Errorf("record = %+v", rec)
	}
	// No TTL attribute while in progress: only a settlement starts the record's retention.
	if rec.RetainUntil != now.Add(24*time.Hour).Unix() || rec.ExpiresAt != 0 || rec.Expired(now.Add(1e6*time.Hour)) {
		t.Errorf("retainUntil = %d, expiresAt = %d", rec.RetainUntil, rec.ExpiresAt)
	}
	settled := rec
	settled.Status, settled.ExpiresAt = StatusCompleted, rec.RetainUntil
	if settled.Expired(now) || !settled.Expired(now.Add(24*time.Hour)) {
		t.Errorf("a settled record must expire at its retainUntil")
	}
	inProgress := settled
	inProgress.Status = StatusInProgress
	if inProgress.Expired(now.Add(48 * time.Hour)) {
		t.Errorf("a record in progress must never expire, whatever its expiresAt")
	}
	if forever := NewTransferRecord(Transfer{TransferID: id}, now, 0); forever.RetainUntil != KeepForever {
		t.Errorf("a TTL of 0 must keep the record forever: retainUntil %d", forever.RetainUntil)
	}
	if !rec.CreatedTime().Equal(now.Truncate(time.Millisecond)) {
		t.Errorf("CreatedTime = %v", rec.CreatedTime())
	}
}

func TestSweepShardsSpread(t *testing.T) {
	seen := map[string]bool{}
	for i := range 2000 {
		id, _ := NewTransferID(KeyHash("anonymous", strings.Repeat("k", i%50+1)+string(rune('a'+i%26))), nil)
		seen[NewTransferRecord(Transfer{TransferID: id}, time.Now(), 0).SweepShard] = true
	}
	if len(seen) != SweepShards {
		t.Errorf("shards used = %d, want %d", len(seen), SweepShards)
	}
}

func TestLegRequest(t *testing.T) {
	rec := Transfer{TransferID: "tr_1", SourceAccountID: "acc-a", DestinationAccountID: "acc-b", Amount: 1250,
		Currency: "EUR", ExecutionArn: "arn:aws:states:us-east-1:000000000000:execution:M:tr_1"}
	tests := []struct {
		leg, account, destination string
	}{
		{LegDebit, "acc-a", "acc-b"}, // the debit also checks the destination
		{LegCredit, "acc-b", ""},
		{LegRefund, "acc-a", ""},
	}
	for _, tt := range tests {
		got := rec.LegRequest(tt.leg)
		want := LegRequest{TransferID: "tr_1", Leg: tt.leg, AccountID: tt.account, DestinationAccountID: tt.destination,
			Amount: 1250, Currency: "EUR", ExecutionArn: rec.ExecutionArn}
		if got != want {
			t.Errorf("%s: %+v, want %+v", tt.leg, got, want)
		}
	}
}
