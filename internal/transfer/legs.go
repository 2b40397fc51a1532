package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// LegInput is the task input the workflow sends to the debit and credit functions: which leg of which transfer, on
// which account, for how much. Amount is a JSON integer in minor units of Currency.
type LegInput struct {
	Leg          string `json:"leg"`
	TransferID   string `json:"transferId"`
	AccountID    string `json:"accountId"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency"`
	ExecutionArn string `json:"executionArn"`
	// DestinationAccountID is sent with a DEBIT only: the debit checks, in its own transaction, that the destination
	// exists and holds the currency, so a transfer that could never complete moves no money.
	DestinationAccountID string `json:"destinationAccountId,omitempty"`
	// Settle is sent with a CREDIT: the credit's own transaction settles the transfer record COMPLETED, and the
	// result carries completedAt (docs/workflow.md). A CREDIT without it, from an execution of an older definition
	// that settles the record in a state of its own, leaves the record IN_PROGRESS.
	Settle bool `json:"settle,omitempty"`
	// Authority is sent with a DEBIT: on whose authority money leaves the source (docs/security.md). "owner:" and the
	// caller scope that submitted the transfer on the client route (the source must be an account that scope owns),
	// or "operator" for a transfer submitted on the operator route (the source must have no owner). A DEBIT without
	// it moves nothing: it fails AccountNotFound, as a DEBIT of an account that does not exist.
	Authority string `json:"authority,omitempty"`
}

// Authorities of a DEBIT (LegInput.Authority).
const (
	// AuthorityOperator is the authority of a transfer submitted on the operator route.
	AuthorityOperator = "operator"
	// authorityOwnerPrefix precedes the submitting caller's scope in the authority of a client's transfer.
	authorityOwnerPrefix = "owner:"
)

// OwnerAuthority is the authority of a transfer that the caller scope submitted on the client route.
func OwnerAuthority(scope string) string { return authorityOwnerPrefix + scope }

// authority is the execution input's authority of record t.
func authority(t ledger.Transfer) string {
	if t.Operator {
		return AuthorityOperator
	}
	return OwnerAuthority(t.Scope)
}

// legInputFields has LegInput's fields without its UnmarshalJSON.
type legInputFields LegInput

// UnmarshalJSON decodes strictly: one JSON object with no unknown fields, amount a JSON integer. Any other shape is
// an *InvalidLegInput, which the Lambda runtime reports under that name. Field values are checked by Validate.
func (in *LegInput) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f legInputFields
	if err := dec.Decode(&f); err != nil {
		return &InvalidLegInput{Reason: "task input: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &InvalidLegInput{Reason: "task input: unexpected data after the JSON object"}
	}
	*in = LegInput(f)
	return nil
}

// Validate reports a missing field, an unknown leg, an amount outside 1 to MaxAmount, or an account id or currency
// of the wrong shape as an *InvalidLegInput.
func (in LegInput) Validate() error {
	if err := in.request().Validate(); err != nil {
		return &InvalidLegInput{Reason: err.Error()}
	}
	switch {
	case !accountIDRe.MatchString(in.AccountID):
		return &InvalidLegInput{Reason: "accountId must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"}
	case in.DestinationAccountID != "" && !accountIDRe.MatchString(in.DestinationAccountID):
		return &InvalidLegInput{Reason: "destinationAccountId must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"}
	case !currencyRe.MatchString(in.Currency):
		return &InvalidLegInput{Reason: "currency must be three upper-case letters (ISO 4217)"}
	case in.Amount > MaxAmount:
		return &InvalidLegInput{Reason: fmt.Sprintf("amount must be at most %d", int64(MaxAmount))}
	case in.Authority != "" && in.Leg != ledger.LegDebit:
		return &InvalidLegInput{Reason: "authority is only for a DEBIT"}
	case in.Authority != "" && in.Authority != AuthorityOperator && (!strings.HasPrefix(in.Authority, authorityOwnerPrefix) || in.Authority == authorityOwnerPrefix):
		return &InvalidLegInput{Reason: `authority must be "operator" or "owner:" and a caller scope`}
	}
	return nil
}

func (in LegInput) request() ledger.LegRequest {
	owner, ok := strings.CutPrefix(in.Authority, authorityOwnerPrefix)
	if !ok {
		owner = ""
	}
	return ledger.LegRequest{
		TransferID: in.TransferID, Leg: in.Leg, AccountID: in.AccountID,
		Amount: in.Amount, Currency: in.Currency, ExecutionArn: in.ExecutionArn,
		DestinationAccountID: in.DestinationAccountID, Settle: in.Settle,
		Owner: owner, Operator: in.Authority == AuthorityOperator,
	}
}

// LegResult is a leg's ledger entry as the functions return it. It is built from the stored entry, so a leg invoked
// again returns exactly what it returned the first time.
type LegResult struct {
	TransferID string `json:"transferId"`
	Leg        string `json:"leg"`
	AccountID  string `json:"accountId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	// BalanceAfter is present only for entries written before legs stopped reading the account (docs/ledger.md).
	BalanceAfter *int64 `json:"balanceAfter,omitempty"`
	ExecutionArn string `json:"executionArn"`
	CreatedAt    string `json:"createdAt"`
	// CompletedAt is set for a CREDIT with Settle: when the transfer record was settled COMPLETED (the record's
	// completedAt and updatedAt), the same on every repeat.
	CompletedAt string `json:"completedAt,omitempty"`
}

func newLegResult(e ledger.Entry) LegResult {
	return LegResult{
		TransferID: e.TransferID, Leg: e.Leg, AccountID: e.AccountID, Amount: e.Amount, Currency: e.Currency,
		BalanceAfter: e.BalanceAfter, ExecutionArn: e.ExecutionArn, CreatedAt: e.CreatedAt,
	}
}

// legApplier applies one leg of a transfer exactly once (*ledger.Ledger satisfies it). It returns the stored entry,
// whether it was already written, and errors wrapping the ledger's sentinels.
type legApplier interface {
	ApplyLeg(ctx context.Context, req ledger.LegRequest, now time.Time) (ledger.Entry, bool, error)
}

// Debit is the debit function: it applies a transfer's DEBIT leg to the source account.
type Debit struct {
	Ledger legApplier
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics receives one record per invocation (docs/metrics.md); nil writes none.
	Metrics metricsEmitter
}

// Handle applies the DEBIT leg in. It returns the leg's entry (the first one written, on every repeat) or one of the
// workflow error types, unwrapped.
func (d *Debit) Handle(ctx context.Context, in LegInput) (LegResult, error) {
	res, replayed, err := d.handle(ctx, in)
	emit(ctx, d.Metrics, d.Logger, legRecord(ServiceDebit, in, replayed, err))
	return res, err
}

func (d *Debit) handle(ctx context.Context, in LegInput) (LegResult, bool, error) {
	if in.Leg != ledger.LegDebit {
		return LegResult{}, false, &InvalidLegInput{Reason: fmt.Sprintf("the debit function applies DEBIT legs, not %q", in.Leg)}
	}
	if in.DestinationAccountID == "" {
		d.Logger.WarnContext(ctx, "DEBIT without destinationAccountId, from a definition older than the destination check: the credit checks the destination",
			"transferId", in.TransferID)
	}
	if in.Authority == "" {
		d.Logger.WarnContext(ctx, "DEBIT without authority, from a definition older than account owners: refused as a missing account",
			"transferId", in.TransferID)
	}
	return applyLeg(ctx, d.Ledger, d.Now(), d.Logger, in)
}

// creditLedger is what the credit function needs of the ledger (*ledger.Ledger satisfies it): the legs, and, for a
// repeated CREDIT that settles the record, when the record was settled.
type creditLedger interface {
	legApplier
	Completion(ctx context.Context, transferID string, now time.Time) (string, error)
}

// Credit is the credit function: it applies a transfer's CREDIT leg to the destination account, or its compensating
// REFUND leg to the source account. A CREDIT with Settle also settles the transfer record COMPLETED.
type Credit struct {
	Ledger creditLedger
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics receives one record per invocation (docs/metrics.md); nil writes none.
	Metrics metricsEmitter
}

// Handle applies the CREDIT or REFUND leg in. It returns the leg's entry (the first one written, on every repeat) or
// one of the workflow error types, unwrapped.
func (c *Credit) Handle(ctx context.Context, in LegInput) (LegResult, error) {
	res, replayed, err := c.handle(ctx, in)
	emit(ctx, c.Metrics, c.Logger, legRecord(ServiceCredit, in, replayed, err))
	return res, err
}

func (c *Credit) handle(ctx context.Context, in LegInput) (LegResult, bool, error) {
	if in.Leg != ledger.LegCredit && in.Leg != ledger.LegRefund {
		return LegResult{}, false, &InvalidLegInput{Reason: fmt.Sprintf("the credit function applies CREDIT and REFUND legs, not %q", in.Leg)}
	}
	now := c.Now()
	res, replayed, err := applyLeg(ctx, c.Ledger, now, c.Logger, in)
	if err != nil || !in.Settle {
		return res, replayed, err
	}
	if !replayed {
		// The transaction that wrote the entry settled the record at the entry's time.
		res.CompletedAt = res.CreatedAt
		return res, false, nil
	}
	at, err := c.Ledger.Completion(ctx, in.TransferID, now)
	if err != nil {
		return LegResult{}, true, legError(in, err)
	}
	res.CompletedAt = at
	return res, true, nil
}

// applyLeg applies in once; replayed reports an entry that was already written.
func applyLeg(ctx context.Context, l legApplier, now time.Time, logger *slog.Logger, in LegInput) (LegResult, bool, error) {
	if err := in.Validate(); err != nil {
		return LegResult{}, false, err
	}
	e, replayed, err := l.ApplyLeg(ctx, in.request(), now)
	if err != nil {
		return LegResult{}, false, legError(in, err)
	}
	logger.InfoContext(ctx, "leg applied", "transferId", in.TransferID, "leg", in.Leg, "replayed", replayed)
	return newLegResult(e), replayed, nil
}

// legError turns a ledger error into the workflow error type the state machine matches. Errors of no known class
// are treated as transient: every leg is idempotent, so a retry is always safe.
func legError(in LegInput, err error) error {
	account := in.AccountID
	var ae *ledger.AccountError
	if errors.As(err, &ae) {
		account = ae.AccountID // for a DEBIT, the source or the destination
	}
	switch {
	case errors.Is(err, ledger.ErrInvalidLeg), errors.Is(err, ledger.ErrLegMismatch):
		return &InvalidLegInput{Reason: err.Error()}
	case errors.Is(err, ledger.ErrTransferNotInProgress):
		return &TransferNotInProgress{TransferID: in.TransferID, Leg: in.Leg, Reason: err.Error()}
	case errors.Is(err, ledger.ErrDebitNotApplied):
		return &DebitNotApplied{TransferID: in.TransferID, Leg: in.Leg}
	case errors.Is(err, ledger.ErrCreditApplied):
		return &CreditAlreadyApplied{TransferID: in.TransferID}
	case errors.Is(err, ledger.ErrRefundApplied):
		return &RefundAlreadyApplied{TransferID: in.TransferID}
	case errors.Is(err, ledger.ErrAccountNotFound):
		return &AccountNotFound{TransferID: in.TransferID, AccountID: account}
	case errors.Is(err, ledger.ErrCurrencyMismatch):
		return &CurrencyMismatch{TransferID: in.TransferID, AccountID: account, Currency: in.Currency}
	case errors.Is(err, ledger.ErrInsufficientFunds):
		return &InsufficientFunds{TransferID: in.TransferID, AccountID: in.AccountID}
	default:
		return &TransientError{TransferID: in.TransferID, Leg: in.Leg, Err: err}
	}
}
