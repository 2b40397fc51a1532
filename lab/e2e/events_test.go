package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// eventsLogGroup is where the template's rule keeps the outcome events on the local stack (TransferEventsLogGroup,
// with the stack name "local").
const eventsLogGroup = "/aws/events/local-transfers"

// outcome is an outcome event as the rule's log group keeps it.
type outcome struct {
	DetailType string         `json:"detail-type"`
	Source     string         `json:"source"`
	Resources  []string       `json:"resources"`
	Detail     map[string]any `json:"detail"`
}

// outcomeEvents reads every outcome event the stack's local EventBridge kept, through CloudWatch Logs'
// FilterLogEvents with the real SDK, as `transferctl events tail` does.
func (s *stack) outcomeEvents() []outcome {
	s.t.Helper()
	logs := cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Events),
		Credentials: aws.AnonymousCredentials{}})
	var out []outcome
	p := cloudwatchlogs.NewFilterLogEventsPaginator(logs, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(eventsLogGroup)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			s.t.Fatalf("filter log events: %v", err)
		}
		for _, e := range page.Events {
			var ev outcome
			if err := json.Unmarshal([]byte(aws.ToString(e.Message)), &ev); err != nil {
				s.t.Fatalf("event %s: %v", aws.ToString(e.Message), err)
			}
			out = append(out, ev)
		}
	}
	return out
}

// settledExecutions waits until no execution of the workflow is running, then returns them.
func (s *stack) settledExecutions(within time.Duration) []sfntypes.ExecutionListItem {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		list := s.executions()
		running := 0
		for _, e := range list {
			if e.Status == sfntypes.ExecutionStatusRunning {
				running++
			}
		}
		if running == 0 {
			return list
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d executions still running after %s", running, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eventsFor waits until the transfers have n outcome events in all, then returns each transfer's events.
func (s *stack) eventsFor(n int, within time.Duration) map[string][]outcome {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		evs := s.outcomeEvents()
		if len(evs) >= n {
			by := map[string][]outcome{}
			for _, ev := range evs {
				id, _ := ev.Detail["transferId"].(string)
				by[id] = append(by[id], ev)
			}
			return by
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d outcome events after %s, want %d\n%s", len(evs), within, n, tail(s.stderr.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkOutcome: the transfer has exactly one outcome event, of the right detail-type and source, whose detail is
// the resource GET /transfers/{id} answers, field for field.
func (s *stack) checkOutcome(by map[string][]outcome, id string) outcome {
	s.t.Helper()
	evs := by[id]
	if len(evs) != 1 {
		s.t.Fatalf("transfer %s has %d outcome events, want exactly one: %+v", id, len(evs), evs)
	}
	r := s.do(http.MethodGet, "/transfers/"+id, nil, nil)
	if r.Status != http.StatusOK {
		s.t.Fatalf("GET %s: %d", id, r.Status)
	}
	ev := evs[0]
	want := map[string]string{"COMPLETED": "Transfer Completed", "FAILED": "Transfer Failed"}[r.Body["status"].(string)]
	if ev.DetailType != want || ev.Source != "transferflow.transfers" {
		s.t.Errorf("transfer %s (%s): event %q from %q, want %q from transferflow.transfers", id, r.Body["status"], ev.DetailType, ev.Source, want)
	}
	if !reflect.DeepEqual(ev.Detail, r.Body) {
		a, _ := json.MarshalIndent(ev.Detail, "", "  ")
		b, _ := json.MarshalIndent(r.Body, "", "  ")
		s.t.Errorf("transfer %s: the event's detail differs from the API's resource\nevent: %s\napi:   %s", id, a, b)
	}
	return ev
}

// TestOutcomeEventsOnePerSettlement: a completed transfer and transfers failed for business reasons each publish
// exactly one outcome event, through the table's stream, whose detail is the transfer as the API shows it.
func TestOutcomeEventsOnePerSettlement(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	ids := map[string]string{}
	for name, body := range map[string]map[string]any{
		"completed":           withReference(transferBody("acc-alice", "acc-bob", 1250, "EUR"), "invoice 2026-118"),
		"insufficient funds":  transferBody("acc-bob", "acc-alice", 999999, "EUR"),
		"unknown destination": transferBody("acc-alice", "acc-ghost", 10, "EUR"),
		"currency mismatch":   transferBody("acc-alice", "acc-carol", 10, "EUR"),
	} {
		ids[name] = s.submitAccepted(name, "e2e-events-"+strings.ReplaceAll(name, " ", "-"), body)
	}
	for name, id := range ids {
		tr := s.waitTerminal(id, settle)
		if (name == "completed") != (tr["status"] == "COMPLETED") {
			t.Fatalf("%s: %v", name, tr)
		}
	}
	for _, e := range s.settledExecutions(settle) {
		if e.Status != sfntypes.ExecutionStatusSucceeded {
			t.Errorf("execution %s %s, want SUCCEEDED", aws.ToString(e.Name), e.Status)
		}
	}
	by := s.eventsFor(len(ids), settle)
	if n := len(s.outcomeEvents()); n != len(ids) {
		t.Errorf("%d outcome events for %d settlements", n, len(ids))
	}
	for name, id := range ids {
		ev := s.checkOutcome(by, id)
		if len(ev.Resources) != 1 || !strings.HasSuffix(ev.Resources[0], ":execution:TransferStateMachine:"+id) {
			t.Errorf("%s: resources %v, want the transfer's execution", name, ev.Resources)
		}
	}

	// The workflow publishes nothing: its settling write is the event's record. A completed transfer takes two
	// state transitions, a business failure three.
	for name, want := range map[string]int{"completed": 2, "insufficient funds": 3} {
		events, _ := s.history(ids[name])
		entered := 0
		for _, e := range events {
			if strings.HasSuffix(e["type"].(string), "StateEntered") {
				entered++
			}
			if d, _ := e["taskScheduledEventDetails"].(map[string]any); d["resourceType"] == "events" {
				t.Errorf("%s: the workflow schedules an EventBridge task: %v", name, d)
			}
		}
		if entered != want {
			t.Errorf("%s: %d states entered, want %d", name, entered, want)
		}
	}
}

func withReference(body map[string]any, ref string) map[string]any {
	body["reference"] = ref
	return body
}

// TestReconcilerSettlementPublishesItsEvent: a workflow that times out is settled by the reconciler, which publishes
// the transfer's one outcome event, TIMED_OUT, with the detail the API shows.
func TestReconcilerSettlementPublishesItsEvent(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--execution-timeout", "1s", "--fault", "credit:delay=2s:leg=CREDIT")
	id := s.submitAccepted("submit", "e2e-events-timeout", transferBody("acc-alice", "acc-bob", 900, "EUR"))
	tr := s.waitTerminal(id, settle)
	if f, _ := tr["failure"].(map[string]any); f["code"] != "TIMED_OUT" {
		t.Fatalf("transfer = %v, want FAILED TIMED_OUT", tr)
	}
	by := s.eventsFor(1, settle)
	time.Sleep(2 * time.Second) // the late credit is refused and settles nothing: still one event
	by = s.eventsFor(1, settle)
	ev := s.checkOutcome(by, id)
	if f, _ := ev.Detail["failure"].(map[string]any); f["code"] != "TIMED_OUT" {
		t.Errorf("event failure %v, want TIMED_OUT", ev.Detail["failure"])
	}
}

// TestRefusedEventIsPublishedLater: EventBridge refuses the outcome event six times (the local bus fails the entries
// of six calls); the relay reports it each time and the stream's mapping retries it until it is published, once.
// The workflow, which no longer publishes, succeeds at once.
func TestRefusedEventIsPublishedLater(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--fault", "events:failed-entry=InternalFailure:times=6")
	id := s.submitAccepted("submit", "e2e-events-unpublished", transferBody("acc-alice", "acc-bob", 700, "EUR"))
	s.waitCompleted("transfer", id)
	by := s.eventsFor(1, 2*settle)
	s.checkOutcome(by, id)
	list := s.settledExecutions(settle)
	if len(list) != 1 || list[0].Status != sfntypes.ExecutionStatusSucceeded {
		t.Fatalf("executions %+v, want one SUCCEEDED", list)
	}
	if a, b := s.balance("acc-alice"), s.balance("acc-bob"); a != 100000-700 || b != 5000+700 {
		t.Errorf("balances alice %d bob %d", a, b)
	}
}

// TestEventsTail: `transferctl events tail` against a stack prints the outcome events (text and JSON, which keeps
// the raw events), and --follow prints the next one as it comes, until interrupted.
func TestEventsTail(t *testing.T) {
	t.Parallel()
	bin := transferctlPath(t)
	s := startStack(t)
	env := append(os.Environ(), "TRANSFERCTL_ENDPOINT="+s.API, "TRANSFERCTL_EVENTS_ENDPOINT="+s.Events)
	ctl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("transferctl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	first := s.submit("e2e-tail-1", transferBody("acc-alice", "acc-bob", 1250, "EUR")).Body["transferId"].(string)
	s.waitTerminal(first, settle)
	s.eventsFor(1, settle)

	text := ctl("events", "tail")
	if !strings.Contains(text, "Transfer Completed") || !strings.Contains(text, first) || !strings.Contains(text, "1250 EUR") ||
		!strings.Contains(text, "acc-alice -> acc-bob") {
		t.Errorf("events tail:\n%s\nwant the completed transfer's line", text)
	}
	var raw []outcome
	if err := json.Unmarshal([]byte(ctl("events", "tail", "--output", "json")), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 || raw[0].DetailType != "Transfer Completed" || raw[0].Detail["transferId"] != first {
		t.Errorf("events tail --output json = %+v", raw)
	}

	follow := exec.Command(bin, "events", "tail", "--follow")
	follow.Env = env
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(want string) {
		t.Helper()
		timeout := time.After(settle)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("events tail --follow ended before printing %s", want)
				}
				if strings.Contains(line, want) {
					return
				}
			case <-timeout:
				t.Fatalf("events tail --follow printed no line with %s in %s", want, settle)
			}
		}
	}
	next(first)
	second := s.submit("e2e-tail-2", transferBody("acc-bob", "acc-alice", 999999, "EUR")).Body["transferId"].(string)
	next(second)
	_ = follow.Process.Signal(syscall.SIGINT)
	for range lines {
	}
	if err := follow.Wait(); err != nil {
		t.Errorf("events tail --follow after SIGINT: %v, want exit 0", err)
	}
}

// TestOutcomeEventsOfRefundedCredits: a credit refused by the function (its cause is the function's error JSON) and
// one refused by the Lambda service (a plain cause) end CREDIT_FAILED_REFUNDED; each outcome event's failure.message
// is the API's, word for word.
func TestOutcomeEventsOfRefundedCredits(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"credit:error=CreditRejected:leg=CREDIT", "credit:error=Lambda.ResourceNotFoundException:leg=CREDIT"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel() // each has its own stack
			s := startStack(t, "--fault", fault)
			id := s.submit("e2e-events-refund", transferBody("acc-alice", "acc-bob", 700, "EUR")).Body["transferId"].(string)
			tr := s.waitTerminal(id, settle)
			if f, _ := tr["failure"].(map[string]any); f["code"] != "CREDIT_FAILED_REFUNDED" {
				t.Fatalf("transfer = %v", tr)
			}
			s.settledExecutions(settle)
			ev := s.checkOutcome(s.eventsFor(1, settle), id)
			t.Logf("failure: %v", ev.Detail["failure"])
		})
	}
}
