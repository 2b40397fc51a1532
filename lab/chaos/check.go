package chaos

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// The checks, by the name a violation carries (docs/api.md, "Money invariants").
const (
	CheckConservation    = "conservation"      // the sum of balances per currency, funding accounts included, is the opening sum
	CheckAccountLedger   = "account-ledger"    // each balance is its opening balance moved by its own legs, once each
	CheckLegOnce         = "leg-once"          // at most one DEBIT, CREDIT and REFUND per transfer
	CheckLegOrder        = "leg-order"         // CREDIT and REFUND need a DEBIT; never both CREDIT and REFUND
	CheckLegMatches      = "leg-matches"       // a leg moves its transfer's amount and currency on its account
	CheckOverdraft       = "overdraft"         // no customer balance below zero
	CheckTerminal        = "terminal"          // every accepted transfer COMPLETED or FAILED
	CheckStatusLegs      = "status-legs"       // COMPLETED has DEBIT and CREDIT; FAILED no DEBIT, or DEBIT and REFUND
	CheckDecidedByCrash  = "decided-by-crash"  // no accepted transfer ended ABORTED (or ORPHANED): a crash decides nothing
	CheckExecutionPerKey = "execution-per-key" // one transfer, one execution and one set of legs per key
	CheckReplay          = "replay"            // a replay answers byte for byte what the first answer after the end did
	CheckOutcomeEvent    = "outcome-event"     // every accepted transfer that settled has its outcome event on the bus
	CheckUnknownItem     = "unknown-item"      // nothing in the table but accounts, transfers and legs
	CheckAnswer          = "answer"            // no valid request refused with an error a correct client cannot get
)

// Violation is one broken invariant: the check, what it is about (an account, a currency, a transfer or a key) and
// what was found.
type Violation struct {
	Check   string
	Subject string
	Detail  string
}

func (v Violation) String() string { return v.Check + " " + v.Subject + ": " + v.Detail }

// Execution is one Step Functions execution as ListExecutions shows it.
type Execution struct {
	Name   string
	Status string
}

// Expect is what the checks compare the table with besides the table itself.
type Expect struct {
	// Opening is every account's balance before any ledger entry (Plan.Opening: 0, the seed's balances being
	// opening transfers in the ledger). Conservation: each currency's balances sum to the sum of these.
	Opening map[string]int64
	// Accepted maps each Idempotency-Key that was answered 2xx to the transfer ids its answers named (one, if all is
	// well).
	Accepted map[string][]string
	// Executions are the state machine's executions; nil skips the executions' part of CheckExecutionPerKey.
	Executions []Execution
	// Replays are the pairs of answers to compare for CheckReplay.
	Replays []ReplayPair
	// Events maps a transfer id to the statuses of the outcome events the bus delivered for it (its log group),
	// in any order and with repeats (delivery is at least once); nil skips CheckOutcomeEvent.
	Events map[string][]string
}

// ReplayPair is the first answer to a replay of a key after its transfer ended, and a later one (after the
// campaign's last restart). Both must be the same bytes.
type ReplayPair struct {
	Key          string
	First, Later []byte
}

// legSet is the ledger of one transfer.
type legSet map[string][]ledger.Entry

func (l legSet) has(leg string) bool { return len(l[leg]) > 0 }

// Check runs every check on t and returns the violations, sorted by check and subject. A clean table returns none.
func Check(t Table, want Expect) []Violation {
	var out []Violation
	add := func(check, subject, format string, args ...any) {
		out = append(out, Violation{Check: check, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	}
	for _, k := range t.Unknown {
		add(CheckUnknownItem, k, "an item that is no account, transfer or ledger leg")
	}

	records := map[string]ledger.Transfer{} // by transfer id
	for _, r := range t.Transfers {
		records[r.TransferID] = r
	}
	legs := map[string]legSet{}
	for _, e := range t.Legs {
		if legs[e.TransferID] == nil {
			legs[e.TransferID] = legSet{}
		}
		legs[e.TransferID][e.Leg] = append(legs[e.TransferID][e.Leg], e)
		if e.PK != ledgerPrefix+e.TransferID || e.SK != e.Leg {
			add(CheckLegOnce, e.TransferID, "leg %s stored under %s/%s", e.Leg, e.PK, e.SK)
		}
	}

	out = append(out, checkAccounts(t, want.Opening, legs)...)

	for _, id := range sortedKeys(legs) {
		l := legs[id]
		for _, leg := range []string{ledger.LegDebit, ledger.LegCredit, ledger.LegRefund} {
			if n := len(l[leg]); n > 1 {
				add(CheckLegOnce, id, "%d %s legs", n, leg)
			}
		}
		for leg := range l {
			if leg != ledger.LegDebit && leg != ledger.LegCredit && leg != ledger.LegRefund {
				add(CheckLegOnce, id, "a leg of unknown kind %q", leg)
			}
		}
		switch {
		case l.has(ledger.LegCredit) && !l.has(ledger.LegDebit):
			add(CheckLegOrder, id, "CREDIT without DEBIT")
		case l.has(ledger.LegRefund) && !l.has(ledger.LegDebit):
			add(CheckLegOrder, id, "REFUND without DEBIT")
		}
		if l.has(ledger.LegCredit) && l.has(ledger.LegRefund) {
			add(CheckLegOrder, id, "both CREDIT and REFUND")
		}
		r, ok := records[id]
		if !ok {
			add(CheckExecutionPerKey, id, "ledger legs of a transfer no record names (a second transfer for its key?)")
			continue
		}
		for leg, es := range l {
			for _, e := range es {
				acct := r.SourceAccountID
				if leg == ledger.LegCredit {
					acct = r.DestinationAccountID
				}
				if e.AccountID != acct || e.Amount != r.Amount || e.Currency != r.Currency {
					add(CheckLegMatches, id, "%s moved %d %s on %s; the transfer is %d %s, %s → %s",
						leg, e.Amount, e.Currency, e.AccountID, r.Amount, r.Currency, r.SourceAccountID, r.DestinationAccountID)
				}
			}
		}
	}

	for _, r := range sortedTransfers(t.Transfers) {
		l := legs[r.TransferID]
		debit, credit, refund := l.has(ledger.LegDebit), l.has(ledger.LegCredit), l.has(ledger.LegRefund)
		switch r.Status {
		case ledger.StatusCompleted:
			if !debit || !credit || refund {
				add(CheckStatusLegs, r.TransferID, "COMPLETED with legs %s", l.names())
			}
		case ledger.StatusFailed:
			if debit && !refund {
				add(CheckStatusLegs, r.TransferID, "FAILED (%s) with a DEBIT and no REFUND", r.FailureCode)
			}
		default:
			add(CheckTerminal, r.TransferID, "still %s after quiescence, legs %s", r.Status, l.names())
		}
		if recorded := strings.Join(sortedStrings(r.Legs), ","); recorded != l.names() {
			add(CheckStatusLegs, r.TransferID, "the record lists legs %q, the ledger has %s", recorded, l.names())
		}
		if r.Status == ledger.StatusFailed && r.FailureCode == transfer.CodeAborted {
			add(CheckDecidedByCrash, r.TransferID, "FAILED ABORTED (%s): nobody stops executions in the campaign", r.FailureError)
		}
		if !strings.HasSuffix(r.ExecutionArn, ":"+r.TransferID) {
			add(CheckExecutionPerKey, r.TransferID, "the record's execution %s is not named after it", r.ExecutionArn)
		}
	}

	byKey := map[string]ledger.Transfer{}
	for _, r := range t.Transfers {
		byKey[r.IdempotencyKey] = r
	}
	for _, key := range sortedKeys(want.Accepted) {
		ids := want.Accepted[key]
		r, ok := byKey[key]
		if !ok {
			add(CheckTerminal, key, "answered 2xx (transfer %s) but no record has the key", strings.Join(ids, ", "))
			continue
		}
		for _, id := range ids {
			if id != r.TransferID {
				add(CheckExecutionPerKey, key, "answered with transfer %s, the record is %s", id, r.TransferID)
			}
		}
		if r.Status == ledger.StatusFailed && r.FailureCode == transfer.CodeOrphaned {
			add(CheckDecidedByCrash, r.TransferID, "accepted with a 2xx, then FAILED ORPHANED (%s)", r.FailureError)
		}
	}

	if want.Executions != nil {
		seen := map[string]int{}
		for _, x := range want.Executions {
			seen[x.Name]++
			if _, ok := records[x.Name]; !ok {
				add(CheckExecutionPerKey, x.Name, "an execution (%s) of no transfer record", x.Status)
			}
		}
		for _, r := range sortedTransfers(t.Transfers) {
			if r.Origin == ledger.OriginOpeningBalance {
				// An opening balance the stack's seed wrote, COMPLETED at once: no workflow, so no execution.
				if n := seen[r.TransferID]; n != 0 {
					add(CheckExecutionPerKey, r.TransferID, "%d executions of an opening-balance transfer, want 0", n)
				}
				continue
			}
			if n := seen[r.TransferID]; n != 1 && (n > 1 || r.Status != ledger.StatusFailed || r.FailureCode != transfer.CodeOrphaned) {
				add(CheckExecutionPerKey, r.TransferID, "%d executions, want 1", n)
			}
		}
	}

	for _, p := range want.Replays {
		if string(p.First) != string(p.Later) {
			add(CheckReplay, p.Key, "replay answered %s, first answered %s", clip(p.Later), clip(p.First))
		}
	}

	if want.Events != nil {
		for _, id := range acceptedIDs(want.Accepted) {
			r, ok := records[id]
			if !ok || (r.Status != ledger.StatusCompleted && r.Status != ledger.StatusFailed) {
				continue // CheckTerminal reports it
			}
			if !slices.Contains(want.Events[id], r.Status) {
				add(CheckOutcomeEvent, id, "settled %s, outcome events seen: %v", r.Status, want.Events[id])
			}
		}
	}

	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Check != out[j].Check {
			return out[i].Check < out[j].Check
		}
		return out[i].Subject < out[j].Subject
	})
	return out
}

// checkAccounts checks conservation per currency, each account against its opening balance and its legs, and
// overdrafts.
func checkAccounts(t Table, opening map[string]int64, legs map[string]legSet) []Violation {
	var out []Violation
	add := func(check, subject, format string, args ...any) {
		out = append(out, Violation{Check: check, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	}
	moved := map[string]int64{}   // by account: what its legs moved
	entries := map[string]int64{} // by account: its legs
	for _, l := range legs {
		for leg, es := range l {
			for _, e := range es {
				entries[e.AccountID]++
				if leg == ledger.LegDebit {
					moved[e.AccountID] -= e.Amount
				} else {
					moved[e.AccountID] += e.Amount
				}
			}
		}
	}
	sum, openSum := map[string]int64{}, map[string]int64{}
	seen := map[string]bool{}
	accounts := append([]ledger.Account(nil), t.Accounts...)
	sort.Slice(accounts, func(i, j int) bool { return accounts[i].AccountID < accounts[j].AccountID })
	for _, a := range accounts {
		seen[a.AccountID] = true
		sum[a.Currency] += a.Balance
		open, ok := opening[a.AccountID]
		if !ok {
			add(CheckConservation, a.AccountID, "an account the campaign did not open (balance %d %s)", a.Balance, a.Currency)
		}
		openSum[a.Currency] += open
		if want := open + moved[a.AccountID]; a.Balance != want {
			add(CheckAccountLedger, a.AccountID, "balance %d, opening %d moved by its legs %+d = %d", a.Balance, open, moved[a.AccountID], want)
		}
		if want := 1 + entries[a.AccountID]; a.Version != want {
			add(CheckAccountLedger, a.AccountID, "version %d, want 1 + %d legs = %d", a.Version, entries[a.AccountID], want)
		}
		if a.Balance < 0 && a.AccountKind() != ledger.KindFunding {
			add(CheckOverdraft, a.AccountID, "balance %d %s", a.Balance, a.Currency)
		}
	}
	for _, id := range sortedKeys(opening) {
		if !seen[id] {
			add(CheckConservation, id, "an opened account (balance %d) is missing from the table", opening[id])
		}
	}
	for _, cur := range sortedKeys(sum) {
		if sum[cur] != openSum[cur] {
			add(CheckConservation, cur, "balances sum to %d, the opening balances to %d (%+d)", sum[cur], openSum[cur], sum[cur]-openSum[cur])
		}
	}
	for id := range moved {
		if !seen[id] && moved[id] != 0 {
			add(CheckConservation, id, "legs moved %+d on an account that does not exist", moved[id])
		}
	}
	return out
}

// names lists the legs present, sorted, joined by commas ("" for none).
func (l legSet) names() string {
	var n []string
	for leg, es := range l {
		if len(es) > 0 {
			n = append(n, leg)
		}
	}
	sort.Strings(n)
	return strings.Join(n, ",")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedStrings(ss []string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	return out
}

func sortedTransfers(ts []ledger.Transfer) []ledger.Transfer {
	out := append([]ledger.Transfer(nil), ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].TransferID < out[j].TransferID })
	return out
}

// clip shortens an answer for a message.
func clip(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// acceptedIDs are the transfer ids the accepted keys' answers named, sorted, each once.
func acceptedIDs(accepted map[string][]string) []string {
	var ids []string
	for _, named := range accepted {
		ids = append(ids, named...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
