package stack

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/transferflow/orchestrator/localaws/lambdahost"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

func TestParseFlags(t *testing.T) {
	c, err := ParseFlags([]string{"--api-addr", ":0", "--fault", "debit:error=Lambda.ServiceException:times=2",
		"--fault", "credit:delay=5s", "--execution-timeout", "2s", "--sweep-interval", "1s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.APIAddr != ":0" || c.SFNAddr != "127.0.0.1:8083" || len(c.Faults) != 2 || c.ExecutionTimeout != 2*time.Second ||
		c.SweepInterval != time.Second || c.Seed != "events/local-accounts.json" || c.Metrics {
		t.Errorf("config = %+v", c)
	}
	if c.HistoryRetention != 24*time.Hour || c.HistoryMaxExecutions != 1000 {
		t.Errorf("history defaults in memory: %s, %d; want 24h and 1000", c.HistoryRetention, c.HistoryMaxExecutions)
	}
	if c, err := ParseFlags([]string{"--data-dir", "x"}, io.Discard); err != nil || c.HistoryMaxExecutions != 10000 {
		t.Errorf("history default with --data-dir: %d, %v; want 10000", c.HistoryMaxExecutions, err)
	}
	if c, err := ParseFlags([]string{"--metrics"}, io.Discard); err != nil || !c.Metrics {
		t.Errorf("--metrics: %+v, %v", c, err)
	}
	if c.LambdaConcurrency != 1000 || c.PprofAddr != "" {
		t.Errorf("defaults: --lambda-concurrency %d, --pprof-addr %q; want 1000 and off", c.LambdaConcurrency, c.PprofAddr)
	}
	if c, err := ParseFlags([]string{"--lambda-concurrency", "5", "--pprof-addr", "127.0.0.1:0"}, io.Discard); err != nil ||
		c.LambdaConcurrency != 5 || c.PprofAddr != "127.0.0.1:0" {
		t.Errorf("--lambda-concurrency 5 --pprof-addr 127.0.0.1:0: %+v, %v", c, err)
	}
	c, err = ParseFlags([]string{"--history-retention", "0", "--history-max-executions", "50"}, io.Discard)
	if err != nil || c.HistoryRetention != 0 || c.HistoryMaxExecutions != 50 {
		t.Errorf("--history-retention 0 --history-max-executions 50: %s, %d, %v", c.HistoryRetention, c.HistoryMaxExecutions, err)
	}
	for _, bad := range [][]string{{"--fault", "debit"}, {"--nope"}, {"extra"}, {"--history-retention", "1"}} {
		if _, err := ParseFlags(bad, io.Discard); err == nil {
			t.Errorf("ParseFlags(%v) accepted", bad)
		}
	}
}

// TestProjectTemplateWiring resolves the real template as the stack does: every function has a local runtime, the
// environment and substitutions name local resources, and the reconciler's rule and schedule compile.
func TestProjectTemplateWiring(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{tmpl: tmpl, names: namesWithStreams(t, tmpl), cfg: Config{}}
	fns, err := tmpl.Functions(s.env(), s.names)
	if err != nil {
		t.Fatal(err)
	}
	s.fns = fns
	if len(fns) != 5 {
		t.Fatalf("functions = %d, want 5", len(fns))
	}
	for _, f := range fns {
		if _, ok := runtimes[trimCodeURI(f.CodeURI)]; !ok {
			t.Errorf("%s: no runtime for %q", f.LogicalID, f.CodeURI)
		}
		if f.LogicalID == "OutcomeRelayFunction" {
			// The relay reads nothing from the table: the stream brings the records.
			if f.Environment["EVENT_BUS_NAME"] == "" || len(f.Events) != 1 || f.Events[0].Type != samtemplate.EventDynamoDB {
				t.Errorf("%s: environment %v, events %+v; want EVENT_BUS_NAME and one DynamoDB event", f.LogicalID, f.Environment, f.Events)
			}
			continue
		}
		if f.Environment["TABLE_NAME"] != "TransfersTable" {
			t.Errorf("%s: TABLE_NAME = %q", f.LogicalID, f.Environment["TABLE_NAME"])
		}
		// The orchestrator's limit comes from the parameter MaxTransferAmount, its default locally.
		if got := f.Environment["MAX_TRANSFER_AMOUNT"]; f.LogicalID == "OrchestratorFunction" && got != "1000000000" {
			t.Errorf("%s: MAX_TRANSFER_AMOUNT = %q, want the parameter's default 1000000000", f.LogicalID, got)
		}
	}
	sms, err := tmpl.StateMachines(s.env(), s.names)
	if err != nil {
		t.Fatal(err)
	}
	// The workflow invokes the functions' aliases (!Ref DebitFunction.Alias), which the Lambda host accepts, and the
	// orchestrator starts executions through the state machine's alias, which startEngine publishes; the reconciler
	// matches status changes by the state machine's own ARN.
	for name, want := range map[string]string{
		"DebitFunctionArn":  "arn:aws:lambda:us-east-1:000000000000:function:DebitFunction:live",
		"CreditFunctionArn": "arn:aws:lambda:us-east-1:000000000000:function:CreditFunction:live",
	} {
		if got := sms[0].Substitutions[name]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if sms[0].AutoPublishAlias != "live" {
		t.Errorf("AutoPublishAlias = %q, want live", sms[0].AutoPublishAlias)
	}
	for _, f := range fns {
		want := map[string]string{
			"OrchestratorFunction":      stateMachineArn("TransferStateMachine") + ":live",
			"TimeoutReconcilerFunction": stateMachineArn("TransferStateMachine"),
		}[f.LogicalID]
		if got := f.Environment["STATE_MACHINE_ARN"]; got != want {
			t.Errorf("%s: STATE_MACHINE_ARN = %q, want %q", f.LogicalID, got, want)
		}
	}
	if err := s.startRules(); err != nil {
		t.Fatal(err)
	}
	if len(s.rules) != 1 || len(s.schedule) != 1 || s.schedule[0].every != 5*time.Minute {
		t.Errorf("rules %d, schedules %+v", len(s.rules), s.schedule)
	}
	event := []byte(`{"detail-type":"Step Functions Execution Status Change","source":"aws.states","detail":{"status":"TIMED_OUT","stateMachineArn":"` + stateMachineArn("TransferStateMachine") + `"}}`)
	if ok, err := s.rules[0].pattern.MatchJSON(event); err != nil || !ok {
		t.Errorf("the reconciler's rule does not match a timed-out transfer execution: %v %v", ok, err)
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		expr string
		want time.Duration
		ok   bool
	}{
		{"rate(5 minutes)", 5 * time.Minute, true},
		{"rate(1 hour)", time.Hour, true},
		{"rate(2 days)", 48 * time.Hour, true},
		{"rate(0 minutes)", 0, false},
		{"cron(0 12 * * ? *)", 0, false},
	}
	for _, tt := range tests {
		got, err := parseRate(tt.expr)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseRate(%q) = %s, %v", tt.expr, got, err)
		}
	}
}

// TestReservedConcurrencyFromTheTemplate: the functions' ReservedConcurrentExecutions cap them, and reservations
// beyond --lambda-concurrency stop the stack from starting.
func TestReservedConcurrencyFromTheTemplate(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("testdata", "reserved-concurrency.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	start := func(account int) (*stack, error) {
		s := &stack{tmpl: tmpl, names: newNames(tmpl), cfg: Config{LambdaConcurrency: account}, logger: slog.New(slog.DiscardHandler),
			metrics: io.Discard, newID: sfnengine.NewUUID}
		if s.fns, err = tmpl.Functions(s.env(), s.names); err != nil {
			t.Fatal(err)
		}
		return s, s.startFunctions(aws.Config{})
	}
	if _, err := start(1); err == nil || err.Error() != "lambda concurrency: reserved concurrency 2 exceeds the account's concurrency 1" {
		t.Errorf("reservations 0+2 with --lambda-concurrency 1: err = %v", err)
	}
	s, err := start(lambdahost.DefaultAccountConcurrency)
	if err != nil {
		t.Fatal(err)
	}
	var se *sfnengine.ServiceError
	_, err = s.invoker.Invoke(context.Background(), "DebitFunction", []byte(`{}`))
	if !errors.As(err, &se) || se.Name != "Lambda.TooManyRequestsException" {
		t.Errorf("DebitFunction (ReservedConcurrentExecutions: 0): err = %v, want Lambda.TooManyRequestsException", err)
	}
	// CreditFunction has concurrency: its invocation runs (and fails without a table, which is not a throttle).
	_, err = s.invoker.Invoke(context.Background(), "CreditFunction", []byte(`{}`))
	if errors.As(err, &se) {
		t.Errorf("CreditFunction (reserved 2, idle): err = %v, want it to run", err)
	}
}

// namesWithStreams is newNames with a stand-in label for each table's stream: Run learns the labels from the server
// when it creates the tables.
func namesWithStreams(t *testing.T, tmpl *samtemplate.Template) names {
	t.Helper()
	n := newNames(tmpl)
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.StreamViewType != "" {
			n.streams[tb.LogicalID] = "arn:aws:dynamodb:us-east-1:000000000000:table/" + tb.LogicalID + "/stream/2026-01-01T00:00:00.000"
		}
	}
	return n
}
