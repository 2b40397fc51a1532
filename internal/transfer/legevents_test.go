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
// table seeded with the accounts and transfer record the events name.
func TestEventsRunAgainstDynoxide(t *testing.T) {
	tests := []struct {
		event        string
		before       []string
		wantLeg      string
		alice, bob   int64
		balanceAfter int64
	}{
		{"debit.json", nil, ledger.LegDebit, 3750, 0, 3750},
		{"credit.json", []string{"debit.json"}, ledger.LegCredit, 3750, 1250, 1250},
		{"refund.json", []string{"debit.json"}, ledger.LegRefund, 5000, 0, 5000},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			e := newLedgerEnv(t)
			e.account(t, "acc-alice", "EUR", 5000)
			e.account(t, "acc-bob", "EUR", 0)
			var in LegInput
			if err := json.Unmarshal(readEvent(t, tt.event), &in); err != nil {
				t.Fatal(err)
			}
			e.reserve(t, in.TransferID, "acc-alice", "acc-bob", 1250, "EUR")
			for _, b := range append(tt.before, tt.event) {
				h := e.credit()
				if b == "debit.json" {
					h = e.debit()
				}
				out, err := h.Invoke(context.Background(), readEvent(t, b))
				if err != nil {
					t.Fatalf("%s: %v", b, err)
				}
				if b != tt.event {
					continue
				}
				var res LegResult
				if err := json.Unmarshal(out, &res); err != nil {
					t.Fatal(err)
				}
				if res.Leg != tt.wantLeg || res.TransferID != in.TransferID || res.AccountID != in.AccountID ||
					res.Amount != 1250 || res.BalanceAfter != tt.balanceAfter || res.ExecutionArn != in.ExecutionArn {
					t.Errorf("result = %s", out)
				}
			}
			if a, b := e.accountNow(t, "acc-alice").Balance, e.accountNow(t, "acc-bob").Balance; a != tt.alice || b != tt.bob {
				t.Errorf("balances alice %d bob %d, want %d %d", a, b, tt.alice, tt.bob)
			}
		})
	}
}
