package chaos

import (
	"slices"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// created is every crafted item's creation time (the table's index sorts on createdAt, which cannot be empty).
const created = "2026-11-23T18:00:00.000Z"

const smArn = "arn:aws:states:us-east-1:123456789012:execution:TransferStateMachine:"

func account(id, cur string, balance, version int64) ledger.Account {
	return ledger.Account{PK: accountPrefix + id, SK: "ACCOUNT", AccountID: id, Balance: balance, Currency: cur, Version: version,
		CreatedAt: created}
}

func record(id, key, status, code, src, dst string, amount int64, legs ...string) ledger.Transfer {
	return ledger.Transfer{PK: transferPrefix + id, SK: "TRANSFER", TransferID: id, IdempotencyKey: key, Status: status,
		FailureCode: code, SourceAccountID: src, DestinationAccountID: dst, Amount: amount, Currency: "EUR",
		ExecutionArn: smArn + id, Legs: legs, CreatedAt: created}
}

func leg(id, kind, acct string, amount int64) ledger.Entry {
	return ledger.Entry{PK: ledgerPrefix + id, SK: kind, TransferID: id, Leg: kind, AccountID: acct, Amount: amount, Currency: "EUR",
		CreatedAt: created}
}

// clean is a table after a campaign where all went well: a completed transfer, one refused for funds, one
// refunded after its credit failed; and what the campaign expects of it.
func clean() (Table, Expect) {
	t := Table{
		Accounts: []ledger.Account{
			account("A", "EUR", 1000-100-50+50, 4), // DEBIT t1, DEBIT t3, REFUND t3
			account("B", "EUR", 500+100, 2),        // CREDIT t1
			account("U", "USD", 100, 1),
		},
		Transfers: []ledger.Transfer{
			record("t1", "k1", ledger.StatusCompleted, "", "A", "B", 100, "CREDIT", "DEBIT"),
			record("t2", "k2", ledger.StatusFailed, "INSUFFICIENT_FUNDS", "B", "A", 5000),
			record("t3", "k3", ledger.StatusFailed, "CREDIT_FAILED_REFUNDED", "A", "B", 50, "DEBIT", "REFUND"),
		},
		Legs: []ledger.Entry{
			leg("t1", "DEBIT", "A", 100), leg("t1", "CREDIT", "B", 100),
			leg("t3", "DEBIT", "A", 50), leg("t3", "REFUND", "A", 50),
		},
	}
	want := Expect{
		Opening:    map[string]int64{"A": 1000, "B": 500, "U": 100},
		Accepted:   map[string][]string{"k1": {"t1"}, "k2": {"t2"}, "k3": {"t3"}},
		Executions: []Execution{{"t1", "SUCCEEDED"}, {"t2", "SUCCEEDED"}, {"t3", "SUCCEEDED"}},
		Replays:    []ReplayPair{{Key: "k1", First: []byte(`{"status":"COMPLETED"}`), Later: []byte(`{"status":"COMPLETED"}`)}},
		Events:     map[string][]string{"t1": {"COMPLETED"}, "t2": {"FAILED", "FAILED"}, "t3": {"FAILED"}},
	}
	return t, want
}

func TestCleanTableHasNoViolations(t *testing.T) {
	tbl, want := clean()
	if v := Check(tbl, want); len(v) != 0 {
		t.Fatalf("violations in a clean table: %v", v)
	}
}

// TestEachViolationIsReported crafts a table with one broken invariant at a time: each must be reported under its
// check, naming what it is about.
func TestEachViolationIsReported(t *testing.T) {
	tests := []struct {
		name    string
		break_  func(*Table, *Expect)
		check   string
		subject string
	}{
		{name: "money created", check: CheckConservation, subject: "EUR",
			break_: func(t *Table, _ *Expect) { t.Accounts[1].Balance += 10 }},
		{name: "balance moved without a leg", check: CheckAccountLedger, subject: "B",
			break_: func(t *Table, _ *Expect) { t.Accounts[1].Balance += 10; t.Accounts[0].Balance -= 10 }},
		{name: "account version without its leg", check: CheckAccountLedger, subject: "U",
			break_: func(t *Table, _ *Expect) { t.Accounts[2].Version = 2 }},
		{name: "an opened account is gone", check: CheckConservation, subject: "U",
			break_: func(t *Table, _ *Expect) { t.Accounts = t.Accounts[:2] }},
		{name: "two debits", check: CheckLegOnce, subject: "t1",
			break_: func(t *Table, _ *Expect) { t.Legs = append(t.Legs, leg("t1", "DEBIT", "A", 100)) }},
		{name: "leg under another transfer's key", check: CheckLegOnce, subject: "t1",
			break_: func(t *Table, _ *Expect) { t.Legs[1].PK = ledgerPrefix + "t9" }},
		{name: "credit without debit", check: CheckLegOrder, subject: "t1",
			break_: func(t *Table, _ *Expect) { t.Legs = t.Legs[1:] }},
		{name: "credit and refund", check: CheckLegOrder, subject: "t3",
			break_: func(t *Table, _ *Expect) { t.Legs = append(t.Legs, leg("t3", "CREDIT", "B", 50)) }},
		{name: "leg of another amount", check: CheckLegMatches, subject: "t1",
			break_: func(t *Table, _ *Expect) { t.Legs[1].Amount = 99 }},
		{name: "overdraft", check: CheckOverdraft, subject: "U",
			break_: func(t *Table, w *Expect) { t.Accounts[2].Balance = -5; w.Opening["U"] = -5 }},
		{name: "settled without its outcome event", check: CheckOutcomeEvent, subject: "t3",
			break_: func(_ *Table, w *Expect) { delete(w.Events, "t3") }},
		{name: "outcome event of another status", check: CheckOutcomeEvent, subject: "t1",
			break_: func(_ *Table, w *Expect) { w.Events["t1"] = []string{"FAILED"} }},
		{name: "accepted transfer left in progress", check: CheckTerminal, subject: "t2",
			break_: func(t *Table, _ *Expect) { t.Transfers[1].Status = ledger.StatusInProgress }},
		{name: "accepted key without a record", check: CheckTerminal, subject: "k4",
			break_: func(_ *Table, w *Expect) { w.Accepted["k4"] = []string{"t4"} }},
		{name: "completed without credit", check: CheckStatusLegs, subject: "t1",
			break_: func(t *Table, _ *Expect) {
				t.Legs = slices.Delete(t.Legs, 1, 2)
				t.Accounts[1].Balance, t.Accounts[1].Version = 500, 1
				t.Transfers[0].Legs = []string{"DEBIT"}
			}},
		{name: "failed with a lone debit", check: CheckStatusLegs, subject: "t3",
			break_: func(t *Table, _ *Expect) {
				t.Legs = t.Legs[:3]
				t.Accounts[0].Balance, t.Accounts[0].Version = 1000-150, 3
				t.Transfers[2].Legs = []string{"DEBIT"}
			}},
		{name: "record's legs disagree with the ledger", check: CheckStatusLegs, subject: "t1",
			break_: func(t *Table, _ *Expect) { t.Transfers[0].Legs = []string{"DEBIT"} }},
		{name: "aborted by a crash", check: CheckDecidedByCrash, subject: "t2",
			break_: func(t *Table, _ *Expect) { t.Transfers[1].FailureCode = "ABORTED" }},
		{name: "accepted then orphaned", check: CheckDecidedByCrash, subject: "t2",
			break_: func(t *Table, _ *Expect) { t.Transfers[1].FailureCode = "ORPHANED" }},
		{name: "key answered with two transfers", check: CheckExecutionPerKey, subject: "k1",
			break_: func(_ *Table, w *Expect) { w.Accepted["k1"] = []string{"t1", "t1b"} }},
		{name: "legs of a transfer without record", check: CheckExecutionPerKey, subject: "t7",
			break_: func(t *Table, _ *Expect) {
				t.Legs = append(t.Legs, leg("t7", "DEBIT", "A", 1))
				t.Accounts[0].Balance--
				t.Accounts[0].Version++
			}},
		{name: "execution of no transfer", check: CheckExecutionPerKey, subject: "t8",
			break_: func(_ *Table, w *Expect) { w.Executions = append(w.Executions, Execution{"t8", "RUNNING"}) }},
		{name: "transfer without execution", check: CheckExecutionPerKey, subject: "t3",
			break_: func(_ *Table, w *Expect) { w.Executions = w.Executions[:2] }},
		{name: "execution not named after the transfer", check: CheckExecutionPerKey, subject: "t2",
			break_: func(t *Table, _ *Expect) { t.Transfers[1].ExecutionArn = smArn + "other" }},
		{name: "replay differs", check: CheckReplay, subject: "k1",
			break_: func(_ *Table, w *Expect) { w.Replays[0].Later = []byte(`{"status":"FAILED"}`) }},
		{name: "unknown item", check: CheckUnknownItem, subject: "JUNK#1/x",
			break_: func(t *Table, _ *Expect) { t.Unknown = append(t.Unknown, "JUNK#1/x") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, want := clean()
			tt.break_(&tbl, &want)
			got := Check(tbl, want)
			found := slices.ContainsFunc(got, func(v Violation) bool { return v.Check == tt.check && v.Subject == tt.subject })
			if !found {
				t.Fatalf("violations %v, want one of %s about %s", got, tt.check, tt.subject)
			}
			for _, v := range got {
				if v.Detail == "" || !strings.Contains(v.String(), v.Subject) {
					t.Errorf("violation %q does not say what it is about", v)
				}
			}
		})
	}
}

func TestSummaryLastLine(t *testing.T) {
	s := Summary{Seed: 42, Planned: 300, Kills: 2, Faults: map[FaultKind]int{FaultDelay: 2, FaultThrottle: 1},
		Violations: []Violation{{Check: CheckOverdraft, Subject: "U", Detail: "balance -5 USD"}}}
	var b strings.Builder
	s.Write(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got, want := lines[len(lines)-1], "chaos: 300 transfers, 2 kills, 3 faults, 1 violations (seed 42)"; got != want {
		t.Fatalf("last line %q, want %q", got, want)
	}
	if !strings.Contains(b.String(), "violation: overdraft U: balance -5 USD") {
		t.Fatalf("the violation is not named:\n%s", b.String())
	}
}

// funded is clean() as the stack seeds it now: every balance opened at 0 and funded by an opening-balance transfer
// from funding-EUR or funding-USD (no execution), so the funding accounts are below zero and each currency sums
// to 0.
func funded() (Table, Expect) {
	tbl, want := clean()
	for _, o := range []struct {
		id, funding, cur string
		amount           int64
	}{{"A", "funding-EUR", "EUR", 1000}, {"B", "funding-EUR", "EUR", 500}, {"U", "funding-USD", "USD", 100}} {
		id := "open-" + o.id
		r := record(id, "opening-balance:"+o.id, ledger.StatusCompleted, "", o.funding, o.id, o.amount, "CREDIT", "DEBIT")
		r.Currency, r.Origin = o.cur, ledger.OriginOpeningBalance
		d, c := leg(id, "DEBIT", o.funding, o.amount), leg(id, "CREDIT", o.id, o.amount)
		d.Currency, c.Currency = o.cur, o.cur
		tbl.Transfers = append(tbl.Transfers, r)
		tbl.Legs = append(tbl.Legs, d, c)
	}
	for i := range tbl.Accounts {
		tbl.Accounts[i].Version++ // its opening CREDIT
	}
	fEUR, fUSD := account("funding-EUR", "EUR", -1500, 3), account("funding-USD", "USD", -100, 2)
	fEUR.Kind, fUSD.Kind = ledger.KindFunding, ledger.KindFunding
	tbl.Accounts = append(tbl.Accounts, fEUR, fUSD)
	want.Opening = map[string]int64{"A": 0, "B": 0, "U": 0, "funding-EUR": 0, "funding-USD": 0}
	return tbl, want
}

// TestFundedSeedHasNoViolations: funding accounts below zero are no overdraft, and opening-balance transfers need no
// execution; conservation holds over every account, funding accounts included.
func TestFundedSeedHasNoViolations(t *testing.T) {
	tbl, want := funded()
	if v := Check(tbl, want); len(v) != 0 {
		t.Fatalf("violations in a funded table: %v", v)
	}
	if got := (Plan{Accounts: []Account{{ID: "A", Currency: "EUR", Balance: 1000}, {ID: "U", Currency: "USD", Balance: 100}}}).Opening(); len(got) != 4 ||
		got["A"] != 0 || got["funding-EUR"] != 0 || got["funding-USD"] != 0 {
		t.Errorf("Plan.Opening = %v, want 0 for the accounts and their funding accounts", got)
	}
}

// TestFundedSeedViolations: a customer account below zero is still an overdraft; money created on a funding
// account breaks conservation; an opening-balance transfer with an execution is reported.
func TestFundedSeedViolations(t *testing.T) {
	tests := []struct {
		name, check, subject string
		break_               func(*Table)
	}{
		{"customer below zero", CheckOverdraft, "A", func(t *Table) {
			t.Accounts[0].Kind = ledger.KindCustomer
			t.Accounts[0].Balance -= 2000
			t.Accounts[3].Balance += 2000
		}},
		{"funding account moved without a leg", CheckConservation, "EUR", func(t *Table) { t.Accounts[3].Balance += 7 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, want := funded()
			tc.break_(&tbl)
			v := Check(tbl, want)
			if !slices.ContainsFunc(v, func(x Violation) bool { return x.Check == tc.check && x.Subject == tc.subject }) {
				t.Errorf("violations %v, want %s %s", v, tc.check, tc.subject)
			}
		})
	}
	tbl, want := funded()
	want.Executions = append(want.Executions, Execution{"open-A", "SUCCEEDED"})
	if v := Check(tbl, want); !slices.ContainsFunc(v, func(x Violation) bool { return x.Check == CheckExecutionPerKey && x.Subject == "open-A" }) {
		t.Errorf("an execution of an opening-balance transfer: violations %v", v)
	}
}
