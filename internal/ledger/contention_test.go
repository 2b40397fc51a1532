package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

// cancellingTransport answers the first n TransactWriteItems (all of them when n < 0) with the response AWS's
// DynamoDB sends when it cancels a transaction for the given reasons (HTTP 400, TransactionCanceledException with
// CancellationReasons), without passing them to the server; everything else goes to the real Dynoxide. The SDK
// decodes the real wire shape, so the ledger sees exactly what it would see on AWS.
type cancellingTransport struct {
	n       int64
	reasons []string
	sent    atomic.Int64 // TransactWriteItems seen, cancelled or not
	mu      sync.Mutex
	tokens  []string // the ClientRequestToken of each TransactWriteItems, in order
}

func (c *cancellingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
		return http.DefaultTransport.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	_ = r.Body.Close()
	var in struct{ ClientRequestToken string }
	_ = json.Unmarshal(body, &in)
	c.mu.Lock()
	c.tokens = append(c.tokens, in.ClientRequestToken)
	c.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if k := c.sent.Add(1); c.n >= 0 && k > c.n {
		return http.DefaultTransport.RoundTrip(r)
	}
	var items, codes []string
	for _, code := range c.reasons {
		codes = append(codes, code)
		if code == "None" {
			items = append(items, `{"Code":"None"}`)
			continue
		}
		items = append(items, fmt.Sprintf(`{"Code":%q,"Message":"Transaction is ongoing for the item"}`, code))
	}
	reply := fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException",`+
		`"Message":"Transaction cancelled, please refer cancellation reasons for specific reasons [%s]",`+
		`"CancellationReasons":[%s]}`, strings.Join(codes, ", "), strings.Join(items, ","))
	return &http.Response{
		StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"injected"}},
		Body:    io.NopCloser(bytes.NewBufferString(reply)),
		Request: r, ContentLength: int64(len(reply)),
	}, nil
}

// conflictEnv is a ledger whose client goes through a cancellingTransport, with fast retries.
func conflictEnv(t *testing.T, n int64, reasons ...string) (*env, *ledger.Ledger, *cancellingTransport) {
	t.Helper()
	e := newEnv(t).srcDst(t, 100, 0)
	ct := &cancellingTransport{n: n, reasons: reasons}
	srvURL := e.db.Options().BaseEndpoint
	l := ledger.NewLedger(ddbserver.NewClient(*srvURL, &http.Client{Transport: ct}), e.table)
	l.Retry = ledger.RetryPolicy{Base: time.Millisecond, Cap: 4 * time.Millisecond, Reserve: 50 * time.Millisecond, MaxAttempts: 5}
	return e, l, ct
}

// A DEBIT naming its destination has 4 items: entry, record, destination check, account.
var conflictOnAccount = []string{"None", "None", "None", "TransactionConflict"}

// TestTransactionConflictIsRetriedWithBackoff: AWS cancels a transaction with TransactionConflict when another
// transaction holds one of its items. The leg tries again and commits once; the money moves once.
func TestTransactionConflictIsRetriedWithBackoff(t *testing.T) {
	e, l, ct := conflictEnv(t, 3, conflictOnAccount...)
	id := e.transfer(t, "src", "dst", 40, "EUR")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, replayed, err := l.ApplyLeg(ctx, leg(id, ledger.LegDebit, "src", 40), t0)
	if err != nil || replayed || got.Leg != ledger.LegDebit {
		t.Fatalf("ApplyLeg = %+v, %v, %v; want a new DEBIT", got, replayed, err)
	}
	if n := ct.sent.Load(); n != 4 {
		t.Errorf("transactions sent = %d, want 4 (3 cancelled, then the one that commits)", n)
	}
	if b := e.balance(t, "src"); b != 60 {
		t.Errorf("balance = %d, want 60", b)
	}
	// Each attempt after a cancellation is a new transaction: a new idempotency token.
	seen := map[string]bool{}
	for _, tok := range ct.tokens {
		if tok == "" || seen[tok] {
			t.Errorf("tokens %q: each attempt after a cancellation needs a new one", ct.tokens)
			break
		}
		seen[tok] = true
	}
}

// TestCreditConflictIsRetried: the same for a CREDIT, whose transaction has 3 items (entry, record, account), with
// the conflict on the account and on the record (where a concurrent REFUND of the transfer meets it on AWS), and
// for a DEBIT that names no destination (3 items).
func TestCreditConflictIsRetried(t *testing.T) {
	e, l, ct := conflictEnv(t, 2, "None", "None", "TransactionConflict")
	id := e.transfer(t, "src", "dst", 40, "EUR")
	if _, _, err := e.ledger.ApplyLeg(context.Background(), leg(id, ledger.LegDebit, "src", 40), t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.ApplyLeg(context.Background(), leg(id, ledger.LegCredit, "dst", 40), t0); err != nil {
		t.Fatal(err)
	}
	if n := ct.sent.Load(); n != 3 || e.balance(t, "dst") != 40 {
		t.Errorf("transactions sent = %d, destination balance %d; want 3 and 40", n, e.balance(t, "dst"))
	}

	e, l, ct = conflictEnv(t, 1, "None", "TransactionConflict", "None")
	id = e.transfer(t, "src", "dst", 40, "EUR")
	if _, _, err := e.ledger.ApplyLeg(context.Background(), leg(id, ledger.LegDebit, "src", 40), t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.ApplyLeg(context.Background(), leg(id, ledger.LegCredit, "dst", 40), t0); err != nil {
		t.Fatal(err)
	}
	if n := ct.sent.Load(); n != 2 || e.balance(t, "dst") != 40 {
		t.Errorf("conflict on the record: transactions sent = %d, destination balance %d; want 2 and 40", n, e.balance(t, "dst"))
	}

	e, l, ct = conflictEnv(t, 1, "None", "TransactionConflict", "None")
	id = e.transfer(t, "src", "dst", 40, "EUR")
	older := leg(id, ledger.LegDebit, "src", 40)
	older.DestinationAccountID = ""
	if _, _, err := l.ApplyLeg(context.Background(), older, t0); err != nil {
		t.Fatal(err)
	}
	if n := ct.sent.Load(); n != 2 || e.balance(t, "src") != 60 {
		t.Errorf("transactions sent = %d, source balance %d; want 2 and 60", n, e.balance(t, "src"))
	}
}

// TestOtherCancellationsAreNotRetried: a cancellation for a reason other than contention (a ValidationError) would
// be refused the same way again: it is ErrUnavailable at once, for the workflow's retry.
func TestOtherCancellationsAreNotRetried(t *testing.T) {
	e, l, ct := conflictEnv(t, -1, "None", "ValidationError", "None", "None")
	id := e.transfer(t, "src", "dst", 40, "EUR")
	_, _, err := l.ApplyLeg(context.Background(), leg(id, ledger.LegDebit, "src", 40), t0)
	if !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if n := ct.sent.Load(); n != 1 {
		t.Errorf("transactions sent = %d, want 1", n)
	}
}

// TestThrottledTransactionIsRetried: a transaction cancelled with ThrottlingError reasons is retried the same way.
func TestThrottledTransactionIsRetried(t *testing.T) {
	e, l, ct := conflictEnv(t, 2, "None", "ThrottlingError", "None", "None")
	id := e.transfer(t, "src", "dst", 40, "EUR")
	if _, _, err := l.ApplyLeg(context.Background(), leg(id, ledger.LegDebit, "src", 40), t0); err != nil {
		t.Fatal(err)
	}
	if n := ct.sent.Load(); n != 3 {
		t.Errorf("transactions sent = %d, want 3", n)
	}
}

// TestConflictPastTheDeadlineIsUnavailable: a conflict that lasts stops being retried before the Lambda deadline
// (the workflow's Retry takes over) and nothing is written.
func TestConflictPastTheDeadlineIsUnavailable(t *testing.T) {
	e, l, ct := conflictEnv(t, -1, conflictOnAccount...)
	l.Retry = ledger.RetryPolicy{Base: 5 * time.Millisecond, Cap: 20 * time.Millisecond, Reserve: 100 * time.Millisecond, MaxAttempts: 3}
	id := e.transfer(t, "src", "dst", 40, "EUR")
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	_, _, err := l.ApplyLeg(ctx, leg(id, ledger.LegDebit, "src", 40), t0)
	if !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if ctx.Err() != nil {
		t.Errorf("ApplyLeg returned after the deadline; it must stop Reserve before it")
	}
	if n := ct.sent.Load(); n <= 3 {
		t.Errorf("transactions sent = %d; with a deadline the attempts are bounded by time, not MaxAttempts (3)", n)
	}
	if b := e.balance(t, "src"); b != 100 {
		t.Errorf("balance = %d, want 100", b)
	}
	entries, err := e.store.Entries(context.Background(), id)
	if err != nil || len(entries) != 0 {
		t.Errorf("entries = %+v, %v; want none", entries, err)
	}
}

// TestConflictWithoutDeadlineStopsAtMaxAttempts: without a deadline, MaxAttempts bounds the attempts.
func TestConflictWithoutDeadlineStopsAtMaxAttempts(t *testing.T) {
	e, l, ct := conflictEnv(t, -1, conflictOnAccount...)
	id := e.transfer(t, "src", "dst", 40, "EUR")
	_, _, err := l.ApplyLeg(context.Background(), leg(id, ledger.LegDebit, "src", 40), t0)
	if !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if n := ct.sent.Load(); n != 5 {
		t.Errorf("transactions sent = %d, want MaxAttempts = 5", n)
	}
}

// TestBusinessOutcomesAreNotRetried: a cancellation that decides the leg (here a short balance) is answered from
// the first transaction's reasons.
func TestBusinessOutcomesAreNotRetried(t *testing.T) {
	e, l, ct := conflictEnv(t, 0)
	id := e.transfer(t, "src", "dst", 500, "EUR")
	_, _, err := l.ApplyLeg(context.Background(), leg(id, ledger.LegDebit, "src", 500), t0)
	if !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Fatalf("err = %v, want ErrInsufficientFunds", err)
	}
	if n := ct.sent.Load(); n != 1 {
		t.Errorf("transactions sent = %d, want 1", n)
	}
}

// TestOutcomesWithoutImages: a server that sends no ALL_OLD images still gets each account and record outcome right
// (the ledger reads the account or the record, on the refused leg only): a CREDIT before its DEBIT must not pass for
// a missing record, the answer an empty record image would give.
func TestOutcomesWithoutImages(t *testing.T) {
	e := newEnv(t).srcDst(t, 100, 0)
	e.account(t, "usd", "USD", 0)
	strip := func(out *dynamodb.TransactWriteItemsOutput, err error) (*dynamodb.TransactWriteItemsOutput, error) {
		var tce *ddbtypes.TransactionCanceledException
		if errors.As(err, &tce) {
			for i := range tce.CancellationReasons {
				tce.CancellationReasons[i].Item = nil
			}
		}
		return out, err
	}
	l := ledger.NewLedger(&hookedDB{Client: e.db, after: strip}, e.table)
	ctx := context.Background()
	short := e.transfer(t, "src", "dst", 500, "EUR")
	if _, _, err := l.ApplyLeg(ctx, leg(short, ledger.LegDebit, "src", 500), t0); !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Errorf("short balance: %v, want ErrInsufficientFunds", err)
	}
	missing := e.transfer(t, "nobody", "dst", 5, "EUR")
	if _, _, err := l.ApplyLeg(ctx, leg(missing, ledger.LegDebit, "nobody", 5), t0); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Errorf("missing source: %v, want ErrAccountNotFound", err)
	}
	wrong := e.transfer(t, "src", "usd", 5, "EUR")
	if _, _, err := l.ApplyLeg(ctx, debitTo(wrong, "src", "usd", 5), t0); !errors.Is(err, ledger.ErrCurrencyMismatch) {
		t.Errorf("destination in USD: %v, want ErrCurrencyMismatch", err)
	}
	if b := e.balance(t, "src"); b != 100 {
		t.Errorf("balance = %d, want 100", b)
	}

	// The record's outcomes: each leg below is refused by the record's condition alone.
	early := e.transfer(t, "src", "dst", 5, "EUR")
	if _, _, err := l.ApplyLeg(ctx, leg(early, ledger.LegCredit, "dst", 5), t0); !errors.Is(err, ledger.ErrDebitNotApplied) {
		t.Errorf("CREDIT before the DEBIT: %v, want ErrDebitNotApplied", err)
	}
	if _, _, err := l.ApplyLeg(ctx, leg(early, ledger.LegDebit, "src", 6), t0); !errors.Is(err, ledger.ErrLegMismatch) {
		t.Errorf("DEBIT of another amount: %v, want ErrLegMismatch", err)
	}
	refunded := e.transfer(t, "src", "dst", 5, "EUR")
	e.apply(t, leg(refunded, ledger.LegDebit, "src", 5), leg(refunded, ledger.LegRefund, "src", 5))
	if _, _, err := l.ApplyLeg(ctx, leg(refunded, ledger.LegCredit, "dst", 5), t0); !errors.Is(err, ledger.ErrRefundApplied) {
		t.Errorf("CREDIT after the REFUND: %v, want ErrRefundApplied", err)
	}
	credited := e.transfer(t, "src", "dst", 5, "EUR")
	settling := leg(credited, ledger.LegCredit, "dst", 5)
	settling.Settle = true
	e.apply(t, leg(credited, ledger.LegDebit, "src", 5), settling)
	if _, _, err := l.ApplyLeg(ctx, leg(credited, ledger.LegRefund, "src", 5), t0); !errors.Is(err, ledger.ErrCreditApplied) {
		t.Errorf("REFUND after the settling CREDIT: %v, want ErrCreditApplied", err)
	}
	// The priority between the record's own conditions: a REFUND after the settling CREDIT is CreditAlreadyApplied
	// even when it asks for another amount; a CREDIT of another amount before the DEBIT is a mismatch first.
	refundOther := leg(credited, ledger.LegRefund, "src", 6)
	if _, _, err := l.ApplyLeg(ctx, refundOther, t0); !errors.Is(err, ledger.ErrCreditApplied) {
		t.Errorf("REFUND of another amount after the settling CREDIT: %v, want ErrCreditApplied", err)
	}
	if _, _, err := l.ApplyLeg(ctx, leg(early, ledger.LegCredit, "dst", 6), t0); !errors.Is(err, ledger.ErrLegMismatch) {
		t.Errorf("CREDIT of another amount before the DEBIT: %v, want ErrLegMismatch", err)
	}
	gone, err := ledger.NewTransferID(ledger.KeyHash("test", "a key never reserved"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.ApplyLeg(ctx, leg(gone, ledger.LegDebit, "src", 5), t0); !errors.Is(err, ledger.ErrTransferNotInProgress) {
		t.Errorf("no record: %v, want ErrTransferNotInProgress", err)
	}
	if b := e.balance(t, "src"); b != 95 {
		t.Errorf("balance = %d, want 95 (one transfer of 5 completed, one refunded)", b)
	}
}
