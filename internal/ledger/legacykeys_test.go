package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
)

var testKeys = ledger.NewKeyHasher([]byte("test-only-idempotency-key-secret-0123456789"))

// TestKeyHasher: with a secret the hash is HMAC-SHA256's, 26 characters like KeyHash's and not KeyHash's, depends on
// the secret and the scope, and is the same for the same inputs; without one it is KeyHash.
func TestKeyHasher(t *testing.T) {
	other := ledger.NewKeyHasher([]byte("another-test-only-key-secret-9876543210"))
	tests := []struct {
		name     string
		got      string
		notEqual []string
	}{
		{name: "keyed", got: testKeys.Hash("iam:x", "order-1"),
			notEqual: []string{ledger.KeyHash("iam:x", "order-1"), other.Hash("iam:x", "order-1"), testKeys.Hash("iam:y", "order-1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.got) != 26 || strings.Trim(tt.got, "abcdefghijklmnopqrstuvwxyz234567") != "" {
				t.Errorf("hash %q is not 26 base32 characters", tt.got)
			}
			for _, n := range tt.notEqual {
				if tt.got == n {
					t.Errorf("hash %q equals %q", tt.got, n)
				}
			}
		})
	}
	if testKeys.Hash("s", "k") != testKeys.Hash("s", "k") {
		t.Error("the keyed hash is not deterministic")
	}
	if got := ledger.NewKeyHasher(nil).Hash("s", "k"); got != ledger.KeyHash("s", "k") {
		t.Errorf("without a secret: %q, want KeyHash %q", got, ledger.KeyHash("s", "k"))
	}
}

// keyedRecord is newRecord under the keyed hash of testKeys.
func keyedRecord(t *testing.T, key, hash string) ledger.Transfer {
	t.Helper()
	id, err := ledger.NewTransferID(testKeys.Hash("test", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecord(t, key, hash, 24*time.Hour)
	rec.TransferID, rec.ExecutionArn = id, "arn:aws:states:us-east-1:123456789012:execution:transfer:"+id
	return ledger.NewTransferRecord(rec, t0, 24*time.Hour)
}

// TestReserveChecksLegacyKeys: until LEGACY_KEY_HASH_UNTIL, a live record under the unkeyed hash of the same scope
// and key, written before the deployment had a secret, is the key's record (through the transaction path); an
// expired one, or none, lets the keyed record be written; after the time only the keyed record is looked at.
func TestReserveChecksLegacyKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	until := t0.Add(time.Hour)
	store := ledger.NewStore(e.db, e.table, ledger.WithLegacyKeysUntil(until))
	past := t0.Add(-time.Minute).Unix()
	tests := []struct {
		name    string
		legacy  string // the legacy record's status; "" for none
		expires int64
		hash    string // the new request's hash; the legacy record's is "h"
		now     time.Time
		created bool
	}{
		{name: "legacy in progress is replayed", legacy: ledger.StatusInProgress, hash: "h", now: t0},
		{name: "legacy completed is replayed", legacy: ledger.StatusCompleted, expires: ledger.KeepForever, hash: "h", now: t0},
		{name: "legacy with another request is returned for a 422", legacy: ledger.StatusCompleted, expires: ledger.KeepForever, hash: "other", now: t0},
		{name: "legacy expired is taken over", legacy: ledger.StatusCompleted, expires: past, hash: "h", now: t0, created: true},
		{name: "no legacy record", hash: "h", now: t0, created: true},
		{name: "after the time the legacy record is not checked", legacy: ledger.StatusInProgress, hash: "h", now: until, created: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("legacy-%d", i)
			var old ledger.Transfer
			if tt.legacy != "" {
				old = newRecord(t, key, "h", 24*time.Hour) // the unkeyed hash, as before the secret
				old.Status, old.ExpiresAt = tt.legacy, tt.expires
				e.put(t, old)
			}
			rec := keyedRecord(t, key, tt.hash)
			existing, created, err := store.Reserve(ctx, rec, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			if created != tt.created {
				t.Fatalf("created = %v, want %v", created, tt.created)
			}
			if !created && (existing.TransferID != old.TransferID || existing.RequestHash != "h") {
				t.Errorf("existing = %s (hash %q), want the legacy record %s", existing.TransferID, existing.RequestHash, old.TransferID)
			}
			if created {
				if _, created, err := store.Reserve(ctx, rec, tt.now); err != nil || !created {
					t.Errorf("the retry of the same attempt chain: created %v, %v; want created", created, err)
				}
				if again, created, err := store.Reserve(ctx, keyedRecord(t, key, tt.hash), tt.now); err != nil || created || again.TransferID != rec.TransferID {
					t.Errorf("a second request: created %v, existing %s, %v; want the keyed record %s", created, again.TransferID, err, rec.TransferID)
				}
			}
		})
	}
}

// TestOpenAccountChecksLegacyKeys: until LEGACY_KEY_HASH_UNTIL, an account key record under the unkeyed hash is the
// key's record: the same request is Replayed, another is ErrKeyReused, and nothing is written.
func TestOpenAccountChecksLegacyKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	store := ledger.NewStore(e.db, e.table, ledger.WithLegacyKeysUntil(t0.Add(time.Hour)))
	req := ledger.OpenRequest{Scope: testScope, IdempotencyKey: "open-legacy", RequestHash: "h", AccountID: "acc-legacy",
		Currency: "EUR", Kind: ledger.KindCustomer, Owner: testScope}
	if _, oc, err := e.store.OpenAccount(ctx, req, t0, 0); err != nil || oc != ledger.Opened { // before the secret
		t.Fatalf("open without a secret: %v, %v", oc, err)
	}
	keyed := req
	keyed.KeyHash = testKeys.Hash(req.Scope, req.IdempotencyKey)
	tests := []struct {
		name    string
		hash    string
		want    ledger.OpenOutcome
		wantErr error
	}{
		{name: "same request is replayed", hash: "h", want: ledger.Replayed},
		{name: "another request is a reused key", hash: "other", wantErr: ledger.ErrKeyReused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := keyed
			r.RequestHash = tt.hash
			a, oc, err := store.OpenAccount(ctx, r, t0.Add(time.Minute), 0)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || oc != tt.want || a.AccountID != req.AccountID {
				t.Fatalf("outcome %v, account %q, %v; want %v of %s", oc, a.AccountID, err, tt.want, req.AccountID)
			}
		})
	}
}
