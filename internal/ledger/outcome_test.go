package ledger

import (
	"errors"
	"testing"
)

// TestRecordOutcome walks recordOutcome's order on records as the leg's condition saw them, including one that
// satisfies every condition: only a record that changed between the check and its image (or the read that stands
// for a missing image) can, and nothing was decided, so the leg is tried again rather than refused.
func TestRecordOutcome(t *testing.T) {
	rec := Transfer{TransferID: "tr_1", Status: StatusInProgress, SourceAccountID: "src", DestinationAccountID: "dst",
		Amount: 5, Currency: "EUR", Legs: []string{LegDebit}}
	credit := LegRequest{TransferID: "tr_1", Leg: LegCredit, AccountID: "dst", Amount: 5, Currency: "EUR"}
	refund := LegRequest{TransferID: "tr_1", Leg: LegRefund, AccountID: "src", Amount: 5, Currency: "EUR"}
	debit := LegRequest{TransferID: "tr_1", Leg: LegDebit, AccountID: "src", Amount: 5, Currency: "EUR", DestinationAccountID: "dst"}
	with := func(change func(*Transfer)) Transfer {
		r := rec
		r.Legs = append([]string(nil), rec.Legs...)
		change(&r)
		return r
	}
	tests := []struct {
		name  string
		req   LegRequest
		rec   Transfer
		found bool
		want  error
	}{
		{"no record", credit, Transfer{}, false, ErrTransferNotInProgress},
		{"another transfer's record", credit, with(func(r *Transfer) { r.TransferID = "tr_2" }), true, ErrTransferNotInProgress},
		{"a REFUND after the CREDIT, record settled", refund, with(func(r *Transfer) { r.Status = StatusCompleted; r.Legs = append(r.Legs, LegCredit) }), true, ErrCreditApplied},
		{"settled", credit, with(func(r *Transfer) { r.Status = StatusFailed }), true, ErrTransferNotInProgress},
		{"another amount", credit, with(func(r *Transfer) { r.Amount = 6 }), true, ErrLegMismatch},
		{"another destination for the DEBIT", debit, with(func(r *Transfer) { r.DestinationAccountID = "other" }), true, ErrLegMismatch},
		{"a CREDIT before the DEBIT", credit, with(func(r *Transfer) { r.Legs = nil }), true, ErrDebitNotApplied},
		{"a REFUND before the DEBIT", refund, with(func(r *Transfer) { r.Legs = nil }), true, ErrDebitNotApplied},
		{"a CREDIT after the REFUND", credit, with(func(r *Transfer) { r.Legs = append(r.Legs, LegRefund) }), true, ErrRefundApplied},
		{"a CREDIT the record allows", credit, rec, true, errContended},
		{"a REFUND the record allows", refund, rec, true, errContended},
		{"a DEBIT the record allows", debit, with(func(r *Transfer) { r.Legs = nil }), true, errContended},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := recordOutcome(tt.req, tt.rec, tt.found); !errors.Is(err, tt.want) {
				t.Errorf("recordOutcome = %v, want %v", err, tt.want)
			}
		})
	}
}
