package transfer

import (
	"encoding/json"
	"strings"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// Resource is the transfer as the API shows it.
type Resource struct {
	TransferID           string `json:"transferId"`
	Status               string `json:"status"`
	SourceAccountID      string `json:"sourceAccountId"`
	DestinationAccountID string `json:"destinationAccountId"`
	Amount               int64  `json:"amount"`
	Currency             string `json:"currency"`
	// Reference is always present (empty when the request had none), so that the workflow's outcome event, which
	// cannot leave a field out, shows the transfer exactly as the API does.
	Reference    string   `json:"reference"`
	ExecutionArn string   `json:"executionArn"`
	CreatedAt    string   `json:"createdAt"`
	UpdatedAt    string   `json:"updatedAt"`
	CompletedAt  string   `json:"completedAt,omitempty"`
	Failure      *Failure `json:"failure,omitempty"`
	Links        Links    `json:"links"`
}

// Failure says why a transfer FAILED.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Links are the transfer's related resources.
type Links struct {
	Self    string `json:"self"`
	History string `json:"history"`
}

// failureMessages explain the failure codes in words a support engineer can act on; the error that decided the
// outcome, when the record keeps one, follows in parentheses.
var failureMessages = map[string]string{
	"INSUFFICIENT_FUNDS":     "the source account's balance does not cover the amount; no money moved",
	"ACCOUNT_NOT_FOUND":      "an account of the transfer does not exist; no money moved",
	"CURRENCY_MISMATCH":      "the transfer's currency differs from an account's currency; no money moved",
	"CREDIT_FAILED_REFUNDED": "the destination could not be credited; the source was refunded",
	"TIMED_OUT":              "the workflow timed out; the transfer was settled from the ledger and any debit refunded",
	"ABORTED":                "the workflow was stopped; the transfer was settled from the ledger and any debit refunded",
	"ORPHANED":               "the workflow never started and could not be started; no money moved",
	CodeWorkflowFailed:       "the workflow failed; the transfer was settled from the ledger and any debit refunded",
}

// maxCauseLen bounds how much of an error's cause a failure message quotes.
const maxCauseLen = 300

// NewResource renders a stored record.
func NewResource(t ledger.Transfer) Resource {
	r := Resource{
		TransferID:           t.TransferID,
		Status:               t.Status,
		SourceAccountID:      t.SourceAccountID,
		DestinationAccountID: t.DestinationAccountID,
		Amount:               t.Amount,
		Currency:             t.Currency,
		Reference:            t.Reference,
		ExecutionArn:         t.ExecutionArn,
		CreatedAt:            t.CreatedAt,
		UpdatedAt:            t.UpdatedAt,
		CompletedAt:          t.CompletedAt,
		Links:                Links{Self: "/transfers/" + t.TransferID, History: "/transfers/" + t.TransferID + "/history"},
	}
	if t.Status == ledger.StatusFailed {
		r.Failure = &Failure{Code: t.FailureCode, Message: failureMessage(t.FailureCode, t.FailureError)}
	}
	return r
}

// failureMessage is never empty: the code's explanation, followed by the stored error ({"Error", "Cause"}, see
// ledger.Transfer.FailureError) when there is one. A Lambda function's cause is its error JSON; its errorMessage is
// quoted instead of the JSON.
func failureMessage(code, stored string) string {
	msg := failureMessages[code]
	if msg == "" {
		msg = "the transfer failed (" + code + ")"
	}
	var e struct{ Error, Cause string }
	if stored == "" || json.Unmarshal([]byte(stored), &e) != nil || e.Error == "" {
		return msg
	}
	var lambdaErr struct {
		ErrorMessage string `json:"errorMessage"`
	}
	cause := strings.TrimSpace(e.Cause)
	if json.Unmarshal([]byte(cause), &lambdaErr) == nil && lambdaErr.ErrorMessage != "" {
		cause = lambdaErr.ErrorMessage
	}
	if r := []rune(cause); len(r) > maxCauseLen {
		cause = string(r[:maxCauseLen]) + "…"
	}
	if cause == "" {
		return msg + " (" + e.Error + ")"
	}
	return msg + " (" + e.Error + ": " + cause + ")"
}

// ExecutionInput is the workflow's input. It is built only from the stored record, with a fixed field order, so that
// every StartExecution for one transfer sends byte-identical input.
type ExecutionInput struct {
	TransferID           string `json:"transferId"`
	RecordKey            string `json:"recordKey"`
	SourceAccountID      string `json:"sourceAccountId"`
	DestinationAccountID string `json:"destinationAccountId"`
	Amount               int64  `json:"amount"`
	Currency             string `json:"currency"`
	Reference            string `json:"reference"`
	CreatedAt            string `json:"createdAt"`
	// Authority is the DEBIT's authority (LegInput.Authority), from the record: the submitting caller's scope, or
	// "operator".
	Authority string `json:"authority"`
}

// NewExecutionInput builds the execution input of a stored record.
func NewExecutionInput(t ledger.Transfer) ExecutionInput {
	return ExecutionInput{
		TransferID:           t.TransferID,
		RecordKey:            t.PK,
		SourceAccountID:      t.SourceAccountID,
		DestinationAccountID: t.DestinationAccountID,
		Amount:               t.Amount,
		Currency:             t.Currency,
		Reference:            t.Reference,
		CreatedAt:            t.CreatedAt,
		Authority:            authority(t),
	}
}
