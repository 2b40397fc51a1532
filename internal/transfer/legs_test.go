package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/transferflow/orchestrator/internal/ledger"
)

const validTransferID = "tr_aaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb"

// applierFunc adapts a function to legApplier.
type applierFunc func(ctx context.Context, req ledger.LegRequest, now time.Time) (ledger.Entry, bool, error)

func (f applierFunc) ApplyLeg(ctx context.Context, req ledger.LegRequest, now time.Time) (ledger.Entry, bool, error) {
	return f(ctx, req, now)
}

// Completion is never needed by the tests that use applierFunc (no replayed CREDIT with settle).
func (f applierFunc) Completion(context.Context, string, time.Time) (string, error) {
	return "", errors.New("applierFunc: Completion not expected")
}

// countingApplier fails the test's expectations if called when it should not be; calls counts the calls.
type countingApplier struct {
	calls int
	err   error
}

func (c *countingApplier) ApplyLeg(_ context.Context, req ledger.LegRequest, now time.Time) (ledger.Entry, bool, error) {
	c.calls++
	if c.err != nil {
		return ledger.Entry{}, false, c.err
	}
	return ledger.Entry{TransferID: req.TransferID, Leg: req.Leg, AccountID: req.AccountID, Amount: req.Amount,
		Currency: req.Currency, ExecutionArn: req.ExecutionArn, CreatedAt: now.Format(ledger.TimeLayout)}, false, nil
}

// Completion is never needed by the tests that use countingApplier (it replays nothing).
func (c *countingApplier) Completion(context.Context, string, time.Time) (string, error) {
	return "", errors.New("countingApplier: Completion not expected")
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// payload is a task input for leg; a DEBIT names its destination, as the ASL's Debit state sends it.
func payload(leg string, amount string) string {
	destination := ""
	if leg == "DEBIT" {
		destination = `,"destinationAccountId":"acc-bob"`
	}
	return fmt.Sprintf(`{"leg":%q,"transferId":%q,"accountId":"acc-alice"%s,"amount":%s,"currency":"EUR","executionArn":"arn:aws:states:us-east-1:123456789012:execution:transfer:x"}`,
		leg, validTransferID, destination, amount)
}

// TestMalformedInputIsInvalidLegInput sends task inputs through the Lambda runtime's own handler adapter, as Step
// Functions would: each is refused as InvalidLegInput (the name the runtime reports), and nothing is applied.
func TestMalformedInputIsInvalidLegInput(t *testing.T) {
	tests := []struct {
		name    string
		credit  bool
		payload string
		reason  string
	}{
		{"fractional amount", false, payload("DEBIT", "12.5"), "cannot unmarshal number 12.5"},
		{"amount as a string", false, payload("DEBIT", `"12"`), "cannot unmarshal string"},
		{"amount in exponent form", false, payload("DEBIT", "1e3"), "cannot unmarshal number 1e3"},
		{"zero amount", false, payload("DEBIT", "0"), "amount must be a positive integer"},
		{"negative amount", true, payload("CREDIT", "-5"), "amount must be a positive integer"},
		{"unknown leg", true, payload("CHARGEBACK", "5"), `applies CREDIT and REFUND legs, not "CHARGEBACK"`},
		{"credit sent to the debit function", false, payload("CREDIT", "5"), `applies DEBIT legs, not "CREDIT"`},
		{"debit sent to the credit function", true, payload("DEBIT", "5"), `applies CREDIT and REFUND legs, not "DEBIT"`},
		{"unknown field", false, strings.Replace(payload("DEBIT", "5"), `"leg"`, `"memo":"x","leg"`, 1), `unknown field "memo"`},
		{"missing fields", true, `{"leg":"REFUND","amount":5}`, "transferId is required; accountId is required; currency is required; executionArn is required"},
		{"bad transfer id", false, strings.Replace(payload("DEBIT", "5"), validTransferID, "tr_nope", 1), "transferId is not a transfer id"},
		{"not an object", true, `[1,2]`, "cannot unmarshal array"},
		{"amount over the maximum", false, payload("DEBIT", "100000000001"), "amount must be at most 100000000000"},
		{"lower-case currency", true, strings.Replace(payload("REFUND", "5"), `"EUR"`, `"eur"`, 1), "currency must be three upper-case letters"},
		{"account id with a slash", true, strings.Replace(payload("CREDIT", "5"), "acc-alice", "acc/alice", 1), "accountId must be 1 to 64 characters"},
		{"debit to its own source", false, strings.Replace(payload("DEBIT", "5"), `"acc-bob"`, `"acc-alice"`, 1), "destinationAccountId must differ from accountId"},
		{"destination with a slash", false, strings.Replace(payload("DEBIT", "5"), `"acc-bob"`, `"acc/bob"`, 1), "destinationAccountId must be 1 to 64 characters"},
		{"credit with a destination", true, strings.Replace(payload("CREDIT", "5"), `"accountId":"acc-alice"`, `"accountId":"acc-alice","destinationAccountId":"acc-bob"`, 1), "destinationAccountId is only for a DEBIT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &countingApplier{}
			var h lambda.Handler
			if tt.credit {
				h = lambda.NewHandler((&Credit{Ledger: fake, Now: time.Now, Logger: discardLogger()}).Handle)
			} else {
				h = lambda.NewHandler((&Debit{Ledger: fake, Now: time.Now, Logger: discardLogger()}).Handle)
			}
			_, err := h.Invoke(context.Background(), []byte(tt.payload))
			wantErrorType(t, err, "InvalidLegInput")
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error = %q, want it to say %q", err, tt.reason)
			}
			if fake.calls != 0 {
				t.Errorf("the ledger was called %d times, want 0", fake.calls)
			}
		})
	}
}

// TestLedgerErrorsBecomeWorkflowErrors checks the translation of each ledger outcome into the unwrapped type the
// state machine matches, whatever context the ledger wrapped around it.
func TestLedgerErrorsBecomeWorkflowErrors(t *testing.T) {
	tests := []struct {
		name string
		leg  string
		err  error
		want string
	}{
		{"insufficient funds", "DEBIT", ledger.ErrInsufficientFunds, "InsufficientFunds"},
		{"account not found", "CREDIT", ledger.ErrAccountNotFound, "AccountNotFound"},
		{"currency mismatch", "DEBIT", ledger.ErrCurrencyMismatch, "CurrencyMismatch"},
		{"fenced", "REFUND", ledger.ErrTransferNotInProgress, "TransferNotInProgress"},
		{"no debit", "CREDIT", ledger.ErrDebitNotApplied, "DebitNotApplied"},
		{"refund after credit", "REFUND", ledger.ErrCreditApplied, "CreditAlreadyApplied"},
		{"credit after refund", "CREDIT", ledger.ErrRefundApplied, "RefundAlreadyApplied"},
		{"mismatch", "CREDIT", ledger.ErrLegMismatch, "InvalidLegInput"},
		{"unavailable", "DEBIT", ledger.ErrUnavailable, "TransientError"},
		{"deadline", "DEBIT", context.DeadlineExceeded, "TransientError"},
		{"unclassified", "DEBIT", errors.New("decode stored entry: boom"), "TransientError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &countingApplier{err: fmt.Errorf("%s %s: %w", strings.ToLower(tt.leg), validTransferID, tt.err)}
			in := LegInput{Leg: tt.leg, TransferID: validTransferID, AccountID: "acc", Amount: 5, Currency: "EUR", ExecutionArn: "arn"}
			if tt.leg == "DEBIT" {
				in.DestinationAccountID = "dst"
			}
			var err error
			if tt.leg == "DEBIT" {
				_, err = (&Debit{Ledger: fake, Now: time.Now, Logger: discardLogger()}).Handle(context.Background(), in)
			} else {
				_, err = (&Credit{Ledger: fake, Now: time.Now, Logger: discardLogger()}).Handle(context.Background(), in)
			}
			wantErrorType(t, err, tt.want)
			if _, ok := workflowErrors[tt.want]; !ok {
				t.Errorf("%s is not a workflow error", tt.want)
			}
		})
	}
}

// TestAccountErrorsNameTheAccount: a DEBIT refused because of its destination names the destination, not the
// source it was asked to debit, so the transfer's failure message says which account is wrong.
func TestAccountErrorsNameTheAccount(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"unknown destination", &ledger.AccountError{AccountID: "dst", Err: ledger.ErrAccountNotFound},
			&AccountNotFound{TransferID: validTransferID, AccountID: "dst"}},
		{"destination in another currency", &ledger.AccountError{AccountID: "dst", Currency: "USD", Err: ledger.ErrCurrencyMismatch},
			&CurrencyMismatch{TransferID: validTransferID, AccountID: "dst", Currency: "EUR"}},
		{"unknown source", &ledger.AccountError{AccountID: "src", Err: ledger.ErrAccountNotFound},
			&AccountNotFound{TransferID: validTransferID, AccountID: "src"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &countingApplier{err: fmt.Errorf("debit %s: %w", validTransferID, tt.err)}
			in := LegInput{Leg: "DEBIT", TransferID: validTransferID, AccountID: "src", DestinationAccountID: "dst",
				Amount: 5, Currency: "EUR", ExecutionArn: "arn"}
			_, err := (&Debit{Ledger: fake, Now: time.Now, Logger: discardLogger()}).Handle(context.Background(), in)
			if fmt.Sprintf("%#v", err) != fmt.Sprintf("%#v", tt.want) {
				t.Errorf("error = %#v, want %#v", err, tt.want)
			}
		})
	}
}

// TestHandleLogsWithoutBalances checks the success log: transferId, leg and replayed, and no balance or payload.
func TestHandleLogsWithoutBalances(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	oldBalance := int64(987654) // an entry written before legs stopped recording balances
	fake := applierFunc(func(_ context.Context, req ledger.LegRequest, _ time.Time) (ledger.Entry, bool, error) {
		return ledger.Entry{TransferID: req.TransferID, Leg: req.Leg, AccountID: req.AccountID, Amount: req.Amount, BalanceAfter: &oldBalance}, true, nil
	})
	in := LegInput{Leg: "REFUND", TransferID: validTransferID, AccountID: "acc", Amount: 5, Currency: "EUR", ExecutionArn: "arn"}
	res, err := (&Credit{Ledger: fake, Now: time.Now, Logger: logger}).Handle(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.BalanceAfter == nil || *res.BalanceAfter != 987654 {
		t.Errorf("result balanceAfter = %v, want 987654 from the (old) entry", res.BalanceAfter)
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if rec["transferId"] != validTransferID || rec["leg"] != "REFUND" || rec["replayed"] != true {
		t.Errorf("log = %v, want transferId, leg and replayed", rec)
	}
	if strings.Contains(buf.String(), "987654") {
		t.Errorf("log %q contains the balance", buf.String())
	}
}

func TestLoadLedgerConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    LedgerConfig
		wantErr string
	}{
		{"table set", map[string]string{"TABLE_NAME": "transfers"}, LedgerConfig{TableName: "transfers", MetricsNamespace: "TransferOrchestrator"}, ""},
		{"table missing", map[string]string{}, LedgerConfig{}, "TABLE_NAME is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadLedgerConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// completionLedger replays every leg (the entry was written before) and answers Completion with at or err.
type completionLedger struct {
	at    string
	err   error
	calls int
}

func (c *completionLedger) ApplyLeg(_ context.Context, req ledger.LegRequest, _ time.Time) (ledger.Entry, bool, error) {
	return ledger.Entry{TransferID: req.TransferID, Leg: req.Leg, AccountID: req.AccountID, Amount: req.Amount,
		Currency: req.Currency, CreatedAt: "2026-11-21T10:00:00.000Z"}, true, nil
}

func (c *completionLedger) Completion(context.Context, string, time.Time) (string, error) {
	c.calls++
	return c.at, c.err
}

// TestSettlingCreditReportsWhenItSettled: a settling CREDIT's result carries completedAt: on the first call the
// entry's own time (the transaction settled the record), on a repeat what the ledger says the record holds; a record
// that is not COMPLETED is TransferNotInProgress. A CREDIT without settle asks nothing of the record.
func TestSettlingCreditReportsWhenItSettled(t *testing.T) {
	in := LegInput{Leg: "CREDIT", TransferID: validTransferID, AccountID: "dst", Amount: 5, Currency: "EUR", ExecutionArn: "arn", Settle: true}

	first := &countingApplier{}
	now := time.Date(2026, 11, 21, 10, 0, 1, 0, time.UTC)
	res, err := (&Credit{Ledger: first, Now: func() time.Time { return now }, Logger: discardLogger()}).Handle(context.Background(), in)
	if err != nil || res.CompletedAt == "" || res.CompletedAt != res.CreatedAt {
		t.Errorf("first call: completedAt %q createdAt %q, %v; want the entry's time", res.CompletedAt, res.CreatedAt, err)
	}

	replayed := &completionLedger{at: "2026-11-21T10:00:00.500Z"}
	res, err = (&Credit{Ledger: replayed, Now: time.Now, Logger: discardLogger()}).Handle(context.Background(), in)
	if err != nil || res.CompletedAt != replayed.at || replayed.calls != 1 {
		t.Errorf("repeat: completedAt %q after %d Completion calls, %v; want %q", res.CompletedAt, replayed.calls, err, replayed.at)
	}

	gone := &completionLedger{err: fmt.Errorf("x: %w", ledger.ErrTransferNotInProgress)}
	if _, err := (&Credit{Ledger: gone, Now: time.Now, Logger: discardLogger()}).Handle(context.Background(), in); !isType[*TransferNotInProgress](err) {
		t.Errorf("repeat on a record not COMPLETED: %#v, want *TransferNotInProgress", err)
	}

	plain := &completionLedger{}
	in.Settle = false
	if res, err := (&Credit{Ledger: plain, Now: time.Now, Logger: discardLogger()}).Handle(context.Background(), in); err != nil || res.CompletedAt != "" || plain.calls != 0 {
		t.Errorf("CREDIT without settle: completedAt %q after %d Completion calls, %v; want neither", res.CompletedAt, plain.calls, err)
	}
}

// isType reports whether err is exactly of type T (the workflow matches the type's name).
func isType[T error](err error) bool {
	_, ok := err.(T)
	return ok
}

// TestLegInputAuthority: the DEBIT's authority becomes the ledger's owner or operator, never both; a malformed one is
// an *InvalidLegInput, and only a DEBIT may carry one.
func TestLegInputAuthority(t *testing.T) {
	base := LegInput{Leg: ledger.LegDebit, TransferID: validTransferID, AccountID: "src", DestinationAccountID: "dst",
		Amount: 5, Currency: "EUR", ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:m:x"}
	tests := []struct {
		name, leg, authority string
		owner                string
		operator, invalid    bool
	}{
		{name: "owner", authority: "owner:iam:arn:aws:iam::123456789012:user/alice", owner: "iam:arn:aws:iam::123456789012:user/alice"},
		{name: "operator", authority: "operator", operator: true},
		{name: "none: refused later as a missing account", authority: ""},
		{name: "an owner prefix alone", authority: "owner:", invalid: true},
		{name: "something else", authority: "admin", invalid: true},
		{name: "on a CREDIT", leg: ledger.LegCredit, authority: "operator", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			in.Authority = tt.authority
			if tt.leg != "" {
				in.Leg, in.DestinationAccountID = tt.leg, ""
			}
			err := in.Validate()
			var inv *InvalidLegInput
			if tt.invalid != errors.As(err, &inv) {
				t.Fatalf("Validate() = %v, want invalid %v", err, tt.invalid)
			}
			if tt.invalid {
				return
			}
			if r := in.request(); r.Owner != tt.owner || r.Operator != tt.operator {
				t.Errorf("request owner %q operator %v, want %q %v", r.Owner, r.Operator, tt.owner, tt.operator)
			}
		})
	}
}
