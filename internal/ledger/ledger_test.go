package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// env is a ledger on a fresh table (Dynoxide's, or DynamoDB Local's under TEST_DYNAMODB=dynamodb-local).
type env struct {
	db     *dynamodb.Client
	table  string
	ledger *ledger.Ledger
	store  *ledger.Store
	n      int
	// server is ddbserver.Dynoxide or ddbserver.DynamoDBLocal, for the differences docs/dynamodb.md documents.
	server string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, tables := ddbserver.StartWithTablesT(t)
	db := ddbserver.NewClient(srv.URL, nil)
	table := tables["TransfersTable"]
	return &env{db: db, table: table, ledger: ledger.NewLedger(db, table), store: ledger.NewStore(db, table), server: srv.Store}
}

// srcDst opens two EUR accounts of testScope's, src and dst, holding src and dst, and returns e.
func (e *env) srcDst(t *testing.T, src, dst int64) *env {
	t.Helper()
	e.account(t, "src", "EUR", src)
	e.account(t, "dst", "EUR", dst)
	return e
}

// testScope is the caller scope that submits the tests' transfers and owns their accounts.
const testScope = "test"

func (e *env) account(t *testing.T, id, currency string, balance int64) {
	t.Helper()
	if _, err := e.store.CreateOwnedAccount(context.Background(), testScope, id, currency, balance, t0); err != nil {
		t.Fatal(err)
	}
}

// apply applies the leg requests in turn at t0, failing the test at once on an error.
func (e *env) apply(t *testing.T, reqs ...ledger.LegRequest) {
	t.Helper()
	for _, r := range reqs {
		if _, _, err := e.ledger.ApplyLeg(context.Background(), r, t0); err != nil {
			t.Fatal(err)
		}
	}
}

// fail settles the transfer id FAILED with the failure code at t0, failing the test at once on an error.
func (e *env) fail(t *testing.T, id, code string) {
	t.Helper()
	if err := e.ledger.SettleTransfer(context.Background(), id, ledger.StatusFailed, ledger.Failure{Code: code}, 0, t0); err != nil {
		t.Fatal(err)
	}
}

// transfer reserves an IN_PROGRESS transfer record of testScope's and returns its id.
func (e *env) transfer(t *testing.T, src, dst string, amount int64, currency string) string {
	t.Helper()
	return e.reserve(t, testScope, false, src, dst, amount, currency)
}

// operatorTransfer is transfer for one an operator submitted: its DEBIT is on an operator's authority.
func (e *env) operatorTransfer(t *testing.T, src, dst string, amount int64, currency string) string {
	t.Helper()
	return e.reserve(t, "operator", true, src, dst, amount, currency)
}

func (e *env) reserve(t *testing.T, scope string, operator bool, src, dst string, amount int64, currency string) string {
	t.Helper()
	e.n++
	id, err := ledger.NewTransferID(ledger.KeyHash(scope, fmt.Sprintf("%s-key-%d", t.Name(), e.n)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := ledger.NewTransferRecord(ledger.Transfer{
		TransferID: id, Scope: scope, SourceAccountID: src, DestinationAccountID: dst, Amount: amount, Currency: currency,
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:transfer:" + id, Operator: operator,
	}, t0, 0)
	if _, created, err := e.store.Reserve(context.Background(), rec, t0); err != nil || !created {
		t.Fatalf("reserve: created %v, %v", created, err)
	}
	return id
}

// operatorDebit is debitTo on an operator's authority.
func operatorDebit(id, account, destination string, amount int64) ledger.LegRequest {
	r := debitTo(id, account, destination, amount)
	r.Owner, r.Operator = "", true
	return r
}

func (e *env) balance(t *testing.T, id string) int64 {
	t.Helper()
	a, err := e.store.GetAccount(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}

// leg asks for a leg in EUR; a DEBIT names "dst" as the transfer's destination (see debitTo for another one).
func leg(id, leg, account string, amount int64) ledger.LegRequest {
	r := ledger.LegRequest{TransferID: id, Leg: leg, AccountID: account, Amount: amount, Currency: "EUR",
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:transfer:" + id}
	if leg == ledger.LegDebit {
		r.DestinationAccountID, r.Owner = "dst", testScope
	}
	return r
}

// debitTo asks for the DEBIT of a transfer to destination.
func debitTo(id, source, destination string, amount int64) ledger.LegRequest {
	r := leg(id, ledger.LegDebit, source, amount)
	r.DestinationAccountID = destination
	return r
}

// TestDynoxideCancellationReasons pins the server behaviour ApplyLeg relies on: a cancelled transaction reports a
// reason for every item, in order, with ConditionalCheckFailed on each false condition (not only the first), and
// the ALL_OLD image of an existing item whose condition failed; a missing item has no image.
func TestDynoxideCancellationReasons(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.account(t, "a", "EUR", 5)
	key := func(pk string) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: "ACCOUNT"}}
	}
	check := func(pk, cond string) ddbtypes.TransactWriteItem {
		return ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName: aws.String(e.table), Key: key(pk), ConditionExpression: aws.String(cond),
			ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld,
		}}
	}
	_, err := e.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		check(ledger.AccountKey("a"), "attribute_not_exists(pk)"),
		check(ledger.AccountKey("a-missing"), "attribute_not_exists(pk)"),
		check(ledger.AccountKey("b-missing"), "attribute_exists(pk)"),
	}})
	var tce *ddbtypes.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("err = %v, want TransactionCanceledException", err)
	}
	var got []string
	for _, r := range tce.CancellationReasons {
		got = append(got, fmt.Sprintf("%s/%d", aws.ToString(r.Code), len(r.Item)))
	}
	want := []string{"ConditionalCheckFailed/10", "None/0", "ConditionalCheckFailed/0"} // the account has its owner
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reasons (code/attributes in image) = %v, want %v", got, want)
	}
}

func TestCreateAccount(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.account(t, "acc-alice", "EUR", 1000)
	_, err := e.store.CreateAccount(ctx, "acc-alice", "USD", 5, t0)
	if !errors.Is(err, ledger.ErrAccountExists) {
		t.Fatalf("second create: %v, want ErrAccountExists", err)
	}
	a, err := e.store.GetAccount(ctx, "acc-alice")
	if err != nil {
		t.Fatal(err)
	}
	want := ledger.Account{PK: "ACCOUNT#acc-alice", SK: "ACCOUNT", AccountID: "acc-alice", Kind: ledger.KindCustomer, Owner: testScope, Balance: 1000, Currency: "EUR",
		Version: 1, CreatedAt: "2026-11-21T10:00:00.000Z", UpdatedAt: "2026-11-21T10:00:00.000Z"}
	if a != want {
		t.Errorf("account = %+v, want %+v", a, want)
	}
	if _, err := e.store.GetAccount(ctx, "nobody"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("missing account: %v, want ErrNotFound", err)
	}
}

func TestApplyLegWritesEntryAndBalance(t *testing.T) {
	e := newEnv(t).srcDst(t, 1000, 5)
	ctx := context.Background()
	id := e.transfer(t, "src", "dst", 300, "EUR")

	got, replayed, err := e.ledger.ApplyLeg(ctx, leg(id, ledger.LegDebit, "src", 300), t0)
	if err != nil || replayed {
		t.Fatalf("debit: replayed %v, %v", replayed, err)
	}
	want := ledger.Entry{PK: "LEDGER#" + id, SK: "DEBIT", TransferID: id, Leg: "DEBIT", AccountID: "src", Amount: 300,
		Currency: "EUR", ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:transfer:" + id,
		CreatedAt: "2026-11-21T10:00:00.000Z", ActivityAccount: "src", ActivityAt: "2026-11-21T10:00:00.000Z#" + id + "#DEBIT",
		CounterpartyAccountID: "dst"}
	if got != want {
		t.Errorf("entry = %+v, want %+v", got, want)
	}
	if _, _, err := e.ledger.ApplyLeg(ctx, leg(id, ledger.LegCredit, "dst", 300), t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	entries, err := e.store.Entries(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Leg != "CREDIT" || entries[0].BalanceAfter != nil || entries[1] != want {
		t.Errorf("entries = %+v", entries)
	}
	src, _ := e.store.GetAccount(ctx, "src")
	if src.Balance != 700 || src.Version != 2 || src.UpdatedAt != "2026-11-21T10:00:00.000Z" {
		t.Errorf("source account = %+v, want balance 700, version 2", src)
	}
	if b := e.balance(t, "dst"); b != 305 {
		t.Errorf("destination balance = %d, want 305", b)
	}
}

// TestApplyLegOutcomes covers each refusal: its sentinel, and that nothing moved.
func TestApplyLegOutcomes(t *testing.T) {
	e := newEnv(t).srcDst(t, 1000, 0)
	ctx := context.Background()
	e.account(t, "usd", "USD", 0)
	settled := e.transfer(t, "src", "dst", 10, "EUR")
	e.fail(t, settled, "ABORTED")
	settledBig := e.transfer(t, "src", "dst", 5000, "EUR")
	e.fail(t, settledBig, "ABORTED")
	refunded := e.transfer(t, "src", "dst", 10, "EUR")
	credited := e.transfer(t, "src", "dst", 10, "EUR")
	e.apply(t, leg(refunded, ledger.LegDebit, "src", 10), leg(refunded, ledger.LegRefund, "src", 10),
		leg(credited, ledger.LegDebit, "src", 10), leg(credited, ledger.LegCredit, "dst", 10))
	unknownRecord, _ := ledger.NewTransferID(ledger.KeyHash("test", "never reserved"), nil)
	tests := []struct {
		name string
		req  ledger.LegRequest
		want error
	}{
		{"overdraw", leg(e.transfer(t, "src", "dst", 1001, "EUR"), ledger.LegDebit, "src", 1001), ledger.ErrInsufficientFunds},
		{"missing account", leg(e.transfer(t, "ghost", "dst", 1, "EUR"), ledger.LegDebit, "ghost", 1), ledger.ErrAccountNotFound},
		{"currency mismatch", leg(e.transfer(t, "usd", "dst", 5, "EUR"), ledger.LegDebit, "usd", 5), ledger.ErrCurrencyMismatch},
		{"settled", leg(settled, ledger.LegDebit, "src", 10), ledger.ErrTransferNotInProgress},
		{"settled and overdrawn: the fence wins", leg(settledBig, ledger.LegDebit, "src", 5000), ledger.ErrTransferNotInProgress},
		{"no record", leg(unknownRecord, ledger.LegDebit, "src", 10), ledger.ErrTransferNotInProgress},
		{"amount differs from record", leg(e.transfer(t, "src", "dst", 10, "EUR"), ledger.LegDebit, "src", 11), ledger.ErrLegMismatch},
		{"debit from the destination", debitTo(e.transfer(t, "src", "dst", 10, "EUR"), "dst", "src", 10), ledger.ErrLegMismatch},
		{"credit without debit", leg(e.transfer(t, "src", "dst", 10, "EUR"), ledger.LegCredit, "dst", 10), ledger.ErrDebitNotApplied},
		{"refund without debit", leg(e.transfer(t, "src", "dst", 10, "EUR"), ledger.LegRefund, "src", 10), ledger.ErrDebitNotApplied},
		{"credit after refund", leg(refunded, ledger.LegCredit, "dst", 10), ledger.ErrRefundApplied},
		{"refund after credit", leg(credited, ledger.LegRefund, "src", 10), ledger.ErrCreditApplied},
		{"replay with another amount", leg(credited, ledger.LegCredit, "dst", 11), ledger.ErrLegMismatch},
		{"zero amount", leg(credited, ledger.LegCredit, "dst", 0), ledger.ErrInvalidLeg},
		{"unknown leg", leg(credited, "CHARGEBACK", "dst", 1), ledger.ErrInvalidLeg},
		{"malformed transfer id", leg("tr_short", ledger.LegDebit, "src", 1), ledger.ErrInvalidLeg},
		{"credit with a destination", func() ledger.LegRequest {
			r := leg(credited, ledger.LegCredit, "dst", 10)
			r.DestinationAccountID = "dst"
			return r
		}(), ledger.ErrInvalidLeg},
		{"debit naming another destination than the record", debitTo(e.transfer(t, "src", "dst", 1, "EUR"), "src", "usd", 1), ledger.ErrLegMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]int64{"src": e.balance(t, "src"), "dst": e.balance(t, "dst"), "usd": e.balance(t, "usd")}
			entriesBefore, _ := e.store.Entries(ctx, tt.req.TransferID)
			_, _, err := e.ledger.ApplyLeg(ctx, tt.req, t0)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			for id, b := range before {
				if got := e.balance(t, id); got != b {
					t.Errorf("balance of %s = %d, want %d unchanged", id, got, b)
				}
			}
			if tt.req.TransferID != "tr_short" {
				entries, err := e.store.Entries(ctx, tt.req.TransferID)
				if err != nil || len(entries) != len(entriesBefore) {
					t.Errorf("entries = %d (%v), want %d unchanged", len(entries), err, len(entriesBefore))
				}
			}
		})
	}
}

func TestSettleTransferFollowsTheLedger(t *testing.T) {
	e := newEnv(t).srcDst(t, 100, 0)
	ctx := context.Background()
	apply := func(id string, legs ...string) {
		t.Helper()
		for _, l := range legs {
			acct := "src"
			if l == ledger.LegCredit {
				acct = "dst"
			}
			e.apply(t, leg(id, l, acct, 1))
		}
	}
	tests := []struct {
		name   string
		legs   []string
		status string
		want   error
	}{
		{"completed with credit", []string{"DEBIT", "CREDIT"}, ledger.StatusCompleted, nil},
		{"completed without credit", []string{"DEBIT"}, ledger.StatusCompleted, ledger.ErrLedgerDisagrees},
		{"failed without debit", nil, ledger.StatusFailed, nil},
		{"failed with refund", []string{"DEBIT", "REFUND"}, ledger.StatusFailed, nil},
		{"failed with lone debit", []string{"DEBIT"}, ledger.StatusFailed, ledger.ErrLedgerDisagrees},
		{"failed with credit", []string{"DEBIT", "CREDIT"}, ledger.StatusFailed, ledger.ErrLedgerDisagrees},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.transfer(t, "src", "dst", 1, "EUR")
			apply(id, tt.legs...)
			err := e.ledger.SettleTransfer(ctx, id, tt.status, ledger.Failure{Code: "TIMED_OUT"}, 0, t0)
			if !errors.Is(err, tt.want) {
				t.Fatalf("settle: %v, want %v", err, tt.want)
			}
			if tt.want != nil {
				return
			}
			if err := e.ledger.SettleTransfer(ctx, id, tt.status, ledger.Failure{Code: "TIMED_OUT"}, 0, t0); !errors.Is(err, ledger.ErrTransferNotInProgress) {
				t.Errorf("second settle: %v, want ErrTransferNotInProgress", err)
			}
			if _, _, err := e.ledger.ApplyLeg(ctx, leg(id, ledger.LegDebit, "src", 1), t0); len(tt.legs) == 0 && !errors.Is(err, ledger.ErrTransferNotInProgress) {
				t.Errorf("debit after settle: %v, want ErrTransferNotInProgress", err)
			}
		})
	}
}

// hookedDB lets a test change what the real server sees or answers around TransactWriteItems.
type hookedDB struct {
	*dynamodb.Client
	// gets, when set, counts GetItem calls.
	gets   *int
	before func(*dynamodb.TransactWriteItemsInput)
	after  func(*dynamodb.TransactWriteItemsOutput, error) (*dynamodb.TransactWriteItemsOutput, error)
	// instead, when set, answers without sending the transaction.
	instead func() error
}

func (h *hookedDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if h.gets != nil {
		*h.gets++
	}
	return h.Client.GetItem(ctx, in, optFns...)
}

func (h *hookedDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if h.before != nil {
		h.before(in)
	}
	if h.instead != nil {
		return nil, h.instead()
	}
	out, err := h.Client.TransactWriteItems(ctx, in, optFns...)
	if h.after != nil {
		return h.after(out, err)
	}
	return out, err
}

// TestReplayWithoutImages covers a server that sends no ALL_OLD images: the replay reads the stored entry instead
// and still returns it unchanged.
func TestReplayWithoutImages(t *testing.T) {
	e := newEnv(t).srcDst(t, 100, 0)
	ctx := context.Background()
	id := e.transfer(t, "src", "dst", 40, "EUR")
	first, _, err := e.ledger.ApplyLeg(ctx, leg(id, ledger.LegDebit, "src", 40), t0)
	if err != nil {
		t.Fatal(err)
	}
	stripped := 0
	l := ledger.NewLedger(&hookedDB{Client: e.db, after: func(out *dynamodb.TransactWriteItemsOutput, err error) (*dynamodb.TransactWriteItemsOutput, error) {
		var tce *ddbtypes.TransactionCanceledException
		if errors.As(err, &tce) {
			for i := range tce.CancellationReasons {
				if tce.CancellationReasons[i].Item != nil {
					stripped++
				}
				tce.CancellationReasons[i].Item = nil
			}
		}
		return out, err
	}}, e.table)
	again, replayed, err := l.ApplyLeg(ctx, leg(id, ledger.LegDebit, "src", 40), t0.Add(time.Hour))
	if err != nil || !replayed || again != first {
		t.Fatalf("replay = %+v, %v, %v; want %+v, true, nil", again, replayed, err, first)
	}
	if stripped == 0 {
		t.Error("the server sent no image to strip; the test did not exercise the fallback read")
	}
	if b := e.balance(t, "src"); b != 60 {
		t.Errorf("balance = %d, want 60", b)
	}
}

// TestApplyLegDoesNotReadTheAccount moves money on the account right before the leg's transaction: the leg still
// commits in its one transaction (no read, no version to go stale) and the balance reflects both.
func TestApplyLegDoesNotReadTheAccount(t *testing.T) {
	e := newEnv(t).srcDst(t, 100, 0)
	ctx := context.Background()
	racer := e.transfer(t, "src", "dst", 30, "EUR")
	id := e.transfer(t, "src", "dst", 50, "EUR")
	calls, gets := 0, 0
	l := ledger.NewLedger(&hookedDB{Client: e.db, gets: &gets, before: func(*dynamodb.TransactWriteItemsInput) {
		calls++
		if calls == 1 {
			if _, _, err := e.ledger.ApplyLeg(ctx, leg(racer, ledger.LegDebit, "src", 30), t0); err != nil {
				t.Error(err)
			}
		}
	}}, e.table)
	if _, _, err := l.ApplyLeg(ctx, leg(id, ledger.LegDebit, "src", 50), t0); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || gets != 0 || e.balance(t, "src") != 20 {
		t.Errorf("transactions = %d, reads = %d, balance = %d; want 1, 0, 20", calls, gets, e.balance(t, "src"))
	}
}

// TestLegWriteUnits measures what each leg's transaction costs, as the server accounts it (ReturnConsumedCapacity),
// for the item sizes the functions write: docs/ledger.md quotes these numbers.
func TestLegWriteUnits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.account(t, "acc-alice", "EUR", 1000)
	e.account(t, "acc-bob", "EUR", 0)
	var units []float64
	l := ledger.NewLedger(&hookedDB{Client: e.db,
		before: func(in *dynamodb.TransactWriteItemsInput) {
			in.ReturnConsumedCapacity = ddbtypes.ReturnConsumedCapacityTotal
		},
		after: func(out *dynamodb.TransactWriteItemsOutput, err error) (*dynamodb.TransactWriteItemsOutput, error) {
			if err == nil {
				var sum float64
				for _, c := range out.ConsumedCapacity {
					sum += aws.ToFloat64(c.CapacityUnits)
				}
				units = append(units, sum)
			}
			return out, err
		}}, e.table)
	credited := e.transfer(t, "acc-alice", "acc-bob", 100, "EUR")
	refunded := e.transfer(t, "acc-alice", "acc-bob", 100, "EUR")
	for _, r := range []ledger.LegRequest{
		debitTo(credited, "acc-alice", "acc-bob", 100),
		leg(credited, ledger.LegCredit, "acc-bob", 100),
		debitTo(refunded, "acc-alice", "acc-bob", 100),
		leg(refunded, ledger.LegRefund, "acc-alice", 100),
	} {
		if _, _, err := l.ApplyLeg(ctx, r, t0); err != nil {
			t.Fatal(err)
		}
	}
	// A DEBIT is 4 items (entry, record, destination check, account): 8 units, as DynamoDB bills a transaction (2
	// units per item up to 1 KB), and 1 more for the entry's write to the AccountActivity index. A CREDIT or REFUND is
	// 3 items (entry, record, account; the record's legs stand for the checks on the other entries): 7. DynamoDB Local reports
	// 2 units for any transaction whatever its items, and 6 for one that also writes an index entry, as every leg now
	// does (docs/dynamodb.md, difference 3): there the figures docs/ledger.md quotes cannot be measured, and the test
	// checks its answer.
	want := []float64{9, 7, 9, 7}
	if e.server == ddbserver.DynamoDBLocal {
		want = []float64{6, 6, 6, 6}
	}
	if fmt.Sprint(units) != fmt.Sprint(want) {
		t.Errorf("write units of DEBIT, CREDIT, DEBIT, REFUND on %s = %v, want %v", e.server, units, want)
	}
}
