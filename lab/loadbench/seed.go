package loadbench

import (
	"fmt"

	"github.com/transferflow/orchestrator/localaws/stack"
)

// seedBalance is every bench account's opening balance in minor units: far more than a run can move (transfers are
// of 1 to 99 units), so no transfer of a run fails for funds.
const seedBalance int64 = 1_000_000_000_000

// accountSets are a run's accounts, one set per use. All ids have the same length, so the store test can replace
// one with another in a request body without changing its size.
type accountSets struct {
	attribution, many, hot, burst, direct []string
}

// newAccountSets returns the accounts of a run of scale s; the store test's (two fresh accounts per direct transfer)
// only when the run has one (store), so that they do not grow the table the other sections measure.
func newAccountSets(s Scale, store bool) accountSets {
	a := accountSets{
		attribution: accountIDs("a", 2*s.Attribution),
		many:        accountIDs("m", s.ManyAccounts),
		hot:         accountIDs("h", s.HotAccounts),
		burst:       accountIDs("b", s.BurstAccounts),
	}
	if store {
		a.direct = accountIDs("d", 2*s.DirectTransfers*len(s.Cells))
	}
	return a
}

func (a accountSets) all() [][]string {
	return [][]string{a.attribution, a.many, a.hot, a.burst, a.direct}
}

// accountIDs returns n account ids of one set: bench-<set>-000000, bench-<set>-000001, …
func accountIDs(set string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%s-%06d", set, i)
	}
	return ids
}

// writeSeed writes the --seed file that creates every account of sets.
func writeSeed(path string, sets ...[]string) error {
	var accounts []stack.SeedAccount
	for _, set := range sets {
		for _, id := range set {
			accounts = append(accounts, stack.SeedAccount{AccountID: id, Currency: currency, Balance: seedBalance, Owner: stack.LocalCaller})
		}
	}
	return stack.WriteSeed(path, accounts)
}
