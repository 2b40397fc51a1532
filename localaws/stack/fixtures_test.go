package stack

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// TestSeedTransfers seeds events/local-transfers.json through the ledger's code and checks what the sam local
// invoke events rely on: each transfer's status and legs, the balances they leave, that no fixture is in the
// InProgress index the reconciler's sweep reads, and that seeding again leaves changed fixtures alone.
func TestSeedTransfers(t *testing.T) {
	srv, tables := ddbserver.StartWithTablesT(t)
	db := ddbserver.NewClient(srv.URL, nil)
	table := tables["TransfersTable"]
	path := filepath.Join("..", "..", "events", "local-transfers.json")
	ctx := context.Background()
	now := time.Now()
	sd := newSeeder(db, table, stateMachineArn("TransferStateMachine"), slog.New(slog.DiscardHandler))
	if err := seedTransfers(ctx, db, table, sd, path, now); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f fixtureFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	store, led := ledger.NewStore(db, table), ledger.NewLedger(db, table)
	scope, err := localCallerScope()
	if err != nil {
		t.Fatal(err)
	}
	var refund fixtureTransfer
	for _, ft := range f.Transfers {
		rec, err := store.GetTransfer(ctx, scope, ft.TransferID, now)
		if err != nil {
			t.Fatalf("%s: %v", ft.TransferID, err)
		}
		legs := slices.Clone(ft.Legs)
		slices.Sort(legs)
		slices.Sort(rec.Legs)
		if rec.Status != ft.Status || !slices.Equal(rec.Legs, legs) || rec.ExecutionArn != ft.ExecutionArn || rec.SweepShard != "" {
			t.Errorf("%s: status %s legs %v executionArn %s sweepShard %q", ft.TransferID, rec.Status, rec.Legs, rec.ExecutionArn, rec.SweepShard)
		}
		if ft.Status == ledger.StatusInProgress && slices.Equal(ft.Legs, []string{ledger.LegDebit}) && refund.TransferID == "" {
			refund = ft
		}
	}
	balances := func() (int64, int64) {
		t.Helper()
		s, err := store.GetAccount(ctx, "acc-fixture-source")
		if err != nil {
			t.Fatal(err)
		}
		d, err := store.GetAccount(ctx, "acc-fixture-destination")
		if err != nil {
			t.Fatal(err)
		}
		return s.Balance, d.Balance
	}
	// 10000 less the seeded DEBITs of 2000 (refund.json's), 3000 (the timed-out one's) and 500 (the completed one's).
	if s, d := balances(); s != 4500 || d != 500 {
		t.Errorf("balances source %d destination %d, want 4500 500", s, d)
	}
	// The fixtures' opening balances are funded from funding-EUR like the --seed file's.
	if f, err := store.GetAccount(ctx, ledger.FundingAccountID("EUR")); err != nil || f.Balance != -10000 || f.AccountKind() != ledger.KindFunding {
		t.Errorf("funding-EUR: %+v, %v; want a funding account at -10000", f, err)
	}
	for shard := range ledger.SweepShards {
		stale, _, err := store.StaleInShard(ctx, shard, now.Add(time.Hour), 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(stale) > 0 {
			t.Errorf("shard %d: the sweep would take up %v", shard, stale[0].TransferID)
		}
	}

	// A fixture the user has moved on (refund.json applied) stays as it is when the stack starts again.
	if _, _, err := led.ApplyLeg(ctx, ledger.LegRequest{TransferID: refund.TransferID, Leg: ledger.LegRefund, AccountID: refund.SourceAccountID,
		Amount: refund.Amount, Currency: refund.Currency, ExecutionArn: refund.ExecutionArn}, now); err != nil {
		t.Fatal(err)
	}
	if err := seedTransfers(ctx, db, table, sd, path, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if s, d := balances(); s != 4500+refund.Amount || d != 500 {
		t.Errorf("after seeding again: balances source %d destination %d", s, d)
	}
	rec, err := store.GetTransfer(ctx, scope, refund.TransferID, now)
	if err != nil || len(rec.Legs) != 2 {
		t.Errorf("after seeding again: %+v, %v", rec, err)
	}
}
