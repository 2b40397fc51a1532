package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// TestLambdaConcurrencyThrottles runs the stack with one unit of Lambda concurrency for the whole account. While a
// slow credit holds it, API Gateway's invocation of the orchestrator is throttled (502: Lambda refused the
// invocation, which API Gateway answers with the template's DEFAULT_5XX gateway response), and so is a workflow's Debit task, with Lambda.TooManyRequestsException,
// which the workflow's Retry retries until the credit has given the unit back. Afterwards every transfer completes.
func TestLambdaConcurrencyThrottles(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--lambda-concurrency", "1", "--fault", "credit:delay=4s:times=1")
	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.SFN),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	ctx := context.Background()

	first := s.submitAccepted("first submit", "e2e-concurrency-1", transferBody("acc-alice", "acc-bob", 100, "EUR"))
	// Wait, through the Step Functions API (which runs no function), for the first transfer's slow Credit task.
	execs := s.executions()
	if len(execs) != 1 {
		t.Fatalf("executions = %d, want 1", len(execs))
	}
	deadline := time.Now().Add(settle)
	for !s.entered(ctx, client, *execs[0].ExecutionArn, "Credit") {
		if time.Now().After(deadline) {
			t.Fatalf("the first transfer never reached Credit\n%s", tail(s.stderr.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Read-only requests until one is throttled: the credit holds the account's only unit for seconds.
	for {
		r := s.do(http.MethodGet, "/transfers/tr_probe", nil, nil)
		if r.Status == http.StatusBadGateway {
			// Lambda refused the invocation: template.yaml's DEFAULT_5XX gateway response, as on AWS.
			if r.Header.Get("Content-Type") != "application/problem+json" || r.Body["code"] != "BAD_GATEWAY" ||
				r.Body["detail"] != "Internal server error" || r.Body["status"] != 502.0 {
				t.Errorf("throttled API answer: %v %s", r.Header, r.RawBody)
			}
			break
		}
		if r.Status != http.StatusNotFound || time.Now().After(deadline) {
			t.Fatalf("probe: %d %s, want 404 until the orchestrator is throttled", r.Status, r.RawBody)
		}
	}
	// A workflow started now finds no concurrency for its Debit task.
	started, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(stateMachineArn),
		Input: aws.String(`{"transferId":"tr_throttled","sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR","authority":"owner:iam:` + localCaller + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: started.ExecutionArn})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != sfntypes.ExecutionStatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the throttled workflow did not end")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its history: the Debit task failed with the throttle, and the Retry scheduled it again.
	var throttled, scheduledAfter bool
	for _, ev := range s.historyOf(ctx, client, *started.ExecutionArn) {
		switch {
		case ev.Type == sfntypes.HistoryEventTypeTaskFailed && aws.ToString(ev.TaskFailedEventDetails.Error) == "Lambda.TooManyRequestsException":
			throttled = true
		case ev.Type == sfntypes.HistoryEventTypeTaskScheduled && throttled:
			scheduledAfter = true
		}
	}
	if !throttled || !scheduledAfter {
		t.Errorf("history: throttled %v, retried after it %v; want both", throttled, scheduledAfter)
	}

	// The unit is back: both the first transfer and a new one complete. The new one is sent as a client sends it,
	// again with its key after a 502: the one unit is also the outcome relay's, which the first transfer's settlement
	// invokes, and the reconciler's, which the throttled workflow's failure invokes, and either may hold it a moment.
	if tr := s.waitTerminal(first, settle); tr["status"] != "COMPLETED" {
		t.Errorf("first transfer: %v", tr)
	}
	r := s.submit("e2e-concurrency-2", transferBody("acc-alice", "acc-bob", 200, "EUR"))
	for r.Status == http.StatusBadGateway && time.Now().Before(deadline.Add(settle)) {
		time.Sleep(100 * time.Millisecond)
		r = s.submit("e2e-concurrency-2", transferBody("acc-alice", "acc-bob", 200, "EUR"))
	}
	if r.Status != http.StatusAccepted {
		t.Fatalf("second submit: %d %s", r.Status, r.RawBody)
	}
	second := r.Body["transferId"].(string)
	if tr := s.waitTerminal(second, settle); tr["status"] != "COMPLETED" {
		t.Errorf("second transfer: %v", tr)
	}
}

// historyOf reads an execution's whole history through the Step Functions API.
func (s *stack) historyOf(ctx context.Context, client *sfn.Client, arn string) []sfntypes.HistoryEvent {
	s.t.Helper()
	var out []sfntypes.HistoryEvent
	p := sfn.NewGetExecutionHistoryPaginator(client, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			s.t.Fatalf("history of %s: %v", arn, err)
		}
		out = append(out, page.Events...)
	}
	return out
}

// entered reports whether the execution has entered the named state.
func (s *stack) entered(ctx context.Context, client *sfn.Client, arn, state string) bool {
	for _, ev := range s.historyOf(ctx, client, arn) {
		if ev.StateEnteredEventDetails != nil && aws.ToString(ev.StateEnteredEventDetails.Name) == state {
			return true
		}
	}
	return false
}
