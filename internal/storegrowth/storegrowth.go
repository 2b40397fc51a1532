// Package storegrowth measures how the speed of a DynamoDB-compatible server changes as the transfer workload grows
// its table, one request kind at a time, so that a slowdown can be pinned on the operation and the data that cause
// it (a follow-up of the performance work: Dynoxide served a quarter as many requests per second after 45,000 transfers as on a fresh
// table). docs/ddblocal.md explains the figures and what they showed.
//
// Run grows the table in steps with a Fill and, after each step, times probes on fresh keys, each after its own
// untimed setup: the whole transfer (the requests the stack makes for one transfer), and each of its requests alone,
// with and without the ClientRequestToken that the AWS SDK puts on every TransactWriteItems, and the settling
// UpdateItem with and without the parts that touch the sparse index and the TTL attribute.
package storegrowth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// Fills: how a step grows the store.
const (
	// FillWorkload runs real transfers through the ledger package: the orchestrator's conditional PutItem, the
	// DEBIT and CREDIT legs' TransactWriteItems, the workflow's settling UpdateItem and one GetItem poll.
	FillWorkload = "workload"
	// FillPut writes the items a transfer leaves behind (the settled record and its two ledger entries) with plain
	// PutItems: the same data, no transactions, no conditions, no index churn.
	FillPut = "put"
	// FillTokens sends two TransactWriteItems per transfer that only check an account (attribute_exists): they
	// write nothing, so the table does not grow, but each carries a ClientRequestToken when Config.Tokens is set.
	FillTokens = "tokens"
)

// Probes, in the order Run times them.
const (
	ProbePut          = "put"             // the orchestrator's conditional PutItem of a new record
	ProbeGet          = "get"             // a strongly consistent GetItem of a record (a client's poll)
	ProbeLeg          = "leg"             // the DEBIT TransactWriteItems, with the SDK's ClientRequestToken (run interleaved with leg-notoken)
	ProbeLegNoToken   = "leg-notoken"     // the same transaction without a ClientRequestToken
	ProbeCheck        = "check"           // a TransactWriteItems of one ConditionCheck, with a token (interleaved with check-notoken)
	ProbeCheckNoToken = "check-notoken"   // the same without a token
	ProbeSettle       = "settle"          // a single-item UpdateItem settling the record COMPLETED (ledger.SettleCompleted)
	ProbeSettleKeep   = "settle-keep-gsi" // the same without REMOVE sweepShard (the record stays in the index)
	ProbeSettleNoTTL  = "settle-no-ttl"   // the same without setting expiresAt (the TTL attribute)
	ProbeMix          = "mix"             // whole transfers (4 requests each), as requests per second
)

// Probes lists every probe in the order Run times them.
var Probes = []string{ProbePut, ProbeGet, ProbeLeg, ProbeLegNoToken, ProbeCheck, ProbeCheckNoToken, ProbeSettle,
	ProbeSettleKeep, ProbeSettleNoTTL, ProbeMix}

// requestsPerTransfer is how many requests one transfer of FillWorkload (and of ProbeMix) sends.
const requestsPerTransfer = 4

// tokenWindow is how long DynamoDB (and Dynoxide) remember a ClientRequestToken.
const tokenWindow = 10 * time.Minute

// Config says what Run grows and measures.
type Config struct {
	// Table is the transfers table (template.yaml's TransfersTable), already created with its index.
	Table string
	// Fill is how each step grows the store: FillWorkload (default), FillPut or FillTokens.
	Fill string
	// Tokens makes the fill's transactions carry a ClientRequestToken, as the AWS SDK does by default.
	Tokens bool
	// Steps and StepTransfers: the store grows by StepTransfers transfers Steps times; the probes run before the
	// first step and after each.
	Steps, StepTransfers int
	// Probe is how many operations each probe times (default 200).
	Probe int
	// Concurrency is how many requests are in flight, in the fill and in the probes (default 8).
	Concurrency int
	// Accounts is how many accounts the transfers pick their two accounts from (default 1,000).
	Accounts int
	// IdleAfter, when positive, waits this long after the last step and probes once more, nothing else running.
	IdleAfter time.Duration
	// RSS, when set, reads the server's resident memory in bytes; its error is reported in the row.
	RSS func() (int64, error)
	// Progress, when set, receives a line as each step and probe round starts.
	Progress io.Writer
}

// Row is what Run measured after one step.
type Row struct {
	// Label names the row: "fresh", "step N" or "after idle".
	Label string
	// Transfers is how many transfers the fill has made so far; Items how many items the table held when the probes
	// started (counted from what Run wrote, earlier probes included).
	Transfers, Items int
	// Tokens is how many ClientRequestTokens Run sent in the 10 minutes before the probes started (the server's
	// idempotency window).
	Tokens int
	// FillPerSec is the fill's requests per second in this step (0 for the first row).
	FillPerSec float64
	// RSSMB is the server's resident memory before the probes, in MiB (0 when not known).
	RSSMB float64
	// PerSec is each probe's operations per second (requests per second for ProbeMix).
	PerSec map[string]float64
	// MeanMs is each probe's mean latency per operation in milliseconds (per transfer for ProbeMix).
	MeanMs map[string]float64
}

// Run grows the store as cfg says and returns one row before the first step, one after each step and, with
// cfg.IdleAfter, one after the idle wait. tokenDB and plainDB are clients of the same server: tokenDB fills in a
// ClientRequestToken on TransactWriteItems as the SDK does by default, plainDB does not (NewPlainClient).
func Run(ctx context.Context, cfg Config, tokenDB, plainDB DynamoAPI) ([]Row, error) {
	cfg = withDefaults(cfg)
	switch cfg.Fill {
	case FillWorkload, FillPut, FillTokens:
	default:
		return nil, fmt.Errorf("storegrowth: fill %q is not %s, %s or %s", cfg.Fill, FillWorkload, FillPut, FillTokens)
	}
	if cfg.Table == "" {
		return nil, errors.New("storegrowth: a table is required")
	}
	g, err := newGrower(cfg, tokenDB, plainDB)
	if err != nil {
		return nil, err
	}
	g.progress("creating %d accounts", cfg.Accounts)
	if err := g.createAccounts(ctx); err != nil {
		return nil, err
	}
	var rows []Row
	round := func(label string, fillPerSec float64) error {
		g.progress("%s: probes (%d operations each at c=%d)", label, cfg.Probe, cfg.Concurrency)
		row, err := g.probes(ctx, label)
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		row.FillPerSec = fillPerSec
		rows = append(rows, row)
		return nil
	}
	if err := round("fresh", 0); err != nil {
		return rows, err
	}
	for step := 1; step <= cfg.Steps; step++ {
		g.progress("step %d: %d transfers (fill %s, tokens %v)", step, cfg.StepTransfers, cfg.Fill, cfg.Tokens)
		perSec, err := g.fill(ctx)
		if err != nil {
			return rows, fmt.Errorf("step %d: %w", step, err)
		}
		if err := round(fmt.Sprintf("step %d", step), perSec); err != nil {
			return rows, err
		}
	}
	if cfg.IdleAfter > 0 {
		g.progress("idle for %s", cfg.IdleAfter)
		select {
		case <-ctx.Done():
			return rows, ctx.Err()
		case <-time.After(cfg.IdleAfter):
		}
		if err := round("after idle", 0); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Fill == "" {
		cfg.Fill = FillWorkload
	}
	if cfg.Probe <= 0 {
		cfg.Probe = 200
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.Accounts < 2 {
		cfg.Accounts = 1000
	}
	return cfg
}

// DynamoAPI is the part of the DynamoDB client Run uses.
type DynamoAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
}

// NewPlainClient returns a client configured like cfg whose TransactWriteItems carry no ClientRequestToken: the SDK
// fills one in only while Options.IdempotencyTokenProvider is set.
func NewPlainClient(cfg aws.Config, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, append(optFns, func(o *dynamodb.Options) { o.IdempotencyTokenProvider = nil })...)
}

// Names of the transfer's parts that Run writes, mirroring the stack's.
const (
	scope         = "storegrowth"
	currency      = "EUR"
	accountSK     = "ACCOUNT" // the ledger's account item sort key (internal/ledger/account.go)
	accountPrefix = "sg-"
	arnPrefix     = "arn:aws:states:us-east-1:000000000000:execution:TransferWorkflow:"
	openBalance   = int64(1_000_000_000_000_000)
	recordTTL     = 7 * 24 * time.Hour // the orchestrator's default IDEMPOTENCY_TTL
)

// grower holds a run's clients, accounts and counts.
type grower struct {
	cfg            Config
	token, plain   DynamoAPI
	store          *ledger.Store // reads and reservations (no transactions)
	legs, legsNoTk *ledger.Ledger
	runID          string
	accounts       []string

	seq       atomic.Int64
	items     atomic.Int64
	transfers int
	mu        sync.Mutex
	tokenAt   []time.Time // when each token-bearing transaction was sent, for Row.Tokens
}

func newGrower(cfg Config, tokenDB, plainDB DynamoAPI) (*grower, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("storegrowth: run id: %w", err)
	}
	g := &grower{cfg: cfg, token: tokenDB, plain: plainDB, runID: hex.EncodeToString(b[:]),
		store: ledger.NewStore(plainDB, cfg.Table), legs: ledger.NewLedger(tokenDB, cfg.Table),
		legsNoTk: ledger.NewLedger(plainDB, cfg.Table)}
	for i := range cfg.Accounts {
		g.accounts = append(g.accounts, fmt.Sprintf("%s%s-%06d", accountPrefix, g.runID, i))
	}
	return g, nil
}

func (g *grower) progress(format string, args ...any) {
	if g.cfg.Progress != nil {
		fmt.Fprintf(g.cfg.Progress, "storegrowth: "+format+"\n", args...)
	}
}

// sentToken records a token-bearing transaction.
func (g *grower) sentToken(n int) {
	now := time.Now()
	g.mu.Lock()
	for range n {
		g.tokenAt = append(g.tokenAt, now)
	}
	g.mu.Unlock()
}

// recentTokens counts the tokens sent in the last tokenWindow.
func (g *grower) recentTokens() int {
	cutoff := time.Now().Add(-tokenWindow)
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, t := range g.tokenAt {
		if t.After(cutoff) {
			n++
		}
	}
	return n
}

func (g *grower) createAccounts(ctx context.Context) error {
	now := time.Now()
	_, err := parallel(ctx, len(g.accounts), g.cfg.Concurrency, func(ctx context.Context, i int) error {
		_, err := g.store.CreateOwnedAccount(ctx, scope, g.accounts[i], currency, openBalance, now)
		return err
	})
	g.items.Add(int64(len(g.accounts)))
	return err
}

// newRecord is a new transfer record between two distinct random accounts, as the orchestrator writes it.
func (g *grower) newRecord(now time.Time) (ledger.Transfer, error) {
	key := fmt.Sprintf("%s-%s-%09d", scope, g.runID, g.seq.Add(1))
	id, err := ledger.NewTransferID(ledger.KeyHash(scope, key), nil)
	if err != nil {
		return ledger.Transfer{}, err
	}
	src, dst, err := g.pair()
	if err != nil {
		return ledger.Transfer{}, err
	}
	amount, err := rand.Int(rand.Reader, big.NewInt(99))
	if err != nil {
		return ledger.Transfer{}, err
	}
	var hash [32]byte
	if _, err := rand.Read(hash[:]); err != nil {
		return ledger.Transfer{}, err
	}
	return ledger.NewTransferRecord(ledger.Transfer{
		TransferID: id, Scope: scope, IdempotencyKey: key, RequestHash: hex.EncodeToString(hash[:]),
		SourceAccountID: src, DestinationAccountID: dst, Amount: amount.Int64() + 1, Currency: currency,
		ExecutionArn: arnPrefix + id,
	}, now, recordTTL), nil
}

// pair is two distinct random accounts.
func (g *grower) pair() (string, string, error) {
	n := big.NewInt(int64(len(g.accounts)))
	a, err := rand.Int(rand.Reader, n)
	if err != nil {
		return "", "", err
	}
	b, err := rand.Int(rand.Reader, big.NewInt(int64(len(g.accounts)-1)))
	if err != nil {
		return "", "", err
	}
	i, j := int(a.Int64()), int(b.Int64())
	if j >= i {
		j++
	}
	return g.accounts[i], g.accounts[j], nil
}

// reserve writes a new transfer record with the orchestrator's conditional PutItem.
func (g *grower) reserve(ctx context.Context) (ledger.Transfer, error) {
	now := time.Now()
	rec, err := g.newRecord(now)
	if err != nil {
		return rec, err
	}
	_, created, err := g.store.Reserve(ctx, rec, now)
	if err != nil {
		return rec, err
	}
	if !created {
		return rec, fmt.Errorf("reserve %s: the record exists", rec.TransferID)
	}
	g.items.Add(1)
	return rec, nil
}

// leg applies one leg, with a ClientRequestToken when token is set.
func (g *grower) leg(ctx context.Context, rec ledger.Transfer, leg string, token bool) error {
	return g.apply(ctx, rec.LegRequest(leg), token)
}

// apply applies req, with a ClientRequestToken when token is set.
func (g *grower) apply(ctx context.Context, req ledger.LegRequest, token bool) error {
	l := g.legsNoTk
	if token {
		l = g.legs
		g.sentToken(1)
	}
	if _, _, err := l.ApplyLeg(ctx, req, time.Now()); err != nil {
		return err
	}
	g.items.Add(1)
	return nil
}

// Settle variants.
const (
	settleASL = iota
	settleKeepGSI
	settleNoTTL
)

// settleInput is the settlement the CREDIT's transaction applies to rec (ledger.SettleCompleted), sent alone as the
// UpdateItem the workflow's MarkCompleted state made before the CREDIT settled the record itself (the shape
// MarkFailed still has); variant drops the REMOVE of the index key (settleKeepGSI) or the setting of the TTL
// attribute (settleNoTTL).
func settleInput(table string, rec ledger.Transfer, now time.Time, variant int) *dynamodb.UpdateItemInput {
	pk, _ := ledger.RecordKey(rec.TransferID)
	set := ledger.SettleCompleted
	values := map[string]ddbtypes.AttributeValue{
		":inProgress":  &ddbtypes.AttributeValueMemberS{Value: ledger.StatusInProgress},
		":completed":   &ddbtypes.AttributeValueMemberS{Value: ledger.StatusCompleted},
		":transferId":  &ddbtypes.AttributeValueMemberS{Value: rec.TransferID},
		":now":         &ddbtypes.AttributeValueMemberS{Value: now.UTC().Format(ledger.TimeLayout)},
		":credit":      &ddbtypes.AttributeValueMemberS{Value: ledger.LegCredit},
		":keepForever": &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(ledger.KeepForever)},
	}
	switch variant {
	case settleNoTTL:
		set = strings.Replace(set, ", expiresAt = if_not_exists(retainUntil, :keepForever)", "", 1)
		delete(values, ":keepForever")
	case settleKeepGSI:
		set = strings.Replace(set, " REMOVE sweepShard", "", 1)
	}
	return &dynamodb.UpdateItemInput{
		TableName: aws.String(table),
		Key: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: pk},
			"sk": &ddbtypes.AttributeValueMemberS{Value: "TRANSFER"},
		},
		ConditionExpression:       aws.String("#status = :inProgress AND transferId = :transferId AND contains(legs, :credit)"),
		UpdateExpression:          aws.String(set),
		ExpressionAttributeNames:  map[string]string{"#status": "status"},
		ExpressionAttributeValues: values,
	}
}

func (g *grower) settle(ctx context.Context, rec ledger.Transfer, variant int) error {
	if _, err := g.plain.UpdateItem(ctx, settleInput(g.cfg.Table, rec, time.Now(), variant)); err != nil {
		return fmt.Errorf("settle %s: %w", rec.TransferID, err)
	}
	return nil
}

// transfer runs one whole transfer as the workflow does: reserve, DEBIT, CREDIT (which settles the record), one poll.
func (g *grower) transfer(ctx context.Context, token bool) error {
	rec, err := g.reserve(ctx)
	if err != nil {
		return err
	}
	for _, leg := range []string{ledger.LegDebit, ledger.LegCredit} {
		req := rec.LegRequest(leg)
		req.Settle = leg == ledger.LegCredit
		if err := g.apply(ctx, req, token); err != nil {
			return err
		}
	}
	_, err = g.store.GetTransfer(ctx, scope, rec.TransferID, time.Now())
	return err
}

// putTransfer writes, with plain PutItems, the items a settled transfer leaves: its record and its two entries.
func (g *grower) putTransfer(ctx context.Context) error {
	now := time.Now()
	rec, err := g.newRecord(now)
	if err != nil {
		return err
	}
	ts := now.UTC().Format(ledger.TimeLayout)
	rec.Status, rec.Legs, rec.CompletedAt, rec.UpdatedAt = ledger.StatusCompleted, []string{ledger.LegCredit, ledger.LegDebit}, ts, ts
	rec.ExpiresAt, rec.SweepShard = rec.RetainUntil, ""
	items := []any{rec}
	for _, leg := range []string{ledger.LegDebit, ledger.LegCredit} {
		req := rec.LegRequest(leg)
		items = append(items, ledger.Entry{PK: ledger.LedgerKey(rec.TransferID), SK: leg, TransferID: rec.TransferID,
			Leg: leg, AccountID: req.AccountID, Amount: req.Amount, Currency: req.Currency,
			ExecutionArn: rec.ExecutionArn, CreatedAt: ts})
	}
	for _, it := range items {
		av, err := attributevalue.MarshalMap(it)
		if err != nil {
			return fmt.Errorf("encode item: %w", err)
		}
		if _, err := g.plain.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(g.cfg.Table), Item: av}); err != nil {
			return fmt.Errorf("put %s: %w", rec.TransferID, err)
		}
		g.items.Add(1)
	}
	return nil
}

// check sends a TransactWriteItems of one ConditionCheck on an account: it writes nothing.
func (g *grower) check(ctx context.Context, token bool) error {
	db := g.plain
	if token {
		db = g.token
		g.sentToken(1)
	}
	acct, _, err := g.pair()
	if err != nil {
		return err
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName: aws.String(g.cfg.Table),
			Key: map[string]ddbtypes.AttributeValue{
				"pk": &ddbtypes.AttributeValueMemberS{Value: ledger.AccountKey(acct)},
				"sk": &ddbtypes.AttributeValueMemberS{Value: accountSK},
			},
			ConditionExpression: aws.String("attribute_exists(pk)"),
		}},
	}})
	if err != nil {
		return fmt.Errorf("check %s: %w", acct, err)
	}
	return nil
}

// fill grows the store by one step and returns its requests per second.
func (g *grower) fill(ctx context.Context) (float64, error) {
	n, c := g.cfg.StepTransfers, g.cfg.Concurrency
	var (
		took     time.Duration
		err      error
		requests int
	)
	switch g.cfg.Fill {
	case FillWorkload:
		requests = n * requestsPerTransfer
		took, err = parallel(ctx, n, c, func(ctx context.Context, _ int) error { return g.transfer(ctx, g.cfg.Tokens) })
	case FillPut:
		requests = n * 3
		took, err = parallel(ctx, n, c, func(ctx context.Context, _ int) error { return g.putTransfer(ctx) })
	case FillTokens:
		requests = n * 2
		took, err = parallel(ctx, 2*n, c, func(ctx context.Context, _ int) error { return g.check(ctx, g.cfg.Tokens) })
	}
	if err != nil {
		return 0, err
	}
	g.transfers += n
	return perSecond(requests, took), nil
}

// probes times every probe once, in the order of Probes.
func (g *grower) probes(ctx context.Context, label string) (Row, error) {
	row := Row{Label: label, Transfers: g.transfers, Items: int(g.items.Load()), Tokens: g.recentTokens(),
		PerSec: map[string]float64{}, MeanMs: map[string]float64{}}
	if g.cfg.RSS != nil {
		if b, err := g.cfg.RSS(); err == nil {
			row.RSSMB = float64(b) / (1 << 20)
		}
	}
	n, c := g.cfg.Probe, g.cfg.Concurrency
	timed := func(name string, ops int, fn func(ctx context.Context, i int) error) error {
		var sum atomic.Int64
		took, err := parallel(ctx, ops, c, func(ctx context.Context, i int) error {
			start := time.Now()
			err := fn(ctx, i)
			sum.Add(int64(time.Since(start)))
			return err
		})
		if err != nil {
			return fmt.Errorf("probe %s: %w", name, err)
		}
		row.PerSec[name] = perSecond(ops, took)
		row.MeanMs[name] = float64(sum.Load()) / float64(ops) / 1e6
		return nil
	}
	// paired times ops operations of each of two kinds alternately (a with token true, b with false). Each kind's
	// rate is its operations over its share of the wall time, shared in proportion to the kinds' summed latencies.
	paired := func(a, b string, ops int, fn func(ctx context.Context, i int, token bool) error) error {
		var sum [2]atomic.Int64
		took, err := parallel(ctx, 2*ops, c, func(ctx context.Context, i int) error {
			start := time.Now()
			err := fn(ctx, i/2, i%2 == 0)
			sum[i%2].Add(int64(time.Since(start)))
			return err
		})
		if err != nil {
			return fmt.Errorf("probe %s/%s: %w", a, b, err)
		}
		total := float64(sum[0].Load() + sum[1].Load())
		for k, name := range []string{a, b} {
			share := time.Duration(float64(took) * float64(sum[k].Load()) / total)
			row.PerSec[name] = perSecond(ops, share)
			row.MeanMs[name] = float64(sum[k].Load()) / float64(ops) / 1e6
		}
		return nil
	}
	untimed := func(what string, ops int, fn func(ctx context.Context, i int) error) error {
		if _, err := parallel(ctx, ops, c, fn); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	// Three sets of reserved records: a for put, get and leg; b for leg-notoken; s for the settles' third.
	sets := [3][]ledger.Transfer{make([]ledger.Transfer, n), make([]ledger.Transfer, n), make([]ledger.Transfer, n)}
	if err := timed(ProbePut, n, func(ctx context.Context, i int) (err error) {
		sets[0][i], err = g.reserve(ctx)
		return err
	}); err != nil {
		return row, err
	}
	if err := timed(ProbeGet, n, func(ctx context.Context, i int) error {
		_, err := g.store.GetTransfer(ctx, scope, sets[0][i].TransferID, time.Now())
		return err
	}); err != nil {
		return row, err
	}
	for k := 1; k < 3; k++ {
		if err := untimed("reserve", n, func(ctx context.Context, i int) (err error) {
			sets[k][i], err = g.reserve(ctx)
			return err
		}); err != nil {
			return row, err
		}
	}
	// The token and no-token variants run interleaved in one timed run, so that whatever else the machine does falls
	// on both alike.
	if err := paired(ProbeLeg, ProbeLegNoToken, n, func(ctx context.Context, i int, token bool) error {
		if token {
			return g.leg(ctx, sets[0][i], ledger.LegDebit, true)
		}
		return g.leg(ctx, sets[1][i], ledger.LegDebit, false)
	}); err != nil {
		return row, err
	}
	if err := paired(ProbeCheck, ProbeCheckNoToken, n, func(ctx context.Context, _ int, token bool) error {
		return g.check(ctx, token)
	}); err != nil {
		return row, err
	}
	// The settles need the CREDIT (their condition asks for it; these CREDITs do not settle); the legs of the setup
	// carry no token, so that the setup does not add to the server's token cache.
	if err := untimed("legs", 3*n, func(ctx context.Context, i int) error {
		rec := sets[i/n][i%n]
		if i/n == 2 {
			if err := g.leg(ctx, rec, ledger.LegDebit, false); err != nil {
				return err
			}
		}
		return g.leg(ctx, rec, ledger.LegCredit, false)
	}); err != nil {
		return row, err
	}
	for k, p := range []struct {
		name    string
		variant int
	}{{ProbeSettle, settleASL}, {ProbeSettleKeep, settleKeepGSI}, {ProbeSettleNoTTL, settleNoTTL}} {
		if err := timed(p.name, n, func(ctx context.Context, i int) error { return g.settle(ctx, sets[k][i], p.variant) }); err != nil {
			return row, err
		}
	}
	if err := timed(ProbeMix, n, func(ctx context.Context, _ int) error { return g.transfer(ctx, true) }); err != nil {
		return row, err
	}
	row.PerSec[ProbeMix] *= requestsPerTransfer
	return row, nil
}

// parallel calls fn for i in [0, n) from c goroutines and returns how long it took; the first error stops it.
func parallel(ctx context.Context, n, c int, fn func(ctx context.Context, i int) error) (time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	start := time.Now()
	for range min(c, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return time.Since(start), firstErr
}

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
