package transfer

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// readEvent reads a `sam local invoke` payload from the repository's events/ folder.
func readEvent(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEventsRoundTrip decodes each event into LegInput and encodes it again: no field is lost or renamed.
func TestEventsRoundTrip(t *testing.T) {
	for _, name := range []string{"debit.json", "credit.json", "refund.json"} {
		t.Run(name, func(t *testing.T) {
			raw := readEvent(t, name)
			var in LegInput
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatal(err)
			}
			if err := in.Validate(); err != nil {
				t.Fatal(err)
			}
			again, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			_ = json.Unmarshal(raw, &want)
			_ = json.Unmarshal(again, &got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip = %s, want %s", again, raw)
			}
		})
	}
}

// TestEventsRunAgainstDynoxide invokes each function with its event, exactly as `sam local invoke` would, against a
// table seeded as events/local-transfers.json seeds the local stack: the accounts, and the transfer record each
// event names, with its DEBIT applied first where the event needs one (credit.json comes after debit.json, whose
// transfer it shares; refund.json's transfer is debited when it is seeded).
func TestEventsRunAgainstDynoxide(t *testing.T) {
	const src, dst = "acc-fixture-source", "acc-fixture-destination"
	tests := []struct {
		event        string
		before       string // the event that must run first, or "" when the transfer's own DEBIT is applied first
		debitFirst   bool
		wantLeg      string
		source, dest int64
	}{
		{event: "debit.json", wantLeg: ledger.LegDebit, source: 3750, dest: 0},
		{event: "credit.json", before: "debit.json", wantLeg: ledger.LegCredit, source: 3750, dest: 1250},
		{event: "refund.json", debitFirst: true, wantLeg: ledger.LegRefund, source: 5000, dest: 0},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			e := newLedgerEnv(t)
			e.scope = "iam:arn:aws:iam::000000000000:user/local" // the events' fixtures are the local stack's unsigned caller's
			e.account(t, src, "EUR", 5000)
			e.account(t, dst, "EUR", 0)
			var in LegInput
			if err := json.Unmarshal(readEvent(t, tt.event), &in); err != nil {
				t.Fatal(err)
			}
			e.reserve(t, in.TransferID, src, dst, in.Amount, in.Currency)
			if tt.debitFirst {
				debit, _ := json.Marshal(LegInput{Leg: ledger.LegDebit, TransferID: in.TransferID, AccountID: src, DestinationAccountID: dst,
					Amount: in.Amount, Currency: in.Currency, ExecutionArn: in.ExecutionArn, Authority: OwnerAuthority(e.scope)})
				if _, err := e.debit().Invoke(context.Background(), debit); err != nil {
					t.Fatal(err)
				}
			}
			if tt.before != "" {
				if _, err := e.debit().Invoke(context.Background(), readEvent(t, tt.before)); err != nil {
					t.Fatalf("%s: %v", tt.before, err)
				}
			}
			h := e.credit()
			if tt.wantLeg == ledger.LegDebit {
				h = e.debit()
			}
			out, err := h.Invoke(context.Background(), readEvent(t, tt.event))
			if err != nil {
				t.Fatalf("%s: %v", tt.event, err)
			}
			var res LegResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			if res.Leg != tt.wantLeg || res.TransferID != in.TransferID || res.AccountID != in.AccountID ||
				res.Amount != in.Amount || res.BalanceAfter != nil || res.ExecutionArn != in.ExecutionArn {
				t.Errorf("result = %s", out)
			}
			if a, b := e.accountNow(t, src).Balance, e.accountNow(t, dst).Balance; a != tt.source || b != tt.dest {
				t.Errorf("balances source %d destination %d, want %d %d", a, b, tt.source, tt.dest)
			}
		})
	}
}
