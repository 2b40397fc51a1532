package transfer

import "fmt"

// The workflow's error types. A Lambda function's error reaches Step Functions with its Go type name as the error
// name, and statemachine/transfer.asl.json's Retry and Catch match on exactly these names, so each type is named as
// in the ASL and the handlers return them unwrapped (a wrapped error would be named "wrapError"). errors_test.go
// checks that every name the ASL matches exists here.

// InsufficientFunds reports a DEBIT larger than the source account's balance. Nothing was written.
type InsufficientFunds struct {
	TransferID string
	AccountID  string
}

// Error implements error.
func (e *InsufficientFunds) Error() string {
	return fmt.Sprintf("account %s has insufficient funds for transfer %s", e.AccountID, e.TransferID)
}

// AccountNotFound reports a leg on an account that does not exist. Nothing was written.
type AccountNotFound struct {
	TransferID string
	AccountID  string
}

// Error implements error.
func (e *AccountNotFound) Error() string {
	return fmt.Sprintf("account %s of transfer %s does not exist", e.AccountID, e.TransferID)
}

// CurrencyMismatch reports a leg whose currency is not the account's. Nothing was written.
type CurrencyMismatch struct {
	TransferID string
	AccountID  string
	Currency   string
}

// Error implements error.
func (e *CurrencyMismatch) Error() string {
	return fmt.Sprintf("account %s does not hold %s (transfer %s)", e.AccountID, e.Currency, e.TransferID)
}

// TransferNotInProgress reports a leg fenced off by the transfer record: the transfer was settled elsewhere (or its
// record is gone or reused), so the leg moved nothing.
type TransferNotInProgress struct {
	TransferID string
	Leg        string
	Reason     string
}

// Error implements error.
func (e *TransferNotInProgress) Error() string {
	return fmt.Sprintf("%s of transfer %s fenced: %s", e.Leg, e.TransferID, e.Reason)
}

// DebitNotApplied reports a CREDIT or REFUND of a transfer that has no DEBIT. Nothing was written.
type DebitNotApplied struct {
	TransferID string
	Leg        string
}

// Error implements error.
func (e *DebitNotApplied) Error() string {
	return fmt.Sprintf("%s of transfer %s refused: the transfer has no DEBIT", e.Leg, e.TransferID)
}

// CreditAlreadyApplied reports a REFUND of a transfer whose CREDIT exists: the money reached the destination, so the
// transfer is complete and must not be refunded. Nothing was written.
type CreditAlreadyApplied struct{ TransferID string }

// Error implements error.
func (e *CreditAlreadyApplied) Error() string {
	return fmt.Sprintf("REFUND of transfer %s refused: its CREDIT was applied", e.TransferID)
}

// RefundAlreadyApplied reports a CREDIT of a transfer whose REFUND exists: the debit was given back, so the transfer
// has failed and must not be credited. Nothing was written.
type RefundAlreadyApplied struct{ TransferID string }

// Error implements error.
func (e *RefundAlreadyApplied) Error() string {
	return fmt.Sprintf("CREDIT of transfer %s refused: its REFUND was applied", e.TransferID)
}

// InvalidLegInput reports a malformed task input (a missing field, an amount that is not a positive integer, an
// unknown leg, a leg the function does not handle) or a leg that contradicts its transfer record or the entry
// already written for it. It is never worth retrying. Nothing was written.
type InvalidLegInput struct{ Reason string }

// Error implements error.
func (e *InvalidLegInput) Error() string { return "invalid leg input: " + e.Reason }

// TransientError reports a failure that may pass: DynamoDB throttling, a transaction conflict, a server fault, a
// transport error or a deadline. Every leg is idempotent, so the workflow retries it.
type TransientError struct {
	TransferID string
	Leg        string
	Err        error
}

// Error implements error.
func (e *TransientError) Error() string {
	return fmt.Sprintf("%s of transfer %s may be retried: %v", e.Leg, e.TransferID, e.Err)
}

// Unwrap returns the underlying failure.
func (e *TransientError) Unwrap() error { return e.Err }
