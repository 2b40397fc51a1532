package e2e

import (
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// propertyChecks is how many random sequences TestNoCallerSpendsAnotherOwnersMoney runs (rapid's -rapid.checks
// when that flag is set on the command line).
const propertyChecks = 12

// TestNoCallerSpendsAnotherOwnersMoney runs random sequences of API calls by clients (no operator) against one
// real stack: accounts opened in two currencies, transfers in every direction (out of the caller's own accounts,
// other callers', funding and missing ones, into anything), replays of a key with a changed payload, and reads of
// accounts, listings and transfers, mine and others'. After each sequence, once every transfer has settled, the
// table must show that no transfer moved money out of an account its submitter does not own, no funding account// changed, and the balances of each currency still sum to what they did; and no answer of the sequence showed a
// caller an account, listing or transfer of another owner (every such read answered exactly as a missing one).
func TestNoCallerSpendsAnotherOwnersMoney(t *testing.T) {
	t.Parallel()
	if f := flag.Lookup("rapid.checks"); f != nil && !isFlagSet("rapid.checks") {
		_ = f.Value.Set(fmt.Sprint(propertyChecks))
	}
	s := startStack(t)
	callers := []caller{unsignedCaller, userCaller("alice"), roleCaller("bob", "bob-app"), userCaller("carol")}
	// What a missing account and a missing transfer answer: the only answer another owner's may get.
	missingAccount := unsignedCaller.send(s, http.MethodGet, "/accounts/acc-none-at-all", nil, nil)
	missingListing := unsignedCaller.send(s, http.MethodGet, "/accounts/acc-none-at-all/transfers", nil, nil)
	missingTransfer := unsignedCaller.send(s, http.MethodGet, "/transfers/tr_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", nil, nil)
	seq := 0

	rapid.Check(t, func(rt *rapid.T) {
		seq++
		before := s.tableAccounts(t)
		recordsBefore := s.tableRecords(t)
		ids := slices.Sorted(func(yield func(string) bool) {
			for id := range before {
				if !yield(id) {
					return
				}
			}
		})
		// Candidate ids: every account so far, a few this sequence may open, and one that never exists.
		fresh := []string{fmt.Sprintf("p%d-a", seq), fmt.Sprintf("p%d-b", seq), fmt.Sprintf("p%d-c", seq)}
		pool := append(append(slices.Clone(ids), fresh...), "acc-missing")
		var submitted []submittedTransfer
		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for i := range steps {
			c := rapid.SampledFrom(callers).Draw(rt, "caller")
			switch rapid.IntRange(0, 4).Draw(rt, "action") {
			case 0: // open an account
				id := rapid.SampledFrom(fresh).Draw(rt, "open")
				cur := rapid.SampledFrom([]string{"EUR", "USD"}).Draw(rt, "currency")
				r := c.send(s, http.MethodPost, "/accounts", map[string]any{"accountId": id, "currency": cur},
					map[string]string{"Idempotency-Key": fmt.Sprintf("open-%d-%d", seq, i)})
				if r.Status != http.StatusCreated && r.Status != http.StatusOK && r.Status != http.StatusConflict {
					rt.Fatalf("%s opens %s: %d %s", c.name, id, r.Status, r.RawBody)
				}
				if r.Status == http.StatusConflict && strings.Contains(string(r.RawBody), "balance") {
					rt.Fatalf("%s's conflict on %s shows the account: %s", c.name, id, r.RawBody)
				}
			case 1, 2: // a transfer, possibly a reused key with another payload
				src := rapid.SampledFrom(pool).Draw(rt, "source")
				dst := rapid.SampledFrom(pool).Draw(rt, "destination")
				if src == dst {
					continue
				}
				key := fmt.Sprintf("pay-%d-%d", seq, rapid.IntRange(0, 3).Draw(rt, "key"))
				body := transferBody(src, dst, int64(rapid.IntRange(1, 3000).Draw(rt, "amount")),
					rapid.SampledFrom([]string{"EUR", "USD"}).Draw(rt, "transfer currency"))
				r := c.send(s, http.MethodPost, "/transfers", body, map[string]string{"Idempotency-Key": key})
				switch r.Status {
				case http.StatusAccepted, http.StatusOK:
					submitted = append(submitted, submittedTransfer{by: c, id: r.Body["transferId"].(string)})
				case http.StatusConflict, http.StatusUnprocessableEntity:
				default:
					rt.Fatalf("%s submits %v: %d %s", c.name, body, r.Status, r.RawBody)
				}
			case 3: // read an account or its listing
				id := rapid.SampledFrom(pool).Draw(rt, "read")
				listing := rapid.Bool().Draw(rt, "listing")
				path, missing := "/accounts/"+id, missingAccount
				if listing {
					path, missing = path+"/transfers", missingListing
				}
				r := c.send(s, http.MethodGet, path, nil, nil)
				owner := s.owner(t, id)
				switch {
				case owner == c.scope && r.Status != http.StatusOK:
					rt.Fatalf("%s reads its own %s: %d %s", c.name, path, r.Status, r.RawBody)
				case owner != c.scope && (r.Status != missing.Status || string(r.RawBody) != string(missing.RawBody)):
					rt.Fatalf("%s reads %s of another owner: %d %s, want what a missing account answers", c.name, path, r.Status, r.RawBody)
				}
			case 4: // read a transfer of the sequence, anyone's
				if len(submitted) == 0 {
					continue
				}
				tr := rapid.SampledFrom(submitted).Draw(rt, "transfer")
				r := c.send(s, http.MethodGet, "/transfers/"+tr.id, nil, nil)
				if tr.by.scope != c.scope && (r.Status != missingTransfer.Status || string(r.RawBody) != string(missingTransfer.RawBody)) {
					rt.Fatalf("%s reads %s's transfer: %d %s", c.name, tr.by.name, r.Status, r.RawBody)
				}
			}
		}
		for _, tr := range submitted {
			s.waitTerminalAs(func() response { return tr.by.send(s, http.MethodGet, "/transfers/"+tr.id, nil, nil) }, tr.id, settle)
		}

		after := s.tableAccounts(t)
		sums := map[string]int64{}
		for id, a := range before {
			sums[a.Currency] -= a.Balance
			// Anyone may pay into a funding account; only an operator moves money out of one.
			if a.AccountKind() == ledger.KindFunding && after[id].Balance < a.Balance {
				rt.Fatalf("funding account %s went from %d to %d with no operator calling", id, a.Balance, after[id].Balance)
			}
		}
		for _, a := range after {
			sums[a.Currency] += a.Balance
		}
		for cur, d := range sums {
			if d != 0 {
				rt.Fatalf("%s balances changed their sum by %d", cur, d)
			}
		}
		for id, r := range s.tableRecords(t) {
			if _, old := recordsBefore[id]; old || !slices.Contains(r.Legs, ledger.LegDebit) {
				continue
			}
			if src := after[r.SourceAccountID]; src.Owner != r.Scope || r.Operator {
				rt.Fatalf("transfer %s by %s debited %s, owned by %q", id, r.Scope, r.SourceAccountID, src.Owner)
			}
		}
	})
}

// submittedTransfer is a transfer a caller submitted during a sequence.
type submittedTransfer struct {
	by caller
	id string
}

// owner is the account's owner scope, "" when it has none or does not exist.
func (s *stack) owner(t testing.TB, id string) string {
	a, err := s.store().GetAccount(t.Context(), id)
	if err != nil {
		return ""
	}
	return a.Owner
}

// isFlagSet reports whether the flag name was given on the command line.
func isFlagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
