package transferclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Transfer statuses.
const (
	StatusInProgress = "IN_PROGRESS"
	StatusCompleted  = "COMPLETED"
	StatusFailed     = "FAILED"
)

// SubmitRequest is the body of POST /transfers. Amount is in minor units of Currency (1250 EUR is 12.50 EUR).
type SubmitRequest struct {
	SourceAccountID      string `json:"sourceAccountId"`
	DestinationAccountID string `json:"destinationAccountId"`
	Amount               int64  `json:"amount"`
	Currency             string `json:"currency"`
	Reference            string `json:"reference,omitempty"`
}

// Transfer is the transfer resource. Raw is the JSON the API sent, for callers that print it unchanged.
type Transfer struct {
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

	Raw json.RawMessage `json:"-"`
}

// Terminal reports whether the transfer's status can no longer change.
func (t Transfer) Terminal() bool { return t.Status == StatusCompleted || t.Status == StatusFailed }

// Failure says why a transfer FAILED.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// SubmitResult is the outcome of Submit.
type SubmitResult struct {
	// Transfer is the transfer the API answered with.
	Transfer Transfer
	// Status is the HTTP status of the final answer: 202 (accepted, in progress) or 200 (a replay of a terminal
	// transfer).
	Status int
	// Replayed is true when the API answered from an earlier request with the same key (Idempotent-Replayed).
	Replayed bool
	// Attempts is the number of requests sent.
	Attempts int
}

// Account kinds (docs/api.md): only a funding account may go below zero.
const (
	KindCustomer = "customer"
	KindFunding  = "funding"
)

// Account is an account as GET /accounts/{id} and POST /accounts show it. Balance is in minor units of Currency.
// Owner and Floor are in the operator view only (the operator routes): Owner is the owner's caller scope, such as
// iam:arn:aws:iam::123456789012:user/alice, empty for an account without owner; Floor is a funding account's
// lowest balance, nil for a customer account.
type Account struct {
	AccountID string `json:"accountId"`
	Kind      string `json:"kind,omitempty"`
	Balance   int64  `json:"balance"`
	Currency  string `json:"currency"`
	Version   int64  `json:"version"`
	CreatedAt string `json:"createdAt,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
	Owner     string `json:"owner,omitempty"`
	Floor     *int64 `json:"floor,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// MinFundingFloor is the lowest Floor the API accepts for a funding account (docs/api.md); the highest is 0.
const MinFundingFloor int64 = -1_000_000_000_000_000

// OpenAccountRequest is the body of POST /accounts. An empty AccountID lets the API choose one; an empty Kind is
// a customer account. Floor (a funding account's, MinFundingFloor to 0; nil: the API's default) and Owner (a
// customer account's owner, as a principal ARN; empty: none) are for the operator route only: the client route
// refuses them.
type OpenAccountRequest struct {
	AccountID string `json:"accountId,omitempty"`
	Currency  string `json:"currency"`
	Kind      string `json:"kind,omitempty"`
	Floor     *int64 `json:"floor,omitempty"`
	Owner     string `json:"owner,omitempty"`
}

// OpenAccountResult is the outcome of OpenAccount.
type OpenAccountResult struct {
	// Account is the account the API answered with.
	Account Account
	// Status is the HTTP status of the final answer: 201 (opened), or 200 (a replay of the key, or an account that
	// was already open with the same currency and kind).
	Status int
	// Replayed is true when the API answered from an earlier request with the same key (Idempotent-Replayed).
	Replayed bool
	// Attempts is the number of requests sent.
	Attempts int
}

// AccountTransfer is one entry of GET /accounts/{id}/transfers: a leg of a transfer on the account. Amount is
// signed: negative for money out (a DEBIT).
type AccountTransfer struct {
	TransferID            string `json:"transferId"`
	Leg                   string `json:"leg"`
	Direction             string `json:"direction"`
	Amount                int64  `json:"amount"`
	Currency              string `json:"currency"`
	CounterpartyAccountID string `json:"counterpartyAccountId,omitempty"`
	CreatedAt             string `json:"createdAt"`
	Status                string `json:"status,omitempty"`
	Reference             string `json:"reference,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// AccountTransfers is a page (or, from AllAccountTransfers, every page) of an account's transfers, newest first.
type AccountTransfers struct {
	AccountID string
	Transfers []AccountTransfer
	// NextToken continues the listing; empty on the last page.
	NextToken string
}

// History is a transfer's audit trail: its execution's events, all pages joined, and its ledger legs.
type History struct {
	TransferID   string      `json:"transferId"`
	ExecutionArn string      `json:"executionArn"`
	Events       []Event     `json:"events"`
	Ledger       []LedgerLeg `json:"ledger"`
}

// LedgerLeg is one ledger entry of a transfer: a DEBIT, CREDIT or REFUND. Amounts are in minor units.
type LedgerLeg struct {
	Leg          string `json:"leg"`
	AccountID    string `json:"accountId"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency"`
	BalanceAfter *int64 `json:"balanceAfter,omitempty"`
	CreatedAt    string `json:"createdAt,omitempty"`

	raw json.RawMessage
}

// UnmarshalJSON decodes the leg and keeps the original JSON.
func (l *LedgerLeg) UnmarshalJSON(b []byte) error {
	type plain LedgerLeg
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*l = LedgerLeg(p)
	l.raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON returns the JSON the leg was decoded from, unchanged, or the fields when it was built in code.
func (l LedgerLeg) MarshalJSON() ([]byte, error) {
	if l.raw != nil {
		return l.raw, nil
	}
	type plain LedgerLeg
	return json.Marshal(plain(l))
}

// Event is one Step Functions history event (GetExecutionHistory's shape): the common fields and the parts of its
// <type>EventDetails object the timeline shows. It marshals back to the JSON it was decoded from.
type Event struct {
	ID              int64
	PreviousEventID int64
	Timestamp       time.Time
	Type            string
	// Name is the state name of a *StateEntered or *StateExited event.
	Name string
	// Resource and ResourceType identify a task's integration, for example "invoke" and "lambda".
	Resource, ResourceType string
	// Error and Cause are set on failure events.
	Error, Cause string
	// Parameters is a scheduled task's parameters, a JSON text (for a Lambda invoke: FunctionName and Payload).
	Parameters string

	raw json.RawMessage
}

// UnmarshalJSON decodes an event as GetExecutionHistory returns it. The timestamp may be epoch seconds (the wire
// format) or an RFC 3339 string (how the SDKs re-encode it).
func (e *Event) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	var out Event
	for k, v := range fields {
		var err error
		switch {
		case k == "id":
			err = json.Unmarshal(v, &out.ID)
		case k == "previousEventId":
			err = json.Unmarshal(v, &out.PreviousEventID)
		case k == "type":
			err = json.Unmarshal(v, &out.Type)
		case k == "timestamp":
			out.Timestamp, err = parseTimestamp(v)
		case strings.HasSuffix(k, "EventDetails"):
			var d struct {
				Name         string `json:"name"`
				Resource     string `json:"resource"`
				ResourceType string `json:"resourceType"`
				Error        string `json:"error"`
				Cause        string `json:"cause"`
				Parameters   string `json:"parameters"`
			}
			err = json.Unmarshal(v, &d)
			out.Name, out.Resource, out.ResourceType, out.Error, out.Cause = d.Name, d.Resource, d.ResourceType, d.Error, d.Cause
			out.Parameters = d.Parameters
		}
		if err != nil {
			return fmt.Errorf("event field %s: %w", k, err)
		}
	}
	out.raw = append(json.RawMessage(nil), b...)
	*e = out
	return nil
}

// MarshalJSON returns the JSON the event was decoded from, unchanged.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.raw != nil {
		return e.raw, nil
	}
	m := map[string]any{"id": e.ID, "type": e.Type, "timestamp": e.Timestamp.Format(time.RFC3339Nano)}
	if e.PreviousEventID != 0 {
		m["previousEventId"] = e.PreviousEventID
	}
	return json.Marshal(m)
}

func parseTimestamp(v json.RawMessage) (time.Time, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return time.Time{}, err
		}
		return time.Parse(time.RFC3339Nano, s)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %s: neither epoch seconds nor RFC 3339", v)
	}
	sec, frac := math.Modf(f)
	// Round to milliseconds: Step Functions timestamps carry milliseconds and float64 cannot hold more exactly.
	ms := math.Round(frac * 1000)
	return time.Unix(int64(sec), int64(ms)*int64(time.Millisecond)).UTC(), nil
}
