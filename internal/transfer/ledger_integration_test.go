package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// concurrently invokes in n times at once (all released together) and returns each result and error.
func concurrently(e *ledgerEnv, n int, inputs ...LegInput) ([][]byte, []error) {
	outs, errs := make([][]byte, n*len(inputs)), make([]error, n*len(inputs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			<-start
			outs[i], errs[i] = e.invoke(context.Background(), inputs[i%len(inputs)])
		})
	}
	close(start)
	wg.Wait()
	return outs, errs
}

// TestLegAppliedOnceUnderConcurrency invokes one leg 50 times at once: it is applied once, every invocation that
// succeeds returns the same bytes, and an invocation much later returns them again.
func TestLegAppliedOnceUnderConcurrency(t *testing.T) {
	e := newAliceBobEnv(t, 10_000, 500)
	tests := []struct {
		name    string
		before  []string
		leg     string
		account string
		delta   int64
	}{
		{"debit", nil, ledger.LegDebit, "acc-alice", -1250},
		{"credit", []string{ledger.LegDebit}, ledger.LegCredit, "acc-bob", +1250},
		{"refund", []string{ledger.LegDebit}, ledger.LegRefund, "acc-alice", +1250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.transfer(t, "acc-alice", "acc-bob", 1250, "EUR")
			for _, l := range tt.before {
				e.leg(t, id, l)
			}
			acct := e.accountNow(t, tt.account)
			outs, errs := concurrently(e, 50, legInput(e.record(t, id), tt.leg))
			var first []byte
			ok, transient := 0, 0
			for i, err := range errs {
				switch {
				case err == nil:
					ok++
					if first == nil {
						first = outs[i]
					} else if !bytes.Equal(outs[i], first) {
						t.Errorf("result %d = %s, want %s", i, outs[i], first)
					}
				case lambdaErrorType(err) == "TransientError":
					transient++
				default:
					t.Errorf("invocation %d: %v (%s)", i, err, lambdaErrorType(err))
				}
			}
			t.Logf("50 concurrent invocations: %d succeeded, %d transient", ok, transient)
			if ok == 0 {
				t.Fatal("no invocation succeeded")
			}
			after := e.accountNow(t, tt.account)
			if after.Balance != acct.Balance+tt.delta || after.Version != acct.Version+1 {
				t.Errorf("account: balance %d version %d, want %d and %d (one write)", after.Balance, after.Version, acct.Balance+tt.delta, acct.Version+1)
			}
			if n := len(e.entries(t, id)); n != len(tt.before)+1 {
				t.Errorf("%d entries, want %d", n, len(tt.before)+1)
			}
			later := e.leg(t, id, tt.leg)
			if !bytes.Equal(later, first) {
				t.Errorf("later invocation = %s, want the first result %s", later, first)
			}
			if b := e.accountNow(t, tt.account).Balance; b != after.Balance {
				t.Errorf("balance after the later invocation = %d, want %d", b, after.Balance)
			}
		})
	}
}

// TestOverdraftLeavesEverythingUntouched tries a debit one unit larger than the balance.
func TestOverdraftLeavesEverythingUntouched(t *testing.T) {
	e := newAliceBobEnv(t, 1000, 0)
	id := e.transfer(t, "acc-alice", "acc-bob", 1001, "EUR")
	before := e.accountNow(t, "acc-alice")
	for range 2 { // a retried refusal is refused again
		_, err := e.invoke(context.Background(), legInput(e.record(t, id), ledger.LegDebit))
		wantErrorType(t, err, "InsufficientFunds")
	}
	if after := e.accountNow(t, "acc-alice"); after != before {
		t.Errorf("account = %+v, want %+v untouched", after, before)
	}
	if n := len(e.entries(t, id)); n != 0 {
		t.Errorf("%d ledger entries, want none", n)
	}
	exact := e.transfer(t, "acc-alice", "acc-bob", 1000, "EUR")
	e.leg(t, exact, ledger.LegDebit)
	if b := e.accountNow(t, "acc-alice").Balance; b != 0 {
		t.Errorf("debit of the whole balance leaves %d, want 0", b)
	}
}

// TestLegAfterSettlementMovesNothing settles the record (as the state machine or the reconciler would) and then
// invokes each leg: all are fenced, and nothing moves.
func TestLegAfterSettlementMovesNothing(t *testing.T) {
	e := newAliceBobEnv(t, 10_000, 0)
	tests := []struct {
		name   string
		before []string
		status string
		leg    string
	}{
		{"debit after failure", nil, ledger.StatusFailed, ledger.LegDebit},
		{"debit after completion", nil, ledger.StatusCompleted, ledger.LegDebit},
		{"credit after failure", []string{ledger.LegDebit}, ledger.StatusFailed, ledger.LegCredit},
		{"credit after completion", []string{ledger.LegDebit}, ledger.StatusCompleted, ledger.LegCredit},
		{"refund after failure", []string{ledger.LegDebit}, ledger.StatusFailed, ledger.LegRefund},
		{"refund after completion", []string{ledger.LegDebit}, ledger.StatusCompleted, ledger.LegRefund},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.transfer(t, "acc-alice", "acc-bob", 700, "EUR")
			for _, l := range tt.before {
				e.leg(t, id, l)
			}
			in := legInput(e.record(t, id), tt.leg)
			e.markSettled(t, id, tt.status)
			alice, bob := e.accountNow(t, "acc-alice"), e.accountNow(t, "acc-bob")
			_, err := e.invoke(context.Background(), in)
			wantErrorType(t, err, "TransferNotInProgress")
			if a, b := e.accountNow(t, "acc-alice"), e.accountNow(t, "acc-bob"); a != alice || b != bob {
				t.Errorf("accounts changed: %+v %+v, want %+v %+v", a, b, alice, bob)
			}
			if n := len(e.entries(t, id)); n != len(tt.before) {
				t.Errorf("%d entries, want %d", n, len(tt.before))
			}
		})
	}
	t.Run("leg already written is replayed after settlement", func(t *testing.T) {
		id := e.transfer(t, "acc-alice", "acc-bob", 700, "EUR")
		first := e.leg(t, id, ledger.LegDebit)
		e.markSettled(t, id, ledger.StatusFailed)
		if again := e.leg(t, id, ledger.LegDebit); !bytes.Equal(again, first) {
			t.Errorf("replay = %s, want %s", again, first)
		}
	})
}

// TestKeyReuseFencesTheOldTransfer replaces a record with a new transfer under the same key (what happens after the
// first record expired): a late leg of the old transfer is fenced, even though the new record is IN_PROGRESS.
func TestKeyReuseFencesTheOldTransfer(t *testing.T) {
	e := newAliceBobEnv(t, 10_000, 0)
	id := e.transfer(t, "acc-alice", "acc-bob", 700, "EUR")
	old := legInput(e.record(t, id), ledger.LegDebit)
	pk, _ := ledger.RecordKey(id)
	reused := id[:len(id)-16] + "reusedreused2345"
	if p, _ := ledger.RecordKey(reused); p != pk {
		t.Fatalf("reused id %s has key %s, want %s", reused, p, pk)
	}
	if _, err := e.db.DeleteItem(context.Background(), deleteRecord(e.table, pk)); err != nil {
		t.Fatal(err)
	}
	e.reserve(t, reused, "acc-alice", "acc-bob", 700, "EUR")
	_, err := e.invoke(context.Background(), old)
	wantErrorType(t, err, "TransferNotInProgress")
	if b := e.accountNow(t, "acc-alice").Balance; b != 10_000 {
		t.Errorf("balance = %d, want 10000", b)
	}
}

// TestRefundRestoresOnceAndFencesCredit refunds a debit twice and then tries the credit.
func TestRefundRestoresOnceAndFencesCredit(t *testing.T) {
	e := newAliceBobEnv(t, 5000, 0)
	id := e.transfer(t, "acc-alice", "acc-bob", 1250, "EUR")
	e.leg(t, id, ledger.LegDebit)
	if b := e.accountNow(t, "acc-alice").Balance; b != 3750 {
		t.Fatalf("balance after debit = %d, want 3750", b)
	}
	first := e.leg(t, id, ledger.LegRefund)
	again := e.leg(t, id, ledger.LegRefund)
	if !bytes.Equal(first, again) {
		t.Errorf("second refund = %s, want %s", again, first)
	}
	if b := e.accountNow(t, "acc-alice").Balance; b != 5000 {
		t.Errorf("balance after refunds = %d, want 5000 (restored once)", b)
	}
	_, err := e.invoke(context.Background(), legInput(e.record(t, id), ledger.LegCredit))
	wantErrorType(t, err, "RefundAlreadyApplied") // the credit after the refund
	if b := e.accountNow(t, "acc-bob").Balance; b != 0 {
		t.Errorf("destination balance = %d, want 0", b)
	}
	if got := e.entries(t, id); len(got) != 2 || got[ledger.LegCredit].Leg != "" {
		t.Errorf("entries = %+v, want DEBIT and REFUND only", got)
	}
}

// TestCreditRefundRace starts a CREDIT and a REFUND of the same transfer at once, many times over: in every transfer
// exactly one of them is applied, and the other is refused with the name that says which won.
func TestCreditRefundRace(t *testing.T) {
	e := newLedgerEnv(t)
	const transfers, each = 40, 4
	e.account(t, "acc-alice", "EUR", transfers*100)
	e.account(t, "acc-bob", "EUR", 0)
	wins := map[string]int{}
	for range transfers {
		id := e.transfer(t, "acc-alice", "acc-bob", 100, "EUR")
		e.leg(t, id, ledger.LegDebit)
		rec := e.record(t, id)
		_, errs := concurrently(e, each, legInput(rec, ledger.LegCredit), legInput(rec, ledger.LegRefund))
		entries := e.entries(t, id)
		_, credited := entries[ledger.LegCredit]
		_, refunded := entries[ledger.LegRefund]
		if credited == refunded {
			t.Fatalf("transfer %s: credited %v, refunded %v; want exactly one", id, credited, refunded)
		}
		winner, loserErr := ledger.LegCredit, "CreditAlreadyApplied"
		if refunded {
			winner, loserErr = ledger.LegRefund, "RefundAlreadyApplied"
		}
		wins[winner]++
		for i, err := range errs {
			leg := []string{ledger.LegCredit, ledger.LegRefund}[i%2]
			switch {
			case leg == winner && err != nil && lambdaErrorType(err) != "TransientError":
				t.Errorf("%s (winner) invocation %d: %v", leg, i, err)
			case leg != winner && (err == nil || lambdaErrorType(err) != loserErr && lambdaErrorType(err) != "TransientError"):
				t.Errorf("%s (loser) invocation %d: %v, want %s", leg, i, err, loserErr)
			}
		}
	}
	t.Logf("%d races: CREDIT won %d, REFUND won %d", transfers, wins[ledger.LegCredit], wins[ledger.LegRefund])
	alice, bob := e.accountNow(t, "acc-alice").Balance, e.accountNow(t, "acc-bob").Balance
	if alice+bob != transfers*100 || bob != int64(wins[ledger.LegCredit])*100 {
		t.Errorf("alice %d + bob %d, want %d in all and bob = 100 x %d credits", alice, bob, transfers*100, wins[ledger.LegCredit])
	}
}

// TestMalformedInputWritesNothing sends malformed task inputs to the real functions on Dynoxide: each is
// InvalidLegInput, and the table is left exactly as it was.
func TestMalformedInputWritesNothing(t *testing.T) {
	e := newAliceBobEnv(t, 5000, 0)
	id := e.transfer(t, "acc-alice", "acc-bob", 1250, "EUR")
	e.leg(t, id, ledger.LegDebit)
	good := legInput(e.record(t, id), ledger.LegCredit)
	before := e.scan(t)
	if !strings.Contains(before, "LEDGER#") || !strings.Contains(before, "ACCOUNT#acc-bob") {
		t.Fatalf("scan = %s, want the accounts, the record and the DEBIT", before)
	}
	tests := []struct {
		name   string
		mutate func(*LegInput)
	}{
		{"zero amount", func(in *LegInput) { in.Amount = 0 }},
		{"negative amount", func(in *LegInput) { in.Amount = -1250 }},
		{"unknown leg", func(in *LegInput) { in.Leg = "REVERSAL" }},
		{"no leg", func(in *LegInput) { in.Leg = "" }},
		{"no transfer id", func(in *LegInput) { in.TransferID = "" }},
		{"no account", func(in *LegInput) { in.AccountID = "" }},
		{"no currency", func(in *LegInput) { in.Currency = "" }},
		{"no execution", func(in *LegInput) { in.ExecutionArn = "" }},
		{"amount differs from the record", func(in *LegInput) { in.Amount = 1249 }},
		{"account differs from the record", func(in *LegInput) { in.AccountID = "acc-alice" }},
		{"currency differs from the record", func(in *LegInput) { in.Currency = "USD" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good
			tt.mutate(&in)
			_, err := e.invoke(context.Background(), in)
			wantErrorType(t, err, "InvalidLegInput")
		})
	}
	if after := e.scan(t); after != before {
		t.Errorf("table changed:\nbefore %s\nafter  %s", before, after)
	}
}

// faultyWire answers chosen DynamoDB operations with an error instead of sending them to the server.
type faultyWire struct {
	mu     sync.Mutex
	faults map[string]*http.Response // by X-Amz-Target operation, e.g. "TransactWriteItems"
	// lose names operations that reach the server, whose reply is then lost; lost counts them.
	lose map[string]bool
	lost int
}

func (f *faultyWire) RoundTrip(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	f.mu.Lock()
	resp, ok := f.faults[op]
	lose := f.lose[op]
	if lose {
		f.lost++
		delete(f.lose, op) // the next attempt gets its reply
	}
	f.mu.Unlock()
	if lose {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, errors.New("connection reset by peer")
	}
	if !ok {
		return http.DefaultTransport.RoundTrip(r)
	}
	if resp == nil {
		return nil, errors.New("connection reset by peer")
	}
	clone := *resp
	clone.Body = io.NopCloser(strings.NewReader(resp.Header.Get("X-Test-Body")))
	clone.Request = r
	return &clone, nil
}

func dynamoError(status int, code string) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Test-Body", fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"injected"}`, code))
	return &http.Response{StatusCode: status, Header: h}
}

// TestDynamoDBFaultsAreTransient injects throttling, server faults and a broken connection on the wire between the
// real SDK and Dynoxide: a fault that outlasts the ledger's own retries is TransientError, nothing is written, and
// the workflow's retry then succeeds.
func TestDynamoDBFaultsAreTransient(t *testing.T) {
	e := newAliceBobEnv(t, 5000, 0)
	srvURL := aws.ToString(e.db.Options().BaseEndpoint)
	tests := []struct {
		name string
		op   string
		resp *http.Response
	}{
		{"transaction throttled", "TransactWriteItems", dynamoError(400, "ThrottlingException")},
		{"transaction over capacity", "TransactWriteItems", dynamoError(400, "ProvisionedThroughputExceededException")},
		{"server fault", "TransactWriteItems", dynamoError(500, "InternalServerError")},
		{"connection lost", "TransactWriteItems", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.transfer(t, "acc-alice", "acc-bob", 100, "EUR")
			wire := &faultyWire{faults: map[string]*http.Response{tt.op: tt.resp}}
			// The workflow retries; the SDK's own retries, and more than two of the ledger's, would only slow the test.
			l := ledger.NewLedger(faultyClient(srvURL, wire, 1), e.table)
			l.Retry = ledger.RetryPolicy{Base: time.Millisecond, Cap: time.Millisecond, MaxAttempts: 2}
			debit := &Debit{Ledger: l, Now: e.now, Logger: discardLogger()}
			before := e.scan(t)
			in := legInput(e.record(t, id), ledger.LegDebit)
			_, err := debit.Handle(context.Background(), in)
			wantErrorType(t, err, "TransientError")
			if after := e.scan(t); after != before {
				t.Errorf("the table changed under a fault")
			}
			wire.mu.Lock()
			delete(wire.faults, tt.op)
			wire.mu.Unlock()
			res, err := debit.Handle(context.Background(), in)
			if err != nil || res.Leg != ledger.LegDebit || res.Amount != 100 {
				t.Fatalf("retry = %+v, %v", res, err)
			}
		})
	}
}

func faultyClient(url string, wire *faultyWire, attempts int) *dynamodb.Client {
	return dynamodb.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient:  &http.Client{Transport: wire},
	}, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(url)
		o.RetryMaxAttempts = attempts
	})
}

// TestLostReplyIsReplayed lets a leg's transaction commit and then loses its reply. Whether the SDK retries at once,
// the ledger retries its transaction, or the workflow retries the task, the retry finds the entry and returns it:
// the money moved once.
func TestLostReplyIsReplayed(t *testing.T) {
	e := newAliceBobEnv(t, 5000, 0)
	srvURL := aws.ToString(e.db.Options().BaseEndpoint)
	tests := []struct {
		name           string
		sdkAttempts    int
		ledgerAttempts int
	}{
		{"the SDK retries", 3, 1},
		{"the ledger retries", 1, 2},
		{"the workflow retries", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.transfer(t, "acc-alice", "acc-bob", 100, "EUR")
			wire := &faultyWire{lose: map[string]bool{"TransactWriteItems": true}}
			l := ledger.NewLedger(faultyClient(srvURL, wire, tt.sdkAttempts), e.table)
			l.Retry = ledger.RetryPolicy{Base: time.Millisecond, Cap: time.Millisecond, MaxAttempts: tt.ledgerAttempts}
			debit := &Debit{Ledger: l, Now: e.now, Logger: discardLogger()}
			in := legInput(e.record(t, id), ledger.LegDebit)
			before := e.accountNow(t, "acc-alice").Balance
			res, err := debit.Handle(context.Background(), in)
			if tt.sdkAttempts == 1 && tt.ledgerAttempts == 1 {
				if got := lambdaErrorType(err); got != "TransientError" {
					t.Fatalf("first attempt: %v (%s), want TransientError", err, got)
				}
				res, err = debit.Handle(context.Background(), in)
			}
			if err != nil {
				t.Fatal(err)
			}
			stored := e.entries(t, id)[ledger.LegDebit]
			if wire.lost != 1 || res != newLegResult(stored) {
				t.Errorf("lost replies %d, result %+v; want 1 and the stored entry %+v", wire.lost, res, stored)
			}
			if after := e.accountNow(t, "acc-alice").Balance; after != before-100 {
				t.Errorf("balance %d, want %d (debited once)", after, before-100)
			}
		})
	}
}
