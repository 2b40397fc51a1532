package sfnengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// EventBridgeAPI is what Options.EventBridge needs; *eventbridge.Client satisfies it. Like LambdaInvoker, its calls
// must return soon after their context is done.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Error names of the optimized EventBridge integration (arn:aws:states:::events:putEvents). AWS documents one:
// a response with FailedEntryCount > 0 fails the task with EventBridge.FailedEntry. A refused call is named, as the
// other optimized integrations name theirs, EventBridge. + the service's exception (EventBridge.InternalException,
// EventBridge.ThrottlingException, …); a call that got no answer from the service is EventBridge.SdkClientException.
const (
	EventBridgeFailedEntry    = "EventBridge.FailedEntry"
	EventBridgeSdkClientError = "EventBridge.SdkClientException"
)

// EventBridgeErrorName is the error name the optimized EventBridge integration reports for a PutEvents call refused
// with the wire error code: "EventBridge." + the code, with the "Exception" suffix the SDK exception classes carry.
func EventBridgeErrorName(code string) string {
	if !strings.HasSuffix(code, "Exception") {
		code += "Exception"
	}
	return "EventBridge." + code
}

// EventBridgeErrorNames returns the names the integration can report for PutEvents: EventBridge.FailedEntry, the
// client error, and one per exception EventBridge's PutEvents model declares or any JSON service answers with.
func EventBridgeErrorNames() []string {
	names := []string{EventBridgeFailedEntry, EventBridgeSdkClientError}
	for _, code := range []string{"InternalException", "ThrottlingException", "AccessDeniedException", "ValidationException",
		"ResourceNotFoundException", "LimitExceededException", "UnrecognizedClientException", "ServiceUnavailableException"} {
		names = append(names, EventBridgeErrorName(code))
	}
	return names
}

// eventsPutEvents runs arn:aws:states:::events:putEvents as AWS does: each entry's Detail, when an object, is sent
// as its JSON text; the execution's and the state machine's ARNs are appended to each entry's Resources; the result
// is PutEvents' answer ({"Entries":[{"EventId"}…],"FailedEntryCount":0}); an answer with failed entries fails the
// task with EventBridge.FailedEntry, the answer as the cause.
func eventsPutEvents(ctx context.Context, x *execution, params any) (any, *failure) {
	c := x.eng.opts.EventBridge
	if c == nil {
		return nil, &failure{Error: EventBridgeSdkClientError, Cause: "no EventBridge client is configured"}
	}
	in, f := putEventsInput(params, x.rec.Arn, x.rec.StateMachineArn)
	if f != nil {
		return nil, f
	}
	out, err := c.PutEvents(ctx, in)
	if err != nil {
		return nil, eventBridgeFailure(err)
	}
	entries := make([]any, 0, len(out.Entries))
	for _, e := range out.Entries {
		o := jsonvalue.NewObject(3)
		if e.EventId != nil {
			o.Set("EventId", *e.EventId)
		}
		if e.ErrorCode != nil {
			o.Set("ErrorCode", *e.ErrorCode)
		}
		if e.ErrorMessage != nil {
			o.Set("ErrorMessage", *e.ErrorMessage)
		}
		entries = append(entries, o)
	}
	res := jsonvalue.FromPairs("Entries", entries, "FailedEntryCount", json.Number(strconv.Itoa(int(out.FailedEntryCount))))
	if out.FailedEntryCount > 0 {
		return nil, &failure{Error: EventBridgeFailedEntry, Cause: marshal(res)}
	}
	return res, nil
}

// putEventsInput reads the task's Parameters ({"Entries": [{"Detail", "DetailType", "EventBusName", "Source",
// "Resources", "Time", "TraceHeader"}…]}) into a PutEvents request.
func putEventsInput(params any, executionArn, stateMachineArn string) (*eventbridge.PutEventsInput, *failure) {
	bad := func(format string, args ...any) *failure {
		return &failure{Error: ErrNameRuntime, Cause: "events:putEvents: " + fmt.Sprintf(format, args...)}
	}
	v, ok := jsonvalue.Lookup(params, "Entries")
	list, isList := v.([]any)
	if !ok || !isList {
		return nil, bad("Parameters.Entries must be an array of entries")
	}
	in := &eventbridge.PutEventsInput{Entries: make([]ebtypes.PutEventsRequestEntry, 0, len(list))}
	for i, item := range list {
		if !jsonvalue.IsObject(item) {
			return nil, bad("Entries[%d] must be an object", i)
		}
		var e ebtypes.PutEventsRequestEntry
		for _, k := range []string{"DetailType", "EventBusName", "Source", "TraceHeader"} {
			fv, present := jsonvalue.Lookup(item, k)
			if !present {
				continue
			}
			str, isStr := fv.(string)
			if !isStr {
				return nil, bad("Entries[%d].%s must be a string", i, k)
			}
			switch k {
			case "DetailType":
				e.DetailType = aws.String(str)
			case "EventBusName":
				e.EventBusName = aws.String(str)
			case "Source":
				e.Source = aws.String(str)
			case "TraceHeader":
				e.TraceHeader = aws.String(str)
			}
		}
		if d, present := jsonvalue.Lookup(item, "Detail"); present {
			if str, isStr := d.(string); isStr {
				e.Detail = aws.String(str)
			} else {
				e.Detail = aws.String(marshal(d))
			}
		}
		if t, present := jsonvalue.Lookup(item, "Time"); present {
			str, _ := t.(string)
			at, err := time.Parse(time.RFC3339, str)
			if err != nil {
				return nil, bad("Entries[%d].Time must be an RFC 3339 timestamp", i)
			}
			e.Time = aws.Time(at)
		}
		if r, present := jsonvalue.Lookup(item, "Resources"); present {
			rs, isList := r.([]any)
			if !isList {
				return nil, bad("Entries[%d].Resources must be an array of strings", i)
			}
			for _, x := range rs {
				str, isStr := x.(string)
				if !isStr {
					return nil, bad("Entries[%d].Resources must be an array of strings", i)
				}
				e.Resources = append(e.Resources, str)
			}
		}
		e.Resources = append(e.Resources, executionArn, stateMachineArn)
		in.Entries = append(in.Entries, e)
	}
	return in, nil
}

// eventBridgeFailure names a refused PutEvents call as the integration does, with the service's message as the cause.
func eventBridgeFailure(err error) *failure {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return &failure{Error: EventBridgeSdkClientError, Cause: "Unable to execute HTTP request: " + err.Error()}
	}
	return &failure{Error: EventBridgeErrorName(ae.ErrorCode()), Cause: fmt.Sprintf("%s (Service: EventBridge; Error Code: %s)",
		ae.ErrorMessage(), ae.ErrorCode())}
}
