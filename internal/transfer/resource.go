package transfer

import "github.com/transferflow/orchestrator/internal/ledger"

// Resource is the transfer as the API shows it.
type Resource struct {
	TransferID           string   `json:"transferId"`
	Status               string   `json:"status"`
	SourceAccountID      string   `json:"sourceAccountId"`
	DestinationAccountID string   `json:"destinationAccountId"`
	Amount               int64    `json:"amount"`
	Currency             string   `json:"currency"`
	Reference            string   `json:"reference,omitempty"`
	ExecutionArn         string   `json:"executionArn"`
	CreatedAt            string   `json:"createdAt"`
	UpdatedAt            string   `json:"updatedAt"`
	CompletedAt          string   `json:"completedAt,omitempty"`
	Failure              *Failure `json:"failure,omitempty"`
	Links                Links    `json:"links"`
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

// failureMessages are the human-readable explanations of the failure codes.
var failureMessages = map[string]string{
	"INSUFFICIENT_FUNDS":     "the source account's balance does not cover the amount",
	"ACCOUNT_NOT_FOUND":      "the source or destination account does not exist",
	"CURRENCY_MISMATCH":      "the transfer's currency differs from an account's currency",
	"CREDIT_FAILED_REFUNDED": "the destination could not be credited; the source was refunded",
	"TIMED_OUT":              "the workflow timed out; the transfer was settled from the ledger",
	"ABORTED":                "the workflow was stopped; the transfer was settled from the ledger",
	"ORPHANED":               "the workflow never started and could not be started",
}

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
		msg, ok := failureMessages[t.FailureCode]
		switch {
		case !ok:
			msg = t.FailureMessage
		case t.FailureCode == "CREDIT_FAILED_REFUNDED" && t.FailureMessage != "":
			// The workflow records the credit's error name: say which.
			msg = "the destination could not be credited (" + t.FailureMessage + "); the source was refunded"
		}
		r.Failure = &Failure{Code: t.FailureCode, Message: msg}
	}
	return r
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
	}
}
