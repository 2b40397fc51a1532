package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The legs of a transfer: the DEBIT of the source, the CREDIT of the destination, and the compensating REFUND of
// the source when the CREDIT cannot be made.
const (
	LegDebit  = "DEBIT"
	LegCredit = "CREDIT"
	LegRefund = "REFUND"
)

const ledgerPrefix = "LEDGER#"

// Outcomes of ApplyLeg that callers branch on. Each is returned wrapped with the leg and transfer it concerns.
var (
	// ErrInsufficientFunds reports a DEBIT larger than the account's balance.
	ErrInsufficientFunds = errors.New("ledger: insufficient funds")
	// ErrAccountNotFound reports a leg on an account that does not exist.
	ErrAccountNotFound = errors.New("ledger: account not found")
	// ErrCurrencyMismatch reports a leg whose currency differs from the account's.
	ErrCurrencyMismatch = errors.New("ledger: currency mismatch")
	// ErrTransferNotInProgress reports a leg fenced off by the transfer record: the record is settled, or gone, or
	// now belongs to another transfer. Nothing was written.
	ErrTransferNotInProgress = errors.New("ledger: transfer not in progress")
	// ErrDebitNotApplied reports a CREDIT or REFUND of a transfer that has no DEBIT.
	ErrDebitNotApplied = errors.New("ledger: debit not applied")
	// ErrCreditApplied reports a REFUND of a transfer whose CREDIT exists: the transfer went through.
	ErrCreditApplied = errors.New("ledger: credit already applied")
	// ErrRefundApplied reports a CREDIT of a transfer whose REFUND exists: the transfer was unwound.
	ErrRefundApplied = errors.New("ledger: refund already applied")
	// ErrLegMismatch reports a leg whose account, amount or currency differs from its transfer record, or from the
	// ledger entry already written for it.
	ErrLegMismatch = errors.New("ledger: leg does not match the transfer")
	// ErrInvalidLeg reports a request that is malformed before any I/O: unknown leg, missing field, amount <= 0.
	ErrInvalidLeg = errors.New("ledger: invalid leg")
)

// Entry is a ledger entry: one leg of one transfer, written exactly once, in the same transaction as the balance
// change it records.
type Entry struct {
	PK         string `dynamodbav:"pk"`
	SK         string `dynamodbav:"sk"`
	TransferID string `dynamodbav:"transferId"`
	Leg        string `dynamodbav:"leg"`
	AccountID  string `dynamodbav:"accountId"`
	Amount     int64  `dynamodbav:"amount"`
	Currency   string `dynamodbav:"currency"`
	// BalanceAfter is set only on entries written before legs stopped reading the account (docs/ledger.md); a leg
	// now writes none.
	BalanceAfter *int64 `dynamodbav:"balanceAfter,omitempty"`
	ExecutionArn string `dynamodbav:"executionArn"`
	CreatedAt    string `dynamodbav:"createdAt"`
	// ActivityAccount and ActivityAt key the entry in the sparse AccountActivity index, the account's transfer
	// listing (docs/data-model.md): the account, and the time, transfer id and leg (ActivitySortKey). Entries
	// written before the index existed have neither and are not listed.
	ActivityAccount string `dynamodbav:"activityAccount,omitempty"`
	ActivityAt      string `dynamodbav:"activityAt,omitempty"`
	// CounterpartyAccountID is the other account of the transfer, where the leg knows it: a DEBIT's destination.
	// A CREDIT's or REFUND's counterparty is its DEBIT's account.
	CounterpartyAccountID string `dynamodbav:"counterpartyAccountId,omitempty"`
}

// LegRequest asks for one leg of a transfer. Amount is in minor units of Currency and must be positive.
type LegRequest struct {
	TransferID   string
	Leg          string
	AccountID    string
	Amount       int64
	Currency     string
	ExecutionArn string
	// DestinationAccountID is for a DEBIT only: the transfer's destination, checked in the DEBIT's own transaction (it
	// exists and holds Currency), so that a transfer that could never be credited moves no money at all. A DEBIT
	// without it (sent by an execution of a definition older than the check, still running across a deploy) is
	// applied without the check; its credit then refuses a bad destination and the debit is refunded, as before.
	DestinationAccountID string
	// Settle is for a CREDIT only: the same transaction also settles the transfer record COMPLETED (status,
	// updatedAt and completedAt set to the leg's time, retention started, sweepShard removed), as the workflow's
	// separate MarkCompleted update did before (docs/ledger.md, "The CREDIT settles the transfer"). A CREDIT without
	// it (from an execution of an older definition, which settles the record itself) leaves the record IN_PROGRESS.
	Settle bool
	// Owner and Operator are for a DEBIT only, and say on whose authority money leaves the source (docs/security.md).
	// Owner is the caller scope that submitted the transfer on the client route: the source must be a customer
	// account that scope owns, and the transfer record must be that scope's. Operator means the transfer was
	// submitted on the operator route: the source must have no owner (a funding account, whose floor then applies,
	// or an account from before owners), and the record must say so. A DEBIT with neither moves nothing: it is
	// refused as if the source did not exist (a DEBIT of an execution started before owners existed).
	Owner    string
	Operator bool
}

// AccountError reports a leg refused because of an account, for a DEBIT either the source or the destination:
// Err is ErrAccountNotFound or ErrCurrencyMismatch. Nothing was written.
type AccountError struct {
	AccountID string
	// Currency is the account's own currency, for a mismatch.
	Currency string
	Err      error
}

// Error names the account and what is wrong with it.
func (e *AccountError) Error() string {
	if errors.Is(e.Err, ErrCurrencyMismatch) {
		return fmt.Sprintf("account %s holds %s: %v", e.AccountID, e.Currency, e.Err)
	}
	return fmt.Sprintf("account %s: %v", e.AccountID, e.Err)
}

// Unwrap returns ErrAccountNotFound or ErrCurrencyMismatch.
func (e *AccountError) Unwrap() error { return e.Err }

// Validate reports a malformed request, wrapping ErrInvalidLeg.
func (r LegRequest) Validate() error {
	var problems []string
	switch r.Leg {
	case LegDebit, LegCredit, LegRefund:
	case "":
		problems = append(problems, "leg is required")
	default:
		problems = append(problems, fmt.Sprintf("leg %q is not DEBIT, CREDIT or REFUND", r.Leg))
	}
	if r.TransferID == "" {
		problems = append(problems, "transferId is required")
	} else if _, ok := RecordKey(r.TransferID); !ok {
		problems = append(problems, "transferId is not a transfer id")
	}
	if r.AccountID == "" {
		problems = append(problems, "accountId is required")
	}
	if r.Amount <= 0 {
		problems = append(problems, "amount must be a positive integer in minor units")
	}
	if r.Currency == "" {
		problems = append(problems, "currency is required")
	}
	if r.ExecutionArn == "" {
		problems = append(problems, "executionArn is required")
	}
	switch {
	case r.Leg == LegDebit && r.DestinationAccountID != "" && r.DestinationAccountID == r.AccountID:
		problems = append(problems, "destinationAccountId must differ from accountId")
	case r.Leg != LegDebit && r.DestinationAccountID != "":
		problems = append(problems, "destinationAccountId is only for a DEBIT")
	}
	if r.Settle && r.Leg != LegCredit {
		problems = append(problems, "settle is only for a CREDIT")
	}
	switch {
	case r.Leg != LegDebit && (r.Owner != "" || r.Operator):
		problems = append(problems, "owner and operator are only for a DEBIT")
	case r.Owner != "" && r.Operator:
		problems = append(problems, "a DEBIT is on the owner's authority or an operator's, not both")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidLeg, strings.Join(problems, "; "))
	}
	return nil
}

// LedgerKey returns the partition key of a transfer's ledger entries.
func LedgerKey(transferID string) string { return ledgerPrefix + transferID }

func entryKey(transferID, leg string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"pk": stringAV(LedgerKey(transferID)), "sk": stringAV(leg)}
}

// ledgerAPI is the part of the DynamoDB client the ledger uses.
type ledgerAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Ledger moves money between accounts: each leg is one DynamoDB transaction that changes a balance, writes the leg's
// ledger entry and checks the transfer record. It is safe for concurrent use. Accounts are created and read, and
// ledger entries listed, through Store.
type Ledger struct {
	db    ledgerAPI
	table string
	// Retry is how a transaction cancelled by contention or throttling is tried again; NewLedger sets
	// DefaultRetry.
	Retry RetryPolicy
}

// NewLedger returns a Ledger on table.
func NewLedger(db ledgerAPI, table string) *Ledger {
	return &Ledger{db: db, table: table, Retry: DefaultRetry}
}

// ApplyLeg applies one leg exactly once, in one TransactWriteItems and with no read before it. The first call that
// commits writes the entry; every later call for the same transfer and leg, concurrent or not, writes nothing and
// returns that stored entry with replayed true (or ErrLegMismatch if it asks for a different account, amount or
// currency). A leg is applied only while the transfer record is IN_PROGRESS with this transfer id and the leg's
// account, amount and currency; a DEBIT also needs the destination to exist and hold the currency; a CREDIT or REFUND
// needs the DEBIT, and CREDIT and REFUND exclude each other.
//
// A transaction cancelled only for contention (TransactionConflict) or throttling is tried again after a capped,
// fully jittered exponential backoff (l.Retry), for as long as ctx's deadline leaves time for it.
//
// The errors wrap ErrInvalidLeg, ErrLegMismatch, ErrTransferNotInProgress, ErrDebitNotApplied, ErrCreditApplied,
// ErrRefundApplied, ErrAccountNotFound or ErrCurrencyMismatch (as an *AccountError naming the account),
// ErrInsufficientFunds, or ErrUnavailable (throttling, transaction conflicts past the deadline, faults: safe to
// retry). docs/ledger.md describes the transaction.
func (l *Ledger) ApplyLeg(ctx context.Context, req LegRequest, now time.Time) (Entry, bool, error) {
	if err := req.Validate(); err != nil {
		return Entry{}, false, err
	}
	what := strings.ToLower(req.Leg) + " " + req.TransferID
	entry := newEntry(req, now)
	var source *Account
	if req.Leg == LegDebit && req.Operator {
		// An operator's DEBIT reads the source first, for its kind and floor: a condition cannot add the floor to the
		// amount. Operators' DEBITs (funding an account) are rare; a customer's DEBIT reads nothing.
		a, found, err := readAccount(ctx, l.db, l.table, req.AccountID)
		if err != nil {
			return Entry{}, false, fmt.Errorf("%s: read source: %w", what, err)
		}
		if found {
			source = &a
		}
	}
	in, err := l.legTransaction(req, entry, source, now)
	if err != nil {
		return Entry{}, false, fmt.Errorf("%s: %w", what, err)
	}
	retry := l.Retry.start(ctx)
	for {
		err := l.attempt(ctx, retry, in)
		if err == nil {
			return entry, false, nil
		}
		var tce *ddbtypes.TransactionCanceledException
		cancelled := errors.As(err, &tce)
		stored, replayed, err := l.outcome(ctx, req, err)
		switch {
		case replayed:
			return stored, true, nil
		// Contention and throttling are tried again; so is an error outside a cancellation that may be transient
		// (throttling, 5xx, transport). A cancellation for any other reason (ValidationError, …) is not: the same
		// transaction would be refused the same way.
		case errors.Is(err, errContended) || (!cancelled && errors.Is(err, ErrUnavailable)):
			if cancelled {
				// Nothing was committed: the next attempt is a new transaction, with a new idempotency token
				// (the SDK sets one when none is given). After an ambiguous error the token is kept, so that a
				// transaction that did commit is answered as committed.
				in.ClientRequestToken = nil
			}
			if retry.wait(ctx) {
				continue
			}
			return Entry{}, false, fmt.Errorf("%s: %d attempts: %w", what, retry.attempts, asUnavailable(err))
		}
		return Entry{}, false, fmt.Errorf("%s: %w", what, err)
	}
}

// attempt sends the leg's transaction once. With a deadline, the attempt ends half the retry reserve before it, so
// that the function still answers (TransientError, retried by the workflow) rather than time out.
func (l *Ledger) attempt(ctx context.Context, r *retrier, in *dynamodb.TransactWriteItemsInput) error {
	if !r.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.deadline.Add(-r.p.Reserve/2))
		defer cancel()
	}
	_, err := l.db.TransactWriteItems(ctx, in)
	return err
}

// errContended marks a transaction cancelled only because other transactions held its items (TransactionConflict)
// or the table throttled it: nothing was decided, and the same transaction may commit a moment later.
var errContended = errors.New("ledger: transaction cancelled by contention")

// asUnavailable is err as an ErrUnavailable, for the caller, once ApplyLeg stops retrying.
func asUnavailable(err error) error {
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// newEntry is the entry the leg writes. It records no balance: the leg changes the balance by arithmetic in the
// same transaction without reading it, so the balance after it is not known (docs/ledger.md, "No read before the
// write").
func newEntry(req LegRequest, now time.Time) Entry {
	ts := now.UTC().Format(TimeLayout)
	return Entry{
		PK: LedgerKey(req.TransferID), SK: req.Leg,
		TransferID: req.TransferID, Leg: req.Leg, AccountID: req.AccountID,
		Amount: req.Amount, Currency: req.Currency,
		ExecutionArn: req.ExecutionArn, CreatedAt: ts,
		ActivityAccount: req.AccountID, ActivityAt: ActivitySortKey(ts, req.TransferID, req.Leg),
		CounterpartyAccountID: req.DestinationAccountID,
	}
}

// SettleCompleted is the update that settles a transfer record COMPLETED, as a CREDIT with LegRequest.Settle applies
// it to the record in its own transaction (after ADD legs): status, updatedAt and completedAt (:completed, :now), the
// retention started from the reserved retainUntil (:keepForever when the record has none) and the record out of the
// InProgress index. The workflow's MarkCompleted state sent it as an UpdateItem of its own before.
const SettleCompleted = "SET #status = :completed, updatedAt = :now, completedAt = :now, " +
	"expiresAt = if_not_exists(retainUntil, :keepForever) REMOVE sweepShard"

// Positions of the items in a leg's transaction; CancellationReasons come back in the same order.
const (
	itemEntry = 0 // Put of the leg's entry: attribute_not_exists(pk)
	// Update of the transfer record: its condition fences the leg (and, for CREDIT and REFUND, checks the legs
	// applied), ADD legs records it.
	itemRecord = 1
	// For a DEBIT that names its destination:
	itemDestination = 2 // ConditionCheck: the destination account exists and holds the currency
)

// otherLeg is the leg that excludes leg: REFUND for a CREDIT, CREDIT for a REFUND.
func otherLeg(leg string) string {
	if leg == LegRefund {
		return LegCredit
	}
	return LegRefund
}

// checksDestination reports whether r's transaction checks the destination account.
func (r LegRequest) checksDestination() bool {
	return r.Leg == LegDebit && r.DestinationAccountID != ""
}

// accountItem is the position of the account Update, the last item.
func accountItem(req LegRequest) int {
	if req.checksDestination() {
		return 3
	}
	return 2
}

// legTransaction builds the leg's TransactWriteItems. The account update is arithmetic on the stored balance
// (balance - :amount for a DEBIT, + :amount otherwise), guarded by the account's existence, its currency and, for a
// DEBIT, balance >= :amount unless the account is a funding account (which is guarded against underflowing an int64
// instead); a CREDIT or REFUND is guarded against overflowing an int64 balance. The entry carries the attributes of
// the AccountActivity index, so listing the account's transfers costs the leg no extra request.
func (l *Ledger) legTransaction(req LegRequest, e Entry, source *Account, now time.Time) (*dynamodb.TransactWriteItemsInput, error) {
	item, err := attributevalue.MarshalMap(e)
	if err != nil {
		return nil, fmt.Errorf("encode entry: %w", err)
	}
	recordPK, _ := RecordKey(req.TransferID)
	role := "sourceAccountId"
	if req.Leg == LegCredit {
		role = "destinationAccountId"
	}
	recordCond := "#status = :inProgress AND transferId = :transferId AND #role = :accountId AND amount = :amount AND currency = :currency"
	recordValues := map[string]ddbtypes.AttributeValue{
		":inProgress": stringAV(StatusInProgress),
		":transferId": stringAV(req.TransferID),
		":accountId":  stringAV(req.AccountID),
		":amount":     numberAV(req.Amount),
		":currency":   stringAV(req.Currency),
		":leg":        &ddbtypes.AttributeValueMemberSS{Value: []string{req.Leg}},
	}
	recordNames := map[string]string{"#status": "status", "#role": role}
	switch {
	case req.Leg == LegDebit && req.Owner != "":
		// The record is the caller's, submitted on the client route, so the execution's input cannot name an owner
		// the record does not.
		recordCond += " AND #scope = :owner AND attribute_not_exists(#operator)"
		recordNames["#scope"], recordNames["#operator"] = "scope", "operator"
		recordValues[":owner"] = stringAV(req.Owner)
	case req.Leg == LegDebit && req.Operator:
		recordCond += " AND #operator = :true"
		recordNames["#operator"] = "operator"
		recordValues[":true"] = &ddbtypes.AttributeValueMemberBOOL{Value: true}
	}
	switch {
	case req.checksDestination():
		recordCond += " AND destinationAccountId = :destination"
		recordValues[":destination"] = stringAV(req.DestinationAccountID)
	case req.Leg != LegDebit:
		// The record's legs mirror the ledger (every leg adds itself in the transaction that writes its entry), so
		// the record answers what two ConditionChecks on the entries used to: the DEBIT is applied, and the other of
		// CREDIT/REFUND is not. The record is in the transaction anyway: 2 items and 4 WCU fewer (docs/ledger.md).
		recordCond += " AND contains(legs, :debit) AND NOT contains(legs, :other)"
		recordValues[":debit"] = stringAV(LegDebit)
		recordValues[":other"] = stringAV(otherLeg(req.Leg))
	}
	recordUpdate := "ADD legs :leg"
	if req.Settle {
		// The settlement MarkCompleted made, in the CREDIT's own transaction: the status can no longer lag the ledger,
		// and the workflow saves a request and a state transition (docs/ledger.md).
		recordUpdate = "ADD legs :leg " + SettleCompleted
		recordValues[":completed"] = stringAV(StatusCompleted)
		recordValues[":now"] = stringAV(e.CreatedAt)
		recordValues[":keepForever"] = numberAV(KeepForever)
	}
	allOld := ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
	table := aws.String(l.table)
	items := []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{
			TableName:                           table,
			Item:                                item,
			ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: allOld,
		}},
		// The record records the leg too (ADD legs), so the workflow's single-item status updates can check the
		// ledger through the record: COMPLETED needs CREDIT in legs, FAILED needs no DEBIT or a REFUND.
		{Update: &ddbtypes.Update{
			TableName:                           table,
			Key:                                 recordKey(recordPK),
			UpdateExpression:                    aws.String(recordUpdate),
			ConditionExpression:                 aws.String(recordCond),
			ExpressionAttributeNames:            recordNames,
			ExpressionAttributeValues:           recordValues,
			ReturnValuesOnConditionCheckFailure: allOld,
		}},
	}
	if req.checksDestination() {
		// A transfer that could never be credited is refused before money moves, in this same transaction.
		items = append(items, ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName:                           table,
			Key:                                 accountKey(req.DestinationAccountID),
			ConditionExpression:                 aws.String("attribute_exists(pk) AND currency = :currency"),
			ExpressionAttributeValues:           map[string]ddbtypes.AttributeValue{":currency": stringAV(req.Currency)},
			ReturnValuesOnConditionCheckFailure: allOld,
		}})
	}
	values := map[string]ddbtypes.AttributeValue{
		":currency": stringAV(req.Currency),
		":amount":   numberAV(req.Amount),
		":one":      numberAV(1),
		":now":      stringAV(now.UTC().Format(TimeLayout)),
	}
	cond := "attribute_exists(pk) AND currency = :currency AND "
	update := "SET balance = balance + :amount, updatedAt = :now ADD version :one"
	var names map[string]string
	if req.Leg == LegDebit {
		cond += debitCondition(req, source, values)
		names = map[string]string{"#owner": "owner"}
		if source != nil && source.Owner == "" {
			names["#kind"] = "kind"
			if source.AccountKind() == KindFunding {
				names["#floor"] = "floor"
			}
		}
		update = "SET balance = balance - :amount, updatedAt = :now ADD version :one"
	} else {
		cond += "balance <= :ceiling"
		values[":ceiling"] = numberAV(math.MaxInt64 - req.Amount)
	}
	items = append(items, ddbtypes.TransactWriteItem{Update: &ddbtypes.Update{
		TableName:                           table,
		Key:                                 accountKey(req.AccountID),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: allOld,
	}})
	return &dynamodb.TransactWriteItemsInput{TransactItems: items}, nil
}

// debitCondition is the part of a DEBIT's condition on its source that decides whose money it is and how low the
// balance may go, its values added to values (docs/security.md):
//   - on the owner's authority (req.Owner): the account's owner is req.Owner, and the balance covers the amount (an
//     owned account is a customer account, which never goes below zero);
//   - on an operator's (req.Operator), from the source as read just before (nil: none was found): the account has no
//     owner and is, as read, a funding account with the same floor whose balance stays at or above it, or a customer
//     account whose balance covers the amount;
//   - on neither: a condition no account meets.
func debitCondition(req LegRequest, source *Account, values map[string]ddbtypes.AttributeValue) string {
	switch {
	case req.Owner != "":
		values[":owner"] = stringAV(req.Owner)
		return "#owner = :owner AND balance >= :amount"
	case req.Operator && source != nil && source.Owner == "" && source.AccountKind() == KindFunding:
		values[":funding"] = stringAV(KindFunding)
		values[":minBalance"] = numberAV(source.FundingFloor() + req.Amount)
		floor := "attribute_not_exists(#floor)"
		if source.Floor != nil {
			floor = "#floor = :floor"
			values[":floor"] = numberAV(*source.Floor)
		}
		return "attribute_not_exists(#owner) AND #kind = :funding AND " + floor + " AND balance >= :minBalance"
	case req.Operator && source != nil && source.Owner == "":
		values[":funding"] = stringAV(KindFunding)
		return "attribute_not_exists(#owner) AND (attribute_not_exists(#kind) OR #kind <> :funding) AND balance >= :amount"
	}
	// No authority, or an operator's DEBIT of an account that is missing or owned: refused as a missing account.
	return "attribute_exists(#owner) AND attribute_not_exists(#owner)"
}

// outcome turns a failed leg transaction into what ApplyLeg returns: the stored entry of a replay, or the error.
// errContended (and ErrUnavailable) mean nothing was decided and the transaction may be tried again.
func (l *Ledger) outcome(ctx context.Context, req LegRequest, err error) (stored Entry, replayed bool, _ error) {
	var tce *ddbtypes.TransactionCanceledException
	if !errors.As(err, &tce) {
		return Entry{}, false, translate(err)
	}
	return l.cancelled(ctx, req, tce.CancellationReasons)
}

// Cancellation reason codes ApplyLeg branches on (DynamoDB's TransactWriteItems reference).
const (
	codeConditionFailed     = "ConditionalCheckFailed"
	codeNone                = "None"
	codeTransactionConflict = "TransactionConflict"
	codeThrottling          = "ThrottlingError"
	codeProvisioned         = "ProvisionedThroughputExceeded"
)

// cancelled turns a cancelled leg transaction into its outcome, from the CancellationReasons and their ALL_OLD
// images alone. The order of the checks is the priority of the outcomes: a leg already written is a replay whatever
// else changed since; then the transfer record, which also holds the ledger's order of legs (recordOutcome); then
// the accounts.
func (l *Ledger) cancelled(ctx context.Context, req LegRequest, reasons []ddbtypes.CancellationReason) (stored Entry, replayed bool, err error) {
	failed := func(i int) bool { return i < len(reasons) && aws.ToString(reasons[i].Code) == codeConditionFailed }
	if failed(itemEntry) {
		e, err := l.storedEntry(ctx, req, reasons[itemEntry].Item)
		if err != nil {
			return Entry{}, false, err
		}
		if e.AccountID != req.AccountID || e.Amount != req.Amount || e.Currency != req.Currency {
			return Entry{}, false, fmt.Errorf("the %s entry already written is for %s %d %s: %w",
				req.Leg, e.AccountID, e.Amount, e.Currency, ErrLegMismatch)
		}
		return e, true, nil
	}
	if failed(itemRecord) {
		t, found, err := l.recordImage(ctx, req.TransferID, reasons[itemRecord].Item)
		if err != nil {
			return Entry{}, false, err
		}
		return Entry{}, false, recordOutcome(req, t, found)
	}
	// An account that can never take part decides the outcome before a short balance does: the leg's own account
	// first, then (for a DEBIT) the destination.
	i := accountItem(req)
	var acct Account
	if failed(i) {
		var found bool
		var err error
		if acct, found, err = l.accountImage(ctx, req.AccountID, reasons[i].Item); err != nil {
			return Entry{}, false, err
		}
		if req.Leg == LegDebit && found && !mayDebit(req, acct) {
			// Not the caller's to spend: answered exactly as a missing account, before its currency or balance
			// could tell that it exists.
			found = false
		}
		if err := accountProblem(req.AccountID, req.Currency, acct, found); err != nil {
			return Entry{}, false, err
		}
	}
	if req.checksDestination() && failed(itemDestination) {
		dst, found, err := l.accountImage(ctx, req.DestinationAccountID, reasons[itemDestination].Item)
		if err != nil {
			return Entry{}, false, err
		}
		if err := accountProblem(req.DestinationAccountID, req.Currency, dst, found); err != nil {
			return Entry{}, false, err
		}
		if !failed(i) {
			return Entry{}, false, fmt.Errorf("destination %s changed during the leg: %w", req.DestinationAccountID, errContended)
		}
	}
	if failed(i) {
		switch {
		case req.Leg == LegDebit && acct.AccountKind() == KindFunding && acct.Balance-req.Amount < acct.FundingFloor():
			return Entry{}, false, fmt.Errorf("funding account %s: its floor: %w", req.AccountID, ErrInsufficientFunds)
		case req.Leg == LegDebit && acct.AccountKind() != KindFunding && acct.Balance < req.Amount:
			return Entry{}, false, fmt.Errorf("account %s: %w", req.AccountID, ErrInsufficientFunds)
		case req.Leg != LegDebit && acct.Balance > math.MaxInt64-req.Amount:
			return Entry{}, false, fmt.Errorf("account %s: balance would overflow", req.AccountID)
		}
		// The image satisfies the condition: the account changed between the check and the image. Nothing was
		// decided.
		return Entry{}, false, fmt.Errorf("account %s changed during the leg: %w", req.AccountID, errContended)
	}
	codes := make([]string, len(reasons))
	contended := len(reasons) > 0
	for i, r := range reasons {
		codes[i] = aws.ToString(r.Code)
		switch codes[i] {
		case codeNone, codeTransactionConflict, codeThrottling, codeProvisioned:
		default:
			contended = false
		}
	}
	if contended {
		return Entry{}, false, fmt.Errorf("transaction cancelled [%s]: %w", strings.Join(codes, ", "), errContended)
	}
	return Entry{}, false, fmt.Errorf("transaction cancelled [%s]: %w", strings.Join(codes, ", "), ErrUnavailable)
}

// mayDebit reports whether req's authority may take money out of acct: its owner's, for an owned account; an
// operator's, for an account without an owner.
func mayDebit(req LegRequest, acct Account) bool {
	if acct.Owner != "" {
		return req.Owner == acct.Owner
	}
	return req.Operator
}

// accountImage decodes the ALL_OLD image of an account whose condition failed. A server that sends no image (an
// empty one is also DynamoDB's answer for a missing item) is asked again with a strongly consistent read, so that a
// short balance is never reported as a missing account; this read happens only on a refused leg.
func (l *Ledger) accountImage(ctx context.Context, accountID string, item map[string]ddbtypes.AttributeValue) (Account, bool, error) {
	if len(item) > 0 {
		return decodeAccount(item)
	}
	acct, found, err := readAccount(ctx, l.db, l.table, accountID)
	if err != nil {
		return Account{}, false, fmt.Errorf("read account %s: %w", accountID, err)
	}
	return acct, found, nil
}

// accountProblem is the *AccountError of an account that cannot take a leg in currency: missing, or holding
// another currency; nil if it can.
func accountProblem(accountID, currency string, acct Account, found bool) error {
	switch {
	case !found:
		return &AccountError{AccountID: accountID, Err: ErrAccountNotFound}
	case acct.Currency != currency:
		return &AccountError{AccountID: accountID, Currency: acct.Currency, Err: ErrCurrencyMismatch}
	}
	return nil
}

// recordImage decodes the ALL_OLD image of the transfer record whose condition failed. A server that sends no image
// (an empty one is also DynamoDB's answer for a missing item) is asked again with a strongly consistent read, so that
// a CREDIT before its DEBIT is never reported as a missing record; this read happens only on a refused leg.
func (l *Ledger) recordImage(ctx context.Context, transferID string, item map[string]ddbtypes.AttributeValue) (Transfer, bool, error) {
	if len(item) == 0 {
		pk, ok := RecordKey(transferID)
		if !ok {
			return Transfer{}, false, nil
		}
		t, err := getRecordByKey(ctx, l.db, l.table, pk)
		switch {
		case errors.Is(err, ErrNotFound):
			return Transfer{}, false, nil
		case err != nil:
			return Transfer{}, false, fmt.Errorf("read transfer record: %w", err)
		}
		return t, true, nil
	}
	return decodeRecordImage(item)
}

// decodeRecordImage decodes a transfer record's ALL_OLD image; an empty one is no record.
func decodeRecordImage(item map[string]ddbtypes.AttributeValue) (Transfer, bool, error) {
	if len(item) == 0 {
		return Transfer{}, false, nil
	}
	var t Transfer
	if err := attributevalue.UnmarshalMap(item, &t); err != nil {
		return Transfer{}, false, fmt.Errorf("decode transfer record: %w", err)
	}
	return t, true, nil
}

// recordOutcome explains why the record refused the leg, from the record as it was (found false: there is none).
// The order is the outcomes' priority: another transfer's record, then a REFUND after a CREDIT (refused as such
// whatever the status: a CREDIT that settles the record, LegRequest.Settle, has already moved it to COMPLETED, and
// the workflow must learn that the transfer went through, not merely that it is settled), a settled transfer, a leg
// that is not the transfer's, a CREDIT or REFUND before the DEBIT, and a CREDIT after a REFUND. A record that
// satisfies every condition changed between the check and the image (a read without an image comes later):
// nothing was decided.
func recordOutcome(req LegRequest, t Transfer, found bool) error {
	switch {
	case !found:
		return fmt.Errorf("no transfer record: %w", ErrTransferNotInProgress)
	case t.TransferID != req.TransferID:
		return fmt.Errorf("the record now belongs to another transfer: %w", ErrTransferNotInProgress)
	case req.Leg == LegRefund && slices.Contains(t.Legs, LegCredit):
		return ErrCreditApplied
	case t.Status != StatusInProgress:
		return fmt.Errorf("transfer is %s: %w", t.Status, ErrTransferNotInProgress)
	}
	account := t.SourceAccountID
	if req.Leg == LegCredit {
		account = t.DestinationAccountID
	}
	switch {
	case req.checksDestination() && t.DestinationAccountID != req.DestinationAccountID:
		return fmt.Errorf("transfer is to %s, the DEBIT names %s as the destination: %w",
			t.DestinationAccountID, req.DestinationAccountID, ErrLegMismatch)
	case account != req.AccountID || t.Amount != req.Amount || t.Currency != req.Currency:
		return fmt.Errorf("transfer is %s %d %s, leg asks %s %d %s: %w",
			account, t.Amount, t.Currency, req.AccountID, req.Amount, req.Currency, ErrLegMismatch)
	case req.Leg == LegDebit && req.Owner != "" && (t.Scope != req.Owner || t.Operator):
		return fmt.Errorf("the DEBIT's owner is not the caller that submitted the transfer: %w", ErrLegMismatch)
	case req.Leg == LegDebit && req.Operator && !t.Operator:
		return fmt.Errorf("the DEBIT is an operator's, the transfer was not submitted by one: %w", ErrLegMismatch)
	case req.Leg != LegDebit && !slices.Contains(t.Legs, LegDebit):
		return ErrDebitNotApplied
	case req.Leg == LegCredit && slices.Contains(t.Legs, LegRefund):
		return ErrRefundApplied
	}
	return fmt.Errorf("transfer record %s changed during the leg: %w", req.TransferID, errContended)
}

// storedEntry decodes the entry a replayed leg found, from the cancellation's ALL_OLD image, or, where the server
// sent none, from a strongly consistent read.
func (l *Ledger) storedEntry(ctx context.Context, req LegRequest, item map[string]ddbtypes.AttributeValue) (Entry, error) {
	if len(item) == 0 {
		out, err := l.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:      aws.String(l.table),
			Key:            entryKey(req.TransferID, req.Leg),
			ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return Entry{}, fmt.Errorf("read stored entry: %w", translate(err))
		}
		if len(out.Item) == 0 {
			return Entry{}, fmt.Errorf("stored entry vanished: %w", ErrUnavailable)
		}
		item = out.Item
	}
	var e Entry
	if err := attributevalue.UnmarshalMap(item, &e); err != nil {
		return Entry{}, fmt.Errorf("decode stored entry: %w", err)
	}
	return e, nil
}

// Entries returns a transfer's ledger entries (strongly consistent), in leg name order: CREDIT, DEBIT, REFUND.
func (s *Store) Entries(ctx context.Context, transferID string) ([]Entry, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":pk": stringAV(LedgerKey(transferID))},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("ledger entries of %s: %w", transferID, translate(err))
	}
	var entries []Entry
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &entries); err != nil {
		return nil, fmt.Errorf("ledger entries of %s: decode: %w", transferID, err)
	}
	return entries, nil
}
