package transfer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// OutcomeRelay is the outcome-relay function: the transactional outbox's relay. The write that settles a transfer
// (the CREDIT's transaction, the workflow's MarkFailed, the reconciler's settlement) is the record of its outcome
// event; the table's stream carries it here, filtered to the change from unsettled to COMPLETED or FAILED
// (template.yaml, OutcomeRelayFunction's event), and the relay publishes the transfer resource, rendered from the
// stream's new image exactly as GET /transfers/{id} renders the record, to the application's bus.
//
// A record whose event EventBridge did not take is reported in the response's batchItemFailures, so that Lambda
// retries from it (the records before it are done); a PutEvents call that fails reports every record not yet
// published. Lambda keeps retrying, in order, until the record is older than the mapping's MaximumRecordAgeInSeconds;
// then it sends the batch's description to the dead-letter queue (docs/operations.md). Publishing twice is harmless:
// consumers deduplicate on detail.transferId and detail.status.
type OutcomeRelay struct {
	Events       eventPublisher
	EventBusName string
	Logger       *slog.Logger
}

// maxPutEntries is how many entries one PutEvents call takes.
const maxPutEntries = 10

// relayed is one stream record's outcome event.
type relayed struct {
	seq, transferID string
	entry           ebtypes.PutEventsRequestEntry
}

// Handle publishes the outcome events of a batch of stream records.
func (r *OutcomeRelay) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	logger := r.Logger // its handler adds the Lambda request id from ctx (lambdacontext.NewLogHandler)
	var out []relayed
	for _, rec := range ev.Records {
		item, ok, err := settledImage(rec)
		if err != nil {
			// A settled record the relay cannot read would block the shard forever if reported: it is logged (with
			// the keys, never the image) and skipped, and the transfer stays readable at GET /transfers/{id}.
			logger.ErrorContext(ctx, "stream record not relayed", "eventId", rec.EventID, "sequenceNumber", rec.Change.SequenceNumber, "error", err.Error())
			continue
		}
		if !ok {
			continue
		}
		entry, ok := OutcomeEntry(NewResource(item), r.EventBusName)
		if !ok {
			continue
		}
		out = append(out, relayed{seq: rec.Change.SequenceNumber, transferID: item.TransferID, entry: entry})
	}
	var resp events.DynamoDBEventResponse
	for start := 0; start < len(out); start += maxPutEntries {
		chunk := out[start:min(start+maxPutEntries, len(out))]
		entries := make([]ebtypes.PutEventsRequestEntry, len(chunk))
		for i, c := range chunk {
			entries[i] = c.entry
		}
		res, err := r.Events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		if err != nil {
			logger.WarnContext(ctx, "outcome events not published; Lambda retries them", "events", len(out)-start, "error", err.Error())
			for _, c := range out[start:] {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: c.seq})
			}
			return resp, nil
		}
		for i, c := range chunk {
			if i < len(res.Entries) && res.Entries[i].ErrorCode == nil {
				logger.InfoContext(ctx, "outcome event published", "transferId", c.transferID, "detailType", aws.ToString(c.entry.DetailType))
				continue
			}
			code := "missing entry"
			if i < len(res.Entries) {
				code = aws.ToString(res.Entries[i].ErrorCode)
			}
			logger.WarnContext(ctx, "outcome event not published; Lambda retries it", "transferId", c.transferID, "errorCode", code)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: c.seq})
		}
	}
	return resp, nil
}

// settledImage reads a stream record's new image when the record settles a transfer: a MODIFY of a transfer record
// from a status that is not final to COMPLETED or FAILED. The event source mapping's filter lets only those through;
// the relay checks again, so that a mapping without the filter publishes nothing else.
func settledImage(rec events.DynamoDBEventRecord) (ledger.Transfer, bool, error) {
	if rec.EventName != string(events.DynamoDBOperationTypeModify) {
		return ledger.Transfer{}, false, nil
	}
	final := func(img map[string]events.DynamoDBAttributeValue) bool {
		s, ok := img["status"]
		return ok && s.DataType() == events.DataTypeString && (s.String() == ledger.StatusCompleted || s.String() == ledger.StatusFailed)
	}
	newImage, oldImage := rec.Change.NewImage, rec.Change.OldImage
	if sk, ok := newImage["sk"]; !ok || sk.DataType() != events.DataTypeString || sk.String() != ledger.SortKeyTransfer {
		return ledger.Transfer{}, false, nil
	}
	if !final(newImage) || final(oldImage) {
		return ledger.Transfer{}, false, nil
	}
	item, err := streamItem(newImage)
	if err != nil {
		return ledger.Transfer{}, false, err
	}
	var t ledger.Transfer
	if err := attributevalue.UnmarshalMap(item, &t); err != nil {
		return ledger.Transfer{}, false, fmt.Errorf("new image: %w", err)
	}
	if t.TransferID == "" {
		return ledger.Transfer{}, false, errors.New("new image: no transferId")
	}
	return t, true, nil
}

// streamItem converts a stream image, as Lambda delivers it, to the SDK's attribute values, so that the record is
// decoded by the same rules as a read from the table.
func streamItem(img map[string]events.DynamoDBAttributeValue) (map[string]ddbtypes.AttributeValue, error) {
	item := make(map[string]ddbtypes.AttributeValue, len(img))
	for k, v := range img {
		av, err := streamValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		item[k] = av
	}
	return item, nil
}

func streamValue(v events.DynamoDBAttributeValue) (ddbtypes.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &ddbtypes.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &ddbtypes.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBoolean:
		return &ddbtypes.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &ddbtypes.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeBinary:
		return &ddbtypes.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeStringSet:
		return &ddbtypes.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &ddbtypes.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &ddbtypes.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		list := v.List()
		out := make([]ddbtypes.AttributeValue, len(list))
		for i, e := range list {
			av, err := streamValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = av
		}
		return &ddbtypes.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m, err := streamItem(v.Map())
		if err != nil {
			return nil, err
		}
		return &ddbtypes.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown attribute value type %d", v.DataType())
}
