package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// The transfer outcome events (docs/api.md, "Transfer outcome events"): every settled transfer publishes one to the
// application's bus, with the transfer resource as detail. The workflow publishes them (statemachine/transfer.asl.json,
// PublishCompleted and PublishFailed), and so does the reconciler for the settlements it makes.
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

// publishAttempts is how often publishOutcome sends an event whose entry failed (the SDK's own retryer already
// retries throttled and failed calls); after that the error goes back to Lambda, which retries the invocation and
// then sends the event to the dead-letter queue.
const publishAttempts = 3

// errEventNotPublished reports an outcome event EventBridge kept refusing.
var errEventNotPublished = errors.New("transfer: outcome event not published")

// publishOutcome publishes the outcome event of a settled record, reading it again so the detail is exactly what
// GET /transfers/{id} answers. It retries a failed entry with backoff and returns an error when the event could not
// be published.
func (r *Reconciler) publishOutcome(ctx context.Context, transferID string) error {
	if r.Events == nil {
		return nil
	}
	rec, err := r.Records.GetRecord(ctx, transferID)
	if err != nil {
		return fmt.Errorf("outcome event of %s: %w", transferID, err)
	}
	entry, ok := OutcomeEntry(NewResource(rec), r.EventBusName)
	if !ok {
		return nil
	}
	pause := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		out, err := r.Events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
		switch {
		case err != nil:
			return fmt.Errorf("outcome event of %s: %w", transferID, err)
		case out.FailedEntryCount == 0:
			r.Logger.InfoContext(ctx, "outcome event published", "transferId", transferID, "detailType", aws.ToString(entry.DetailType))
			return nil
		case attempt == publishAttempts:
			code := ""
			if len(out.Entries) > 0 {
				code = aws.ToString(out.Entries[0].ErrorCode)
			}
			return fmt.Errorf("outcome event of %s: %w (entry failed %d times, last with %s)", transferID, errEventNotPublished, attempt, code)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("outcome event of %s: %w", transferID, ctx.Err())
		case <-time.After(pause):
		}
		pause *= 2
	}
}
