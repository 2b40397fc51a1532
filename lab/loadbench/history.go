package loadbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// newSFN returns a Step Functions client of the local stack's sfn endpoint.
func newSFN(endpoint string, hc *http.Client) *sfn.Client {
	return sfn.New(sfn.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
		HTTPClient:   hc,
	})
}

// histEvent is the part of an execution history event the analysis reads.
type histEvent struct {
	ID, Prev int64
	Type     string
	At       time.Time
	// ResourceType is a task's integration (lambda, dynamodb); Function the Lambda function a scheduled event
	// invokes.
	ResourceType, Function string
}

// execStats is what one execution's history says about it.
type execStats struct {
	// Transitions are the states entered plus the retries of task states (each attempt is a transition on AWS).
	Transitions int
	// LambdaInvocations are the LambdaFunctionScheduled events and the TaskScheduled events of resource type lambda.
	LambdaInvocations int
	// EventPublishes are the TaskScheduled events of resource type events (events:putEvents, one entry each: the
	// outcome event), a retried publish included.
	EventPublishes int
	// Durations are each Lambda invocation's started-to-ended time, by function.
	Durations map[string][]time.Duration
}

// analyzeHistory reads one execution's events, in history order.
func analyzeHistory(events []histEvent) execStats {
	st := execStats{Durations: map[string][]time.Duration{}}
	byID := make(map[int64]histEvent, len(events))
	ends := map[int64]histEvent{} // end event by the id of the started event it follows
	scheduled, taskEntered := 0, 0
	for _, e := range events {
		byID[e.ID] = e
		switch {
		case strings.HasSuffix(e.Type, "StateEntered"):
			st.Transitions++
			if e.Type == "TaskStateEntered" {
				taskEntered++
			}
		case e.Type == "TaskScheduled" || e.Type == "LambdaFunctionScheduled" || e.Type == "ActivityScheduled":
			scheduled++
			if e.Type == "LambdaFunctionScheduled" || e.ResourceType == "lambda" {
				st.LambdaInvocations++
			}
			if e.Type == "TaskScheduled" && e.ResourceType == "events" {
				st.EventPublishes++
			}
		case isLambdaEnd(e.Type):
			ends[e.Prev] = e
		}
	}
	st.Transitions += max(0, scheduled-taskEntered)

	var lastScheduled histEvent
	for i, e := range events {
		switch {
		case e.Type == "TaskScheduled" || e.Type == "LambdaFunctionScheduled":
			lastScheduled = e
		case e.Type == "LambdaFunctionStarted" || (e.Type == "TaskStarted" && (e.ResourceType == "lambda" || lastScheduled.ResourceType == "lambda")):
			fn := lastScheduled.Function
			if s, ok := byID[e.Prev]; ok && s.Function != "" {
				fn = s.Function
			}
			end, ok := ends[e.ID]
			if !ok {
				end, ok = nextLambdaEnd(events[i+1:])
			}
			if ok && fn != "" {
				st.Durations[fn] = append(st.Durations[fn], end.At.Sub(e.At))
			}
		}
	}
	return st
}

func isLambdaEnd(t string) bool {
	switch t {
	case "TaskSucceeded", "TaskFailed", "TaskTimedOut", "LambdaFunctionSucceeded", "LambdaFunctionFailed", "LambdaFunctionTimedOut":
		return true
	}
	return false
}

func nextLambdaEnd(events []histEvent) (histEvent, bool) {
	for _, e := range events {
		if isLambdaEnd(e.Type) {
			return e, true
		}
	}
	return histEvent{}, false
}

// functionName is the function a FunctionName or function ARN names: the part after ":function:", without a
// version or alias qualifier.
func functionName(s string) string {
	if _, rest, ok := strings.Cut(s, ":function:"); ok {
		s = rest
	}
	name, _, _ := strings.Cut(s, ":")
	return name
}

// fromSDK converts the SDK's history events.
func fromSDK(in []sfntypes.HistoryEvent) []histEvent {
	out := make([]histEvent, 0, len(in))
	for _, e := range in {
		h := histEvent{ID: e.Id, Prev: e.PreviousEventId, Type: string(e.Type), At: aws.ToTime(e.Timestamp)}
		if d := e.TaskScheduledEventDetails; d != nil {
			h.ResourceType = aws.ToString(d.ResourceType)
			var p struct {
				FunctionName string `json:"FunctionName"`
			}
			if h.ResourceType == "lambda" && json.Unmarshal([]byte(aws.ToString(d.Parameters)), &p) == nil {
				h.Function = functionName(p.FunctionName)
			}
		}
		if d := e.TaskStartedEventDetails; d != nil {
			h.ResourceType = aws.ToString(d.ResourceType)
		}
		if d := e.LambdaFunctionScheduledEventDetails; d != nil {
			h.ResourceType, h.Function = "lambda", functionName(aws.ToString(d.Resource))
		}
		out = append(out, h)
	}
	return out
}

// historyOf reads an execution's whole history.
func historyOf(ctx context.Context, c *sfn.Client, arn string) ([]histEvent, error) {
	var all []sfntypes.HistoryEvent
	p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", arn, err)
		}
		all = append(all, page.Events...)
	}
	return fromSDK(all), nil
}

// histories adds up the histories of arns: transitions and Lambda invocations per execution, and all durations.
type histories struct {
	n           int
	transitions int
	invocations int
	publishes   int
	durations   map[string][]time.Duration
}

func (h *histories) add(s execStats) {
	if h.durations == nil {
		h.durations = map[string][]time.Duration{}
	}
	h.n++
	h.transitions += s.Transitions
	h.invocations += s.LambdaInvocations
	h.publishes += s.EventPublishes
	for fn, ds := range s.Durations {
		h.durations[fn] = append(h.durations[fn], ds...)
	}
}

// plus returns h and o together.
func (h histories) plus(o histories) histories {
	out := histories{n: h.n + o.n, transitions: h.transitions + o.transitions, invocations: h.invocations + o.invocations,
		publishes: h.publishes + o.publishes, durations: map[string][]time.Duration{}}
	for _, m := range []map[string][]time.Duration{h.durations, o.durations} {
		for fn, ds := range m {
			out.durations[fn] = append(out.durations[fn], ds...)
		}
	}
	return out
}

// read fetches and adds the histories of arns.
func (h *histories) read(ctx context.Context, c *sfn.Client, arns []string) error {
	for _, arn := range arns {
		evs, err := historyOf(ctx, c, arn)
		if err != nil {
			return err
		}
		h.add(analyzeHistory(evs))
	}
	return nil
}
