package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// FaultKind names one kind of fault the campaign turns on (the local stack's --fault and --lambda-concurrency,
// docs/local-stack.md). Kills are counted apart.
type FaultKind string

// The fault kinds, each with the flags it adds to the stack (see faultArgs).
const (
	// FaultLambdaServiceError: the debit or credit function's invocations fail with a Lambda service error
	// (Lambda.ServiceException), which the workflow retries.
	FaultLambdaServiceError FaultKind = "lambda-service-error"
	// FaultTransientError: the debit or credit function returns TransientError, its own retryable error.
	FaultTransientError FaultKind = "function-transient-error"
	// FaultFunctionError: the credit function fails with an error the workflow does not retry (ChaosInjected), so
	// the transfer is refunded, or the debit function does, so the execution fails and the reconciler settles it.
	FaultFunctionError FaultKind = "function-error"
	// FaultRefundError: the REFUND leg fails with Lambda.ServiceException (retried by the Refund state).
	FaultRefundError FaultKind = "refund-service-error"
	// FaultDelay: the credit function answers a few hundred milliseconds late.
	FaultDelay FaultKind = "delay"
	// FaultTimeout: the debit function answers past its 10 s Lambda timeout (Sandbox.Timedout, retried).
	FaultTimeout FaultKind = "delay-past-timeout"
	// FaultCrashAfterReserve: the orchestrator dies after reserving the key, before starting the workflow; the
	// client's retry, or the sweep, starts it.
	FaultCrashAfterReserve FaultKind = "crash-after-reserve"
	// FaultCrashAfterCredit: the credit function dies right after its CREDIT committed (and settled the record);
	// the workflow sees the credit fail, its refund is refused as CreditAlreadyApplied, and CompleteCredited
	// completes the transfer.
	FaultCrashAfterCredit FaultKind = "crash-after-credit"
	// FaultThrottle: a low account Lambda concurrency, so invocations are throttled (429 to clients,
	// Lambda.TooManyRequestsException to the workflow).
	FaultThrottle FaultKind = "throttle"
	// FaultEventPublishError: the local EventBridge fails a few PutEvents calls; the outcome relay reports its
	// events and the stream's mapping retries them.
	FaultEventPublishError FaultKind = "event-publish-error"
	// FaultEventOutage: the local EventBridge fails every PutEvents entry of the epoch: the settlements made during it
	// wait in the table's stream, retried, until the epoch ends with a kill and the next one publishes them.
	FaultEventOutage FaultKind = "event-outage"
	// FaultLostPublication: the event outage, and every status-change event dropped before the rules, as
	// EventBridge's best-effort delivery of Step Functions' status changes may on AWS: the reconciler hears of no
	// execution that ended, its sweep settles them, and their events wait in the stream like the others.
	FaultLostPublication FaultKind = "lost-publication"
	// FaultKillBeforePublication: the stream's mapping delivers nothing for the epoch, as if its poller lagged, so
	// every settlement of the epoch is made and not yet published when the epoch's kill comes; the next epoch
	// publishes them from the stream.
	FaultKillBeforePublication FaultKind = "kill-before-publication"
)

// endsWithKill are the kinds that hold outcome events back for the rest of their stack's life: they go only into
// epochs a kill ends, so that the events they hold are published by a later epoch (an outage that never ended
// would leave them in the stream, not on the bus, whatever the design).
var endsWithKill = []FaultKind{FaultEventOutage, FaultLostPublication, FaultKillBeforePublication}

// FaultKinds lists every kind a campaign turns on, in a fixed order.
var FaultKinds = []FaultKind{FaultLambdaServiceError, FaultTransientError, FaultFunctionError, FaultRefundError,
	FaultDelay, FaultTimeout, FaultCrashAfterReserve, FaultCrashAfterCredit, FaultThrottle, FaultEventPublishError,
	FaultEventOutage, FaultLostPublication, FaultKillBeforePublication}

// Fault is one fault of an epoch: its kind and the stack flags that turn it on.
type Fault struct {
	Kind FaultKind
	Args []string
}

// faultArgs returns the stack flags of one fault of kind, its parameters drawn from r.
func faultArgs(kind FaultKind, r *rand.Rand) []string {
	times := strconv.Itoa(2 + r.IntN(8))
	fn := []string{"debit", "credit"}[r.IntN(2)]
	switch kind {
	case FaultLambdaServiceError:
		return []string{"--fault", fn + ":error=Lambda.ServiceException:times=" + times}
	case FaultTransientError:
		return []string{"--fault", fn + ":error=TransientError:times=" + times}
	case FaultFunctionError:
		return []string{"--fault", fn + ":error=ChaosInjected:times=" + strconv.Itoa(1+r.IntN(3))}
	case FaultRefundError:
		return []string{"--fault", "credit:error=Lambda.ServiceException:leg=REFUND:times=" + times}
	case FaultDelay:
		return []string{"--fault", fmt.Sprintf("credit:delay=%dms:times=%s", 100+r.IntN(400), times)}
	case FaultTimeout:
		return []string{"--fault", "debit:delay=11s:times=" + strconv.Itoa(1+r.IntN(3))}
	case FaultCrashAfterReserve:
		return []string{"--fault", "orchestrator:crash=after-reserve:times=" + times}
	case FaultCrashAfterCredit:
		return []string{"--fault", "credit:crash=after-credit:times=" + times}
	case FaultThrottle:
		return []string{"--lambda-concurrency", strconv.Itoa(8 + r.IntN(8))}
	case FaultEventPublishError:
		return []string{"--fault", "events:error=InternalException:times=" + times}
	case FaultEventOutage:
		return []string{"--fault", "events:failed-entry=InternalFailure"}
	case FaultLostPublication:
		return []string{"--fault", "status-change:drop", "--fault", "events:failed-entry=InternalFailure"}
	case FaultKillBeforePublication:
		return []string{"--fault", "stream:hold"}
	}
	return nil
}

// Epoch is the stack's life between two kills: the faults it runs with.
type Epoch struct {
	Faults []Fault
}

// Args are the stack flags of the epoch's faults.
func (e Epoch) Args() []string {
	var args []string
	for _, f := range e.Faults {
		args = append(args, f.Args...)
	}
	return args
}

// Kill is one kill -9 of the stack: when the AfterAccepted-th transfer is accepted (its first 2xx answer), after
// Delay (0: at once, between that 202 and the workflow's first state when the timing allows).
type Kill struct {
	AfterAccepted int
	Delay         time.Duration
}

// Action is what one client does with one transfer (see the Act constants).
type Action string

// The clients' actions. Every one submits its transfer until it has an answer, waits for the end and replays it.
const (
	// ActPlain: submit (the client's own retries repeat the same key and body).
	ActPlain Action = "plain"
	// ActDuplicate: two submissions of the same key and body at once.
	ActDuplicate Action = "duplicate"
	// ActTimeoutReplay: a first attempt cut off after a few milliseconds, then the same request again.
	ActTimeoutReplay Action = "timeout-replay"
	// ActOtherPayload: once accepted, the same key with another amount (must be refused, 422).
	ActOtherPayload Action = "other-payload"
	// ActNewSession: once accepted, the same request from a new session of the same role (must replay).
	ActNewSession Action = "new-session"
)

// Actions lists every action, in a fixed order.
var Actions = []Action{ActPlain, ActDuplicate, ActTimeoutReplay, ActOtherPayload, ActNewSession}

// Transfer is one transfer of the campaign: the client's action and the request.
type Transfer struct {
	Index       int
	Action      Action
	Source      string
	Destination string
	Amount      int64
	Currency    string
	// CutAfter is the first attempt's timeout for ActTimeoutReplay.
	CutAfter time.Duration
}

// Account is one account the campaign opens.
type Account struct {
	ID       string
	Currency string
	Balance  int64
}

// Plan is everything a seed decides.
type Plan struct {
	Seed      uint64
	Accounts  []Account
	Epochs    []Epoch // len(Kills)+1: the faults before the first kill, between kills, after the last
	Kills     []Kill
	Transfers []Transfer
}

// Campaign account sets: customer accounts in EUR and USD with opening balances that many transfers exhaust, so
// that insufficient funds and overdraft attempts happen.
const (
	eurAccounts    = 16
	usdAccounts    = 4
	openingBalance = 40_000
	maxAmount      = 4_000
	// missingAccount is a destination that does not exist (ACCOUNT_NOT_FOUND).
	missingAccount = "chaos-missing"
)

// NewPlan derives a campaign of transfers transfers and kills kills from seed, with every kind of FaultKinds. The
// same arguments give the same plan.
func NewPlan(seed uint64, transfers, kills int) Plan {
	r := rand.New(rand.NewPCG(seed, 0x6368616f73)) // "chaos"
	p := Plan{Seed: seed}
	for i := range eurAccounts + usdAccounts {
		cur := "EUR"
		if i >= eurAccounts {
			cur = "USD"
		}
		p.Accounts = append(p.Accounts, Account{ID: fmt.Sprintf("chaos-%s-%02d", cur, i), Currency: cur,
			Balance: openingBalance + int64(r.IntN(openingBalance))})
	}
	p.Kills = killPoints(r, transfers, kills)
	p.Epochs = epochs(r, len(p.Kills)+1, FaultKinds)
	for i := range transfers {
		p.Transfers = append(p.Transfers, p.transfer(r, i))
	}
	return p
}

// killPoints picks kills distinct accepted-transfer counts in [1, 90% of transfers], sorted; every other kill is
// at once, the others after up to 2 s.
func killPoints(r *rand.Rand, transfers, kills int) []Kill {
	last := max(transfers*9/10, 1)
	kills = min(kills, last)
	at := map[int]bool{}
	for len(at) < kills {
		at[1+r.IntN(last)] = true
	}
	points := make([]int, 0, kills)
	for n := range at {
		points = append(points, n)
	}
	sort.Ints(points)
	out := make([]Kill, len(points))
	for i, n := range points {
		out[i] = Kill{AfterAccepted: n}
		if i%2 == 1 {
			out[i].Delay = time.Duration(r.IntN(2000)) * time.Millisecond
		}
	}
	return out
}

// epochs gives n epochs their faults: the kinds (all), shuffled, are dealt round-robin so that every kind is on in some
// epoch whenever n > 0 (with few epochs, each gets several), and each epoch may get one kind more at random.
func epochs(r *rand.Rand, n int, all []FaultKind) []Epoch {
	out := make([]Epoch, n)
	kinds := slices.Clone(all)
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	deal := max(len(kinds), n)
	for i := range deal {
		k := kinds[i%len(kinds)]
		slot := i % n
		if slices.Contains(endsWithKill, k) {
			if n < 2 {
				continue // no kill ends any epoch
			}
			slot = i % (n - 1)
		}
		e := &out[slot]
		if !e.has(k) {
			e.Faults = append(e.Faults, Fault{Kind: k, Args: faultArgs(k, r)})
		}
	}
	for i := range out {
		if r.IntN(2) == 0 {
			k := all[r.IntN(len(all))]
			if i == n-1 && slices.Contains(endsWithKill, k) {
				continue
			}
			if !out[i].has(k) {
				out[i].Faults = append(out[i].Faults, Fault{Kind: k, Args: faultArgs(k, r)})
			}
		}
	}
	return out
}

func (e Epoch) has(k FaultKind) bool {
	for _, f := range e.Faults {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// transfer draws transfer i: mostly between two accounts of one currency, sometimes to a missing account or
// across currencies (refused without moving money).
func (p Plan) transfer(r *rand.Rand, i int) Transfer {
	t := Transfer{Index: i, Action: Actions[r.IntN(len(Actions))], Amount: 1 + int64(r.IntN(maxAmount))}
	eur, usd := p.Accounts[:eurAccounts], p.Accounts[eurAccounts:]
	set := eur
	if r.IntN(5) == 0 {
		set = usd
	}
	a := r.IntN(len(set))
	b := r.IntN(len(set) - 1)
	if b >= a {
		b++
	}
	t.Source, t.Destination, t.Currency = set[a].ID, set[b].ID, set[a].Currency
	switch n := r.IntN(100); {
	case n < 2:
		t.Destination = missingAccount
	case n < 4:
		other := usd
		if set[a].Currency == "USD" {
			other = eur
		}
		t.Destination = other[r.IntN(len(other))].ID
	}
	if t.Action == ActTimeoutReplay {
		t.CutAfter = time.Duration(1+r.IntN(20)) * time.Millisecond
	}
	return t
}

// Key is transfer i's Idempotency-Key.
func (p Plan) Key(i int) string { return fmt.Sprintf("chaos-%d-%06d", p.Seed, i) }

// Opening maps each account the campaign's stack holds to the balance it held before any ledger entry: 0 for all.
// The stack opens the seed file's accounts at 0 and funds each balance with a COMPLETED opening transfer from the
// currency's funding account (ledger.SeedOpenings), whose legs are in the table like any other: so every balance,
// the funding accounts' included, is its legs' sum, and each currency's balances sum to 0.
func (p Plan) Opening() map[string]int64 {
	m := make(map[string]int64, len(p.Accounts))
	for _, a := range p.Accounts {
		m[a.ID] = 0
		m[ledger.FundingAccountID(a.Currency)] = 0
	}
	return m
}
