package transfer

import (
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// TestFailureMessageIsNeverEmpty: a FAILED transfer's message explains its code and quotes the error that decided
// it, in words a support engineer can act on: a Lambda function's errorMessage rather than its error JSON.
func TestFailureMessageIsNeverEmpty(t *testing.T) {
	lambdaCause := `{"errorMessage":"account acc-nobody of transfer tr_x does not exist","errorType":"AccountNotFound"}`
	tests := []struct {
		name, code, stored, want string
	}{
		{"a Lambda error", "ACCOUNT_NOT_FOUND", ledger.Failure{Error: "AccountNotFound", Cause: lambdaCause}.JSON(),
			"an account of the transfer does not exist; no money moved (AccountNotFound: account acc-nobody of transfer tr_x does not exist)"},
		{"a refunded credit", "CREDIT_FAILED_REFUNDED", ledger.Failure{Error: "Sandbox.Timedout", Cause: `{"errorMessage":"Task timed out after 10.00 seconds","errorType":"Sandbox.Timedout"}`}.JSON(),
			"the destination could not be credited; the source was refunded (Sandbox.Timedout: Task timed out after 10.00 seconds)"},
		{"a workflow error with a plain cause", CodeWorkflowFailed, ledger.Failure{Error: "States.Runtime", Cause: "path $.x not found"}.JSON(),
			"the workflow failed; the transfer was settled from the ledger and any debit refunded (States.Runtime: path $.x not found)"},
		{"an error without a cause", CodeTimedOut, ledger.Failure{Error: "States.Timeout"}.JSON(),
			"the workflow timed out; the transfer was settled from the ledger and any debit refunded (States.Timeout)"},
		{"nothing stored", "INSUFFICIENT_FUNDS", "", "the source account's balance does not cover the amount; no money moved"},
		{"an unknown code", "SOMETHING_NEW", "", "the transfer failed (SOMETHING_NEW)"},
		{"stored text that is not JSON", CodeAborted, "garbage", "the workflow was stopped; the transfer was settled from the ledger and any debit refunded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewResource(ledger.Transfer{Status: ledger.StatusFailed, FailureCode: tt.code, FailureError: tt.stored})
			if r.Failure == nil || r.Failure.Code != tt.code || r.Failure.Message != tt.want {
				t.Errorf("failure = %+v\nwant message %q", r.Failure, tt.want)
			}
		})
	}
	long := NewResource(ledger.Transfer{Status: ledger.StatusFailed, FailureCode: CodeWorkflowFailed,
		FailureError: ledger.Failure{Error: "States.Runtime", Cause: strings.Repeat("é", 1000)}.JSON()})
	if n := len([]rune(long.Failure.Message)); n > 450 {
		t.Errorf("a long cause gives a %d-character message; it must be cut", n)
	}
	if r := NewResource(ledger.Transfer{Status: ledger.StatusCompleted, FailureError: "x"}); r.Failure != nil {
		t.Errorf("a completed transfer has failure %+v", r.Failure)
	}
}
