package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// randomOp is one step of the randomized test: a leg invocation, or a settlement of the record.
type randomOp struct {
	kind   string // DEBIT, CREDIT, REFUND or SETTLE
	id     string
	status string // for SETTLE
}

// randomTally collects what the randomized test saw. Results are kept per transfer and leg to check that every
// success of a leg returned the same thing.
type randomTally struct {
	mu       sync.Mutex
	ops      int
	outcomes map[string]int
	results  map[string][][]byte
}

func (r *randomTally) add(outcome string, key string, result []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops++
	r.outcomes[outcome]++
	if result != nil {
		r.results[key] = append(r.results[key], result)
	}
}

// TestRandomizedLedgerInvariants runs random legs on random transfers, with duplicates, concurrent invocations and
// settlements interleaved, then settles what is left as the reconciler would, and checks the money invariants of
// docs/api.md. LEDGER_SEED=<n> replays a run.
//
// Under the race detector (make test) it runs 1,000 operations on 100 transfers instead of 2,500 on 250: the rounds
// are as concurrent, and the detector makes each operation about twice as expensive. go test ./... without it, and
// make fuzz (LEDGER_RUNS seeds), run the full size.
func TestRandomizedLedgerInvariants(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LEDGER_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("LEDGER_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (LEDGER_SEED=%d replays the choices; the interleaving of concurrent steps differs)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x1ed9e7))
	e := newLedgerEnv(t)
	ctx := context.Background()

	nTransfers, minOps := 250, 2500
	if raceDetector {
		nTransfers, minOps = 100, 1000
	}
	initial := map[string]int64{}
	currency := map[string]string{}
	var pool []string
	for i := range 8 {
		id := fmt.Sprintf("acc-%d", i)
		initial[id], currency[id] = rng.Int64N(8000), "EUR"
		pool = append(pool, id)
	}
	initial["acc-usd"], currency["acc-usd"] = 3000, "USD"
	for id, b := range initial {
		e.account(t, id, currency[id], b)
	}
	pick := func() string { // mostly EUR accounts; now and then the USD one, or acc-ghost, which never exists
		switch p := rng.IntN(100); {
		case p < 4:
			return "acc-usd"
		case p < 8:
			return "acc-ghost"
		}
		return pool[rng.IntN(len(pool))]
	}
	records := map[string]ledger.Transfer{}
	var ids []string
	for len(ids) < nTransfers {
		src, dst := pick(), pick()
		if src == dst {
			continue
		}
		id := e.transfer(t, src, dst, 1+rng.Int64N(2500), "EUR")
		records[id] = e.record(t, id)
		ids = append(ids, id)
	}

	tally := &randomTally{outcomes: map[string]int{}, results: map[string][][]byte{}}
	run := func(op randomOp) {
		if op.kind == "SETTLE" {
			err := e.ledger.SettleTransfer(ctx, op.id, op.status, ledger.Failure{Code: "TIMED_OUT"}, 0, e.now())
			switch {
			case err == nil:
				tally.add("settled "+op.status, "", nil)
			case errors.Is(err, ledger.ErrTransferNotInProgress):
				tally.add("settle: already settled", "", nil)
			case errors.Is(err, ledger.ErrLedgerDisagrees):
				tally.add("settle: ledger disagrees", "", nil)
			default:
				t.Errorf("settle %s %s: %v", op.id, op.status, err)
			}
			return
		}
		out, err := e.invoke(ctx, legInput(records[op.id], op.kind))
		switch name := ""; {
		case err == nil:
			tally.add(op.kind+" ok", op.id+"/"+op.kind, out)
		default:
			name = lambdaErrorType(err)
			if _, known := workflowErrors[name]; !known || name == "InvalidLegInput" {
				t.Errorf("%s %s: %v (%s)", op.kind, op.id, err, name)
			}
			tally.add(op.kind+" "+name, "", nil)
		}
	}

	var history []randomOp
	rounds := 0
	for tally.ops < minOps {
		var round []randomOp
		for range 1 + rng.IntN(8) {
			var op randomOp
			switch p := rng.IntN(100); {
			case p < 12 && len(history) > 0: // a retry of an earlier step
				op = history[rng.IntN(len(history))]
			case p < 24 && len(round) > 0: // a concurrent duplicate
				op = round[rng.IntN(len(round))]
			case p < 36 && len(round) > 0: // another leg of a transfer this round already touches
				op = randomOp{kind: []string{"DEBIT", "CREDIT", "REFUND"}[rng.IntN(3)], id: round[rng.IntN(len(round))].id}
			case p < 42:
				id := ids[rng.IntN(len(ids))]
				if len(round) > 0 && rng.IntN(2) == 0 {
					id = round[rng.IntN(len(round))].id
				}
				op = randomOp{kind: "SETTLE", id: id, status: []string{ledger.StatusCompleted, ledger.StatusFailed}[rng.IntN(2)]}
			default:
				op = randomOp{kind: []string{"DEBIT", "DEBIT", "CREDIT", "CREDIT", "REFUND"}[rng.IntN(5)], id: ids[rng.IntN(len(ids))]}
			}
			round = append(round, op)
		}
		history = append(history, round...)
		var wg sync.WaitGroup
		for _, op := range round {
			wg.Go(func() { run(op) })
		}
		wg.Wait()
		rounds++
	}

	// Settle what is left as the reconciler would: complete a credited transfer, refund a lone debit, fail the rest.
	for _, id := range ids {
		rec := e.record(t, id)
		if rec.Status != ledger.StatusInProgress {
			continue
		}
		legs := e.entries(t, id)
		_, debited := legs[ledger.LegDebit]
		_, credited := legs[ledger.LegCredit]
		_, refunded := legs[ledger.LegRefund]
		status := ledger.StatusFailed
		switch {
		case credited:
			status = ledger.StatusCompleted
		case debited && !refunded:
			if _, err := e.invoke(ctx, legInput(rec, ledger.LegRefund)); err != nil {
				t.Fatalf("final refund of %s: %v", id, err)
			}
		}
		if err := e.ledger.SettleTransfer(ctx, id, status, ledger.Failure{Code: "TIMED_OUT"}, 0, e.now()); err != nil {
			t.Fatalf("final settle of %s as %s: %v", id, status, err)
		}
	}

	checks, written := checkLedgerInvariants(t, e, initial, currency, records, tally)
	var outcomes []string
	for k, v := range tally.outcomes {
		outcomes = append(outcomes, fmt.Sprintf("%s=%d", k, v))
	}
	slices.Sort(outcomes)
	t.Logf("%d operations in %d concurrent rounds on %d transfers; %d ledger entries written; %d invariant checks made; outcomes: %v",
		tally.ops, rounds, nTransfers, written, checks, outcomes)
}

// checkLedgerInvariants checks the money invariants at the end of the randomized test and returns how many
// individual checks it made and how many ledger entries it found.
func checkLedgerInvariants(t *testing.T, e *ledgerEnv, initial map[string]int64, currency map[string]string,
	records map[string]ledger.Transfer, tally *randomTally) (checks, written int) {
	t.Helper()
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		checks++
		if !ok {
			t.Errorf(format, args...)
		}
	}
	expected := map[string]int64{}
	for id, b := range initial {
		expected[id] = b
	}
	writes := map[string]int64{}
	for id, rec := range records {
		final := e.record(t, id)
		legs := e.entries(t, id)
		_, debited := legs[ledger.LegDebit]
		_, credited := legs[ledger.LegCredit]
		_, refunded := legs[ledger.LegRefund]
		// 2. Exactly-once legs: a CREDIT or REFUND only after a DEBIT, never both.
		check(!credited || debited, "%s: CREDIT without DEBIT", id)
		check(!refunded || debited && !credited, "%s: REFUND with DEBIT %v, CREDIT %v", id, debited, credited)
		for leg, en := range legs {
			want := legInput(rec, leg)
			check(en.AccountID == want.AccountID && en.Amount == want.Amount && en.Currency == want.Currency,
				"%s %s entry %+v does not match the record", id, leg, en)
			if leg == ledger.LegDebit {
				expected[en.AccountID] -= en.Amount
			} else {
				expected[en.AccountID] += en.Amount
			}
			writes[en.AccountID]++
			written++
			// Every success returned for this leg is the stored entry, byte for byte the same each time; a CREDIT's
			// also says when it settled the record, which it did in its own transaction, at the entry's time.
			wantResult := newLegResult(en)
			if leg == ledger.LegCredit {
				wantResult.CompletedAt = final.CompletedAt
				check(final.Status == ledger.StatusCompleted && final.CompletedAt == en.CreatedAt,
					"%s CREDIT at %s, record %s completed at %q", id, en.CreatedAt, final.Status, final.CompletedAt)
			}
			results := tally.results[id+"/"+leg]
			for _, r := range results {
				var got LegResult
				err := json.Unmarshal(r, &got)
				check(err == nil && got == wantResult && string(r) == string(results[0]),
					"%s %s returned %s, want the stored entry %+v", id, leg, r, en)
			}
		}
		for _, leg := range []string{ledger.LegDebit, ledger.LegCredit, ledger.LegRefund} {
			if _, ok := legs[leg]; !ok {
				check(len(tally.results[id+"/"+leg]) == 0, "%s %s succeeded but wrote no entry", id, leg)
			}
		}
		// 3. Agreement.
		status := final.Status
		switch status {
		case ledger.StatusCompleted:
			check(debited && credited, "%s COMPLETED with DEBIT %v CREDIT %v", id, debited, credited)
		case ledger.StatusFailed:
			check(!debited || refunded, "%s FAILED with DEBIT %v REFUND %v", id, debited, refunded)
		default:
			check(false, "%s still %s", id, status)
		}
	}
	sums, sumsBefore := map[string]int64{}, map[string]int64{}
	for id, b := range initial {
		a := e.accountNow(t, id)
		// 5. No overdraft.
		check(a.Balance >= 0, "%s balance %d below zero", id, a.Balance)
		// Every balance change has exactly one ledger entry, and the entries explain the balance.
		check(a.Balance == expected[id], "%s balance %d, the ledger explains %d", id, a.Balance, expected[id])
		check(a.Version == 1+writes[id], "%s version %d after %d ledger entries", id, a.Version, writes[id])
		sums[currency[id]] += a.Balance
		sumsBefore[currency[id]] += b
	}
	// 1. Conservation, per currency.
	for cur, s := range sums {
		check(s == sumsBefore[cur], "sum of %s balances %d, was %d", cur, s, sumsBefore[cur])
	}
	_, ghostErr := e.store.GetAccount(context.Background(), "acc-ghost")
	check(errors.Is(ghostErr, ledger.ErrNotFound), "acc-ghost exists after the run: %v", ghostErr)
	return checks, written
}
