package samtemplate

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestProjectTemplateEventRules: the outcome events' rule is on the application's bus, matches the transfers'
// source and targets the log group by its ARN without ":*", with the intrinsics resolved.
func TestProjectTemplateEventRules(t *testing.T) {
	tmpl, err := Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := tmpl.EventRules(Env{Region: "us-east-1", AccountID: "000000000000"}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 {
		t.Fatalf("rules %+v, want the outcome events' rule", rules)
	}
	r := rules[0]
	if r.LogicalID != "TransferEventsRule" || r.EventBusName != "ref:TransferEventBus" || !r.Enabled ||
		fmt.Sprint(r.Pattern) != "map[source:[transferflow.transfers]]" || fmt.Sprint(r.Targets) != "[arn:aws:logs:us-east-1:000000000000:log-group:ref:TransferEventsLogGroup]" {
		t.Fatalf("rule %+v", r)
	}
	name, ok, err := tmpl.PropertyString("TransferEventsLogGroup", "LogGroupName", Env{}, fakeResolver{})
	if err != nil || !ok || name != "/aws/events/local-transfers" {
		t.Fatalf("LogGroupName %q, %v, %v; want /aws/events/local-transfers (the stack name local)", name, ok, err)
	}
	if _, ok, err := tmpl.PropertyString("TransferEventsLogGroup", "NoSuchProperty", Env{}, fakeResolver{}); ok || err != nil {
		t.Fatalf("a missing property: %v, %v", ok, err)
	}
}

// TestEventRulesDefaults: a rule without EventBusName is on the default bus; State DISABLED is kept; a rule without
// EventPattern (a schedule) is not read.
func TestEventRulesDefaults(t *testing.T) {
	tmpl, err := Parse([]byte(`
Resources:
  Plain:
    Type: AWS::Events::Rule
    Properties:
      State: DISABLED
      EventPattern: {source: [a]}
  Scheduled:
    Type: AWS::Events::Rule
    Properties:
      ScheduleExpression: rate(1 hour)
`))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := tmpl.EventRules(Env{}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].LogicalID != "Plain" || rules[0].EventBusName != "default" || rules[0].Enabled || len(rules[0].Targets) != 0 {
		t.Fatalf("rules %+v", rules)
	}
}
