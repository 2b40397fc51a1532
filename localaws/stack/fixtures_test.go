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
	"github.com/transferflow/orchestrator/internal/transfer"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestSeedTransfers seeds events/local-transfers.json through the ledger's code and checks what the sam local
// invoke events rely on: each transfer's status and legs, the balances they leave, that no fixture is in the
// InProgress index the reconciler's sweep reads, the closed executions the fixtures give Step Functions (the
// timed-out one's, which the reconciler asks for), and that seeding again leaves changed fixtures alone.
func TestSeedTransfers(t *testing.T) {
	srv, tables := ddbserver.StartWithTablesT(t)
	db := ddbserver.NewClient(srv.URL, nil)
	table := tables["TransfersTable"]
	path := filepath.Join("..", "..", "events", "local-transfers.json")
	ctx := context.Background()
	now := time.Now()
	sd := newSeeder(db, table, stateMachineArn("TransferStateMachine"), slog.New(slog.DiscardHandler))
	closed, err := seedTransfers(ctx, db, table, sd, path, now)
	if err != nil {
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
	// The fixtures' closed executions, in an engine with the template's state machine; a second import (a restart
	// on --data-dir) leaves them as they are.
	eng := sfnengine.New(sfnengine.Options{Region: Region, AccountID: AccountID})
	t.Cleanup(eng.Close)
	if _, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "TransferStateMachine", RoleArn: "arn:aws:iam::" + AccountID + ":role/r",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := importFixtureExecutions(ctx, eng, stateMachineArn("TransferStateMachine"), closed); err != nil {
			t.Fatal(err)
		}
	}
	var executions int
	for _, ft := range f.Transfers {
		d, err := eng.DescribeExecution(ctx, ft.ExecutionArn)
		if ft.Execution == nil {
			if err == nil {
				t.Errorf("%s: an execution %s, where the fixture has none", ft.TransferID, d.Status)
			}
			continue
		}
		executions++
		var in transfer.ExecutionInput
		if err != nil || d.Status != ft.Execution.Status || json.Unmarshal([]byte(d.Input), &in) != nil || in.TransferID != ft.TransferID ||
			in.Amount != ft.Amount {
			t.Errorf("%s: execution %+v, %v; want %s with the transfer's input", ft.TransferID, d, err, ft.Execution.Status)
		}
	}
	if executions == 0 {
		t.Error("no fixture has a closed execution: the reconciler's status change event has none to read")
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
	if _, err := seedTransfers(ctx, db, table, sd, path, now.Add(time.Minute)); err != nil {
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
