package transfer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/internal/metrics"
	"github.com/transferflow/orchestrator/internal/metrics/metricstest"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
)

var ledgerT0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// ledgerEnv runs the debit and credit functions, through the Lambda runtime's handler adapter, on a fresh Dynoxide
// table. Its clock moves a millisecond on every reading, so a later invocation writes a later time.
type ledgerEnv struct {
	db     *dynamodb.Client
	table  string
	ledger *ledger.Ledger
	store  *ledger.Store
	// debit and credit make a fresh runtime adapter per invocation: an adapter, like a Lambda sandbox, serves one
	// invocation at a time (it reuses its output buffer).
	debit  func() lambda.Handler
	credit func() lambda.Handler
	ticks  atomic.Int64
	n      atomic.Int64
	// metrics has the EMF lines of the debit and credit functions and of a reconciler built on this env.
	metrics *metricstest.Buffer
	// scope is the caller that submits the env's transfers and owns its accounts: the anonymous caller of the
	// orchestrator's unsigned requests, unless a test sets another.
	scope string
}

func newLedgerEnv(t *testing.T) *ledgerEnv {
	t.Helper()
	srv, tables := ddbserver.StartWithTablesT(t)
	db := ddbserver.NewClient(srv.URL, nil)
	e := &ledgerEnv{db: db, table: tables["TransfersTable"], metrics: &metricstest.Buffer{}, scope: "anonymous"}
	e.ledger = ledger.NewLedger(db, e.table)
	e.store = ledger.NewStore(db, e.table)
	// The functions are wired as functions/debit and functions/credit wire them; only the clock is replaced.
	cfg := aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(srv.URL),
	}
	debit := NewDebitHandler(cfg, LedgerConfig{TableName: e.table}, discardLogger())
	credit := NewCreditHandler(cfg, LedgerConfig{TableName: e.table}, discardLogger())
	debit.Now, credit.Now = e.now, e.now
	debit.Metrics, credit.Metrics = e.emitter(), e.emitter()
	e.debit = func() lambda.Handler { return lambda.NewHandler(debit.Handle) }
	e.credit = func() lambda.Handler { return lambda.NewHandler(credit.Handle) }
	return e
}

// newAliceBobEnv is a ledgerEnv with two EUR accounts of its scope: acc-alice and acc-bob, holding alice and bob.
func newAliceBobEnv(t *testing.T, alice, bob int64) *ledgerEnv {
	t.Helper()
	e := newLedgerEnv(t)
	e.account(t, "acc-alice", "EUR", alice)
	e.account(t, "acc-bob", "EUR", bob)
	return e
}

// emitter writes EMF lines to e.metrics, stamped at ledgerT0.
func (e *ledgerEnv) emitter() *metrics.Emitter {
	m := metrics.New(e.metrics, "TransferOrchestrator/test")
	m.Now = func() time.Time { return ledgerT0 }
	return m
}

func (e *ledgerEnv) now() time.Time {
	return ledgerT0.Add(time.Duration(e.ticks.Add(1)) * time.Millisecond)
}

func (e *ledgerEnv) account(t *testing.T, id, currency string, balance int64) {
	t.Helper()
	if _, err := e.store.CreateOwnedAccount(context.Background(), e.scope, id, currency, balance, ledgerT0); err != nil {
		t.Fatal(err)
	}
}

// transfer reserves an IN_PROGRESS transfer record, as the orchestrator does, and returns its id.
func (e *ledgerEnv) transfer(t *testing.T, src, dst string, amount int64, currency string) string {
	t.Helper()
	id, err := ledger.NewTransferID(ledger.KeyHash(e.scope, fmt.Sprintf("key-%d", e.n.Add(1))), nil)
	if err != nil {
		t.Fatal(err)
	}
	e.reserve(t, id, src, dst, amount, currency)
	return id
}

func (e *ledgerEnv) reserve(t *testing.T, id, src, dst string, amount int64, currency string) {
	t.Helper()
	rec := ledger.NewTransferRecord(ledger.Transfer{
		TransferID: id, Scope: e.scope, SourceAccountID: src, DestinationAccountID: dst, Amount: amount, Currency: currency,
		ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:TransferStateMachine:" + id,
	}, ledgerT0, 0)
	if _, created, err := e.store.Reserve(context.Background(), rec, ledgerT0); err != nil || !created {
		t.Fatalf("reserve %s: created %v, %v", id, created, err)
	}
}

// legInput is the task input the workflow sends for leg of the transfer rec.
func legInput(rec ledger.Transfer, leg string) LegInput {
	account := rec.SourceAccountID
	if leg == ledger.LegCredit {
		account = rec.DestinationAccountID
	}
	in := LegInput{Leg: leg, TransferID: rec.TransferID, AccountID: account, Amount: rec.Amount, Currency: rec.Currency,
		ExecutionArn: rec.ExecutionArn}
	switch leg {
	case ledger.LegDebit:
		in.DestinationAccountID = rec.DestinationAccountID // as the ASL's Debit payload sends it
		in.Authority = authority(rec)
	case ledger.LegCredit:
		in.Settle = true // as the ASL's Credit payload sends it: the CREDIT settles the record
	}
	return in
}

// invoke sends in to the function the workflow would call and returns the JSON the runtime would send back.
func (e *ledgerEnv) invoke(ctx context.Context, in LegInput) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	h := e.credit()
	if in.Leg == ledger.LegDebit {
		h = e.debit()
	}
	return h.Invoke(ctx, b)
}

// leg invokes leg of transfer id, which must succeed, and returns the result's JSON.
func (e *ledgerEnv) leg(t *testing.T, id, leg string) []byte {
	t.Helper()
	out, err := e.invoke(context.Background(), legInput(e.record(t, id), leg))
	if err != nil {
		t.Fatalf("%s %s: %v", leg, id, err)
	}
	return out
}

// olderCredit invokes the CREDIT of transfer id as an execution of a definition older than the settling CREDIT sent
// it (no settle): the record stays IN_PROGRESS, as when such an execution stopped before its own MarkCompleted state.
// It must succeed.
func (e *ledgerEnv) olderCredit(t *testing.T, id string) {
	t.Helper()
	in := legInput(e.record(t, id), ledger.LegCredit)
	in.Settle = false
	if _, err := e.invoke(context.Background(), in); err != nil {
		t.Fatalf("CREDIT %s: %v", id, err)
	}
}

// record reads the record of transfer id, whatever its scope or retention.
func (e *ledgerEnv) record(t *testing.T, id string) ledger.Transfer {
	t.Helper()
	rec, err := e.store.GetRecord(context.Background(), id)
	if err != nil {
		t.Fatalf("get transfer %s: %v", id, err)
	}
	return rec
}

func (e *ledgerEnv) accountNow(t *testing.T, id string) ledger.Account {
	t.Helper()
	a, err := e.store.GetAccount(context.Background(), id)
	if err != nil {
		t.Fatalf("account %s: %v", id, err)
	}
	return a
}

func (e *ledgerEnv) entries(t *testing.T, id string) map[string]ledger.Entry {
	t.Helper()
	list, err := e.store.Entries(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]ledger.Entry{}
	for _, en := range list {
		m[en.Leg] = en
	}
	return m
}

// markSettled sets the record's status as the state machine's MarkFailed state does (and its MarkCompleted did): one
// UpdateItem conditioned on IN_PROGRESS and the transfer id, without looking at the ledger.
func (e *ledgerEnv) markSettled(t *testing.T, id, status string) {
	t.Helper()
	pk, _ := ledger.RecordKey(id)
	_, err := e.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:                aws.String(e.table),
		Key:                      map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: "TRANSFER"}},
		ConditionExpression:      aws.String("#status = :inProgress AND transferId = :transferId"),
		UpdateExpression:         aws.String("SET #status = :status REMOVE sweepShard"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":inProgress": &ddbtypes.AttributeValueMemberS{Value: ledger.StatusInProgress},
			":transferId": &ddbtypes.AttributeValueMemberS{Value: id},
			":status":     &ddbtypes.AttributeValueMemberS{Value: status},
		},
	})
	if err != nil {
		t.Fatalf("mark %s %s: %v", id, status, err)
	}
}

func deleteRecord(table, pk string) *dynamodb.DeleteItemInput {
	return &dynamodb.DeleteItemInput{
		TableName: aws.String(table),
		Key:       map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: "TRANSFER"}},
	}
}

// scan returns the whole table, in key order, as one comparable string.
func (e *ledgerEnv) scan(t *testing.T) string {
	t.Helper()
	out, err := e.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		t.Fatal(err)
	}
	lines := make([]string, len(items))
	for i, it := range items {
		b, _ := json.Marshal(it) // map keys are sorted
		lines[i] = string(b)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
