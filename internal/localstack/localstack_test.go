package localstack

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/internal/samtemplate"
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
	if c.HistoryRetention != 24*time.Hour || c.HistoryMaxExecutions != 10000 {
		t.Errorf("history defaults: %s, %d", c.HistoryRetention, c.HistoryMaxExecutions)
	}
	if c, err := ParseFlags([]string{"--metrics"}, io.Discard); err != nil || !c.Metrics {
		t.Errorf("--metrics: %+v, %v", c, err)
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
	s := &stack{tmpl: tmpl, names: newNames(tmpl), cfg: Config{}}
	fns, err := tmpl.Functions(s.env(), s.names)
	if err != nil {
		t.Fatal(err)
	}
	s.fns = fns
	if len(fns) != 4 {
		t.Fatalf("functions = %d, want 4", len(fns))
	}
	for _, f := range fns {
		if _, ok := runtimes[trimCodeURI(f.CodeURI)]; !ok {
			t.Errorf("%s: no runtime for %q", f.LogicalID, f.CodeURI)
		}
		if f.Environment["TABLE_NAME"] != "TransfersTable" {
			t.Errorf("%s: TABLE_NAME = %q", f.LogicalID, f.Environment["TABLE_NAME"])
		}
	}
	sms, err := tmpl.StateMachines(s.env(), s.names)
	if err != nil {
		t.Fatal(err)
	}
	if got := sms[0].Substitutions["DebitFunctionArn"]; got != "arn:aws:lambda:us-east-1:000000000000:function:DebitFunction" {
		t.Errorf("DebitFunctionArn = %q", got)
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
