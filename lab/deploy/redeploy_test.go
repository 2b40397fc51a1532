package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// nameProperty is, for each resource type the template has or might have, the property that gives the resource a
// name of its own ("" for a type whose name is always generated). A resource named by it is the only one of that
// name in its account and region.
var nameProperty = map[string]string{
	"AWS::ApiGateway::Account":                 "",
	"AWS::ApiGateway::RestApi":                 "Name",
	"AWS::CloudFormation::WaitConditionHandle": "",
	"AWS::CloudWatch::Alarm":                   "AlarmName",
	"AWS::CloudWatch::Dashboard":               "DashboardName",
	"AWS::DynamoDB::Table":                     "TableName",
	"AWS::Events::EventBus":                    "Name",
	"AWS::Events::Rule":                        "Name",
	"AWS::IAM::ManagedPolicy":                  "ManagedPolicyName",
	"AWS::IAM::Role":                           "RoleName",
	"AWS::Lambda::Function":                    "FunctionName",
	"AWS::Lambda::Version":                     "",
	"AWS::Logs::LogGroup":                      "LogGroupName",
	"AWS::Logs::ResourcePolicy":                "PolicyName",
	"AWS::Pipes::Pipe":                         "Name",
	"AWS::SecretsManager::Secret":              "Name",
	"AWS::SNS::Topic":                          "TopicName",
	"AWS::SQS::Queue":                          "QueueName",
	"AWS::StepFunctions::StateMachine":         "StateMachineName",
	"AWS::StepFunctions::StateMachineVersion":  "",
}

// retryBlockers returns the resources of tmpl that would make a second deploy fail after a first one rolled back:
// DeletionPolicy Retain keeps them through the rollback, and their fixed name makes CloudFormation's next create of
// them fail with "already exists". RetainExceptOnCreate deletes what the failed operation created; a generated name
// never collides. ledger, the table, is exempt: it must outlive everything (TestLedgerTableOutlivesTheStack).
func retryBlockers(tmpl *Template, ledger string) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(tmpl.Resources)) {
		r := tmpl.Resources[id]
		if r.DeletionPolicy != "Retain" || id == ledger {
			continue
		}
		prop, known := nameProperty[r.Type]
		switch {
		case !known:
			out = append(out, fmt.Sprintf("%s: retained %s, a type whose name property this test does not know: "+
				"add it to nameProperty", id, r.Type))
		case prop != "" && r.Properties[prop] != nil:
			out = append(out, fmt.Sprintf("%s: DeletionPolicy Retain and a fixed %s %s: after a rolled-back first "+
				"deploy it stays and the next deploy fails; use RetainExceptOnCreate or a generated name",
				id, prop, Render(r.Properties[prop])))
		}
	}
	return out
}

// TestRetainedResourcesDoNotBlockRetries: no resource kept on delete has a name of its own, except the ledger table,
// and every log group with a fixed name is kept on delete except when the failed operation created it.
func TestRetainedResourcesDoNotBlockRetries(t *testing.T) {
	tmpl := TransformT(t)
	if got := retryBlockers(tmpl, "TransfersTable"); len(got) != 0 {
		t.Errorf("resources that would block a retry:\n%s", lines(got))
	}
	for _, id := range tmpl.OfType("AWS::Logs::LogGroup") {
		r := tmpl.Resources[id]
		if r.Properties["LogGroupName"] != nil && (r.DeletionPolicy != "RetainExceptOnCreate" || r.UpdateReplacePolicy != "Retain") {
			t.Errorf("%s: DeletionPolicy %q UpdateReplacePolicy %q, want RetainExceptOnCreate and Retain", id,
				r.DeletionPolicy, r.UpdateReplacePolicy)
		}
	}

	// The check itself: a log group of the template set back to Retain is reported.
	broken := TransformT(t)
	r := broken.Resources["ApiAccessLogGroup"]
	r.DeletionPolicy = "Retain"
	broken.Resources["ApiAccessLogGroup"] = r
	if got := retryBlockers(broken, "TransfersTable"); len(got) != 1 || !strings.HasPrefix(got[0], "ApiAccessLogGroup: ") {
		t.Errorf("a retained, named log group: reported %v", got)
	}
}

// TestAPIExecutionLogsExpire: API Gateway writes a stage's execution logs to API-Gateway-Execution-Logs_{api id}/{stage},
// which it creates without retention unless it exists; the template declares it for every stage, with a retention.
func TestAPIExecutionLogsExpire(t *testing.T) {
	tmpl := TransformT(t)
	groups := map[string]string{}
	for _, id := range tmpl.OfType("AWS::Logs::LogGroup") {
		groups[Render(tmpl.Resources[id].Properties["LogGroupName"])] = id
	}
	stages := apiStages(t, tmpl)
	for _, stage := range stages {
		p := tmpl.Resources[stage].Properties
		name := fmt.Sprintf("API-Gateway-Execution-Logs_${%s}/%s", ref(p["RestApiId"]), Render(p["StageName"]))
		id, ok := groups[name]
		if !ok {
			t.Errorf("%s: no log group %s for its execution logs", stage, name)
			continue
		}
		r := tmpl.Resources[id]
		if got := Render(r.Properties["RetentionInDays"]); got != "${LogRetentionDays}" {
			t.Errorf("%s: RetentionInDays %s, want the LogRetentionDays parameter", id, got)
		}
	}
}
