package transfer

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// The transfer outcome events (docs/api.md, "Transfer outcome events"): every settled transfer publishes one to the
// application's bus, with the transfer resource as detail. The write that settles a transfer is the record of its
// event, and OutcomeRelay publishes it from the table's stream (the transactional outbox).
const (
	EventSource              = "transferflow.transfers"
	DetailTypeTransferDone   = "Transfer Completed"
	DetailTypeTransferFailed = "Transfer Failed"
)

// eventPublisher sends events to EventBridge (*eventbridge.Client satisfies it).
type eventPublisher interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// OutcomeEntry is the PutEvents entry of a settled transfer's outcome event on bus. ok is false for a transfer that
// is not settled.
func OutcomeEntry(res Resource, bus string) (entry ebtypes.PutEventsRequestEntry, ok bool) {
	var dt string
	switch res.Status {
	case ledger.StatusCompleted:
		dt = DetailTypeTransferDone
	case ledger.StatusFailed:
		dt = DetailTypeTransferFailed
	default:
		return ebtypes.PutEventsRequestEntry{}, false
	}
	detail, err := json.Marshal(res)
	if err != nil {
		return ebtypes.PutEventsRequestEntry{}, false
	}
	return ebtypes.PutEventsRequestEntry{EventBusName: aws.String(bus), Source: aws.String(EventSource),
		DetailType: aws.String(dt), Detail: aws.String(string(detail)), Resources: []string{res.ExecutionArn}}, true
}
