package deploy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// alias is the name of the alias every function and the workflow publish (AutoPublishAlias).
const alias = "live"

// TestWorkflowInvokesFunctionAliases: the workflow invokes each function through its alias, so that a task runs the
// version the alias points to and CodeDeploy's traffic shifting applies to it; no substitution of the definition is
// a function's unqualified ARN (which runs $LATEST, outside any deployment), and the workflow's role may invoke
// exactly those aliases.
func TestWorkflowInvokesFunctionAliases(t *testing.T) {
	tmpl := TransformT(t)
	const sm = "TransferStateMachine"
	subs, _ := tmpl.Resources[sm].Properties["DefinitionSubstitutions"].(map[string]any)
	var invoked []string
	for name, v := range subs {
		id := ref(v)
		switch tmpl.Resources[id].Type {
		case "AWS::Lambda::Function":
			t.Errorf("%s: substitution %s is %s, a function's unqualified ARN: want its alias", sm, name, Render(v))
		case "AWS::Lambda::Alias":
			if m, _ := v.(map[string]any); m["Ref"] == nil {
				t.Errorf("%s: substitution %s is %s: want the alias's ARN (a Ref of it)", sm, name, Render(v))
			}
			if got := tmpl.Resources[id].Properties["Name"]; got != alias {
				t.Errorf("%s: substitution %s invokes alias %v, want %s", sm, name, got, alias)
			}
			invoked = append(invoked, "${"+id+"}")
		}
		if strings.Contains(Render(v), ":function:") {
			t.Errorf("%s: substitution %s is %s, a function ARN written out: want the alias's Ref", sm, name, Render(v))
		}
	}
	slices.Sort(invoked)
	if want := []string{"${CreditFunctionAliaslive}", "${DebitFunctionAliaslive}"}; !slices.Equal(invoked, want) {
		t.Errorf("%s invokes the aliases %v, want %v", sm, invoked, want)
	}
	role := ref(tmpl.Resources[sm].Properties["RoleArn"])
	var granted []string
	for _, s := range tmpl.RoleStatements() {
		if s.Role == role && slices.Contains(s.Action, "lambda:InvokeFunction") {
			granted = append(granted, s.Resource...)
		}
	}
	slices.Sort(granted)
	if !slices.Equal(granted, invoked) {
		t.Errorf("%s (%s) may invoke %v, want exactly the aliases it invokes %v", sm, role, granted, invoked)
	}
}

// TestFunctionsDeployGradually: every function publishes versions behind the alias live, which CodeDeploy moves
// (the alias's UpdatePolicy) through a deployment group that rolls back when one of its alarms fires, at least one
// of them on the function's own errors; gradually (canary) unless GradualDeployment is false. Everything that
// invokes a function (API methods, EventBridge rules and schedules, asynchronous invocation settings) goes through
// the alias.
func TestFunctionsDeployGradually(t *testing.T) {
	tmpl := TransformT(t)
	if p := tmpl.Parameters["GradualDeployment"]; p["Default"] != "true" {
		t.Errorf("GradualDeployment defaults to %v, want \"true\" (a stack rolls out gradually unless told not to)", p["Default"])
	}
	wantConfig := []string{"GradualDeployment", "CodeDeployDefault.LambdaCanary10Percent5Minutes", "CodeDeployDefault.LambdaAllAtOnce"}
	for _, fn := range tmpl.OfType("AWS::Lambda::Function") {
		aliases := tmpl.Aliases(fn)
		if len(aliases) != 1 || tmpl.Resources[aliases[0]].Properties["Name"] != alias {
			t.Errorf("%s: aliases %v, want one named %s (AutoPublishAlias)", fn, aliases, alias)
			continue
		}
		a := tmpl.Resources[aliases[0]]
		version, _ := dig(a.Properties, "FunctionVersion", "Fn::GetAtt").([]any)
		if len(version) != 2 || tmpl.Resources[fmt.Sprint(version[0])].Type != "AWS::Lambda::Version" {
			t.Errorf("%s: alias %s points to %v, want a published AWS::Lambda::Version", fn, aliases[0], a.Properties["FunctionVersion"])
		}
		group := ref(dig(a.UpdatePolicy, "CodeDeployLambdaAliasUpdate", "DeploymentGroupName"))
		g, ok := tmpl.Resources[group]
		if !ok || g.Type != "AWS::CodeDeploy::DeploymentGroup" {
			t.Errorf("%s: alias %s is not updated through a CodeDeploy deployment group (UpdatePolicy %v)", fn, aliases[0], a.UpdatePolicy)
			continue
		}
		// CodeDeploy's configuration by the condition GradualDeployment: canary if it holds, all at once otherwise.
		branches, _ := dig(g.Properties, "DeploymentConfigName", "Fn::If").([]any)
		if got := stringList(branches); !slices.Equal(got, wantConfig) {
			t.Errorf("%s: %s DeploymentConfigName %s, want Fn::If %v", fn, group, Render(g.Properties["DeploymentConfigName"]), wantConfig)
		}
		if dig(g.Properties, "AutoRollbackConfiguration", "Enabled") != true ||
			!slices.Contains(stringList(dig(g.Properties, "AutoRollbackConfiguration", "Events")), "DEPLOYMENT_STOP_ON_ALARM") {
			t.Errorf("%s: %s does not roll back when an alarm stops it: %v", fn, group, g.Properties["AutoRollbackConfiguration"])
		}
		alarms, _ := dig(g.Properties, "AlarmConfiguration", "Alarms").([]any)
		own := false
		for _, al := range alarms {
			id := ref(dig(al, "Name"))
			if tmpl.Resources[id].Type != "AWS::CloudWatch::Alarm" {
				t.Errorf("%s: %s rolls back on %v, not an alarm of the template", fn, group, Render(dig(al, "Name")))
				continue
			}
			own = own || slices.Contains(findAlarms(tmpl, "AWS/Lambda", "Errors", map[string]string{"FunctionName": "${" + fn + "}"}), id)
		}
		if dig(g.Properties, "AlarmConfiguration", "Enabled") != true || !own {
			t.Errorf("%s: %s rolls back on alarms %v, want them enabled and one on the function's errors", fn, group, Render(alarms))
		}
	}

	// Whatever invokes a function invokes its alias.
	for _, m := range tmpl.APIMethods() {
		if id := m.IntegratedFunction(); tmpl.Resources[id].Type != "AWS::Lambda::Alias" {
			t.Errorf("%s: integration invokes %s, want a function's alias", m, id)
		}
	}
	for _, p := range tmpl.LambdaPermissions() {
		if tmpl.Resources[p.Function].Type != "AWS::Lambda::Alias" {
			t.Errorf("%s: lets %s invoke %s, want a function's alias", p.ID, p.Principal, p.Function)
		}
	}
	for _, id := range tmpl.OfType("AWS::Events::Rule") {
		targets, _ := tmpl.Resources[id].Properties["Targets"].([]any)
		for _, tg := range targets {
			if target := ref(dig(tg, "Arn")); tmpl.Resources[target].Type == "AWS::Lambda::Function" {
				t.Errorf("%s: target %s, a function's unqualified ARN: want its alias", id, target)
			}
		}
	}
	for _, id := range tmpl.OfType("AWS::Lambda::EventInvokeConfig") {
		if q := tmpl.Resources[id].Properties["Qualifier"]; q != alias {
			t.Errorf("%s: Qualifier %v, want %s (the alias its invocations go to)", id, q, alias)
		}
	}
}

// TestWorkflowDeploysGradually: the workflow publishes a version of each definition behind the alias live, which
// Step Functions moves as its DeploymentPreference says (canary unless GradualDeployment is false) and rolls back
// when the alarm on failed executions fires; the orchestrator starts executions through that alias, while the
// reconciler, which matches status changes by the state machine's own ARN, keeps that ARN.
func TestWorkflowDeploysGradually(t *testing.T) {
	tmpl := TransformT(t)
	const sm = "TransferStateMachine"
	var smAlias string
	for _, id := range tmpl.OfType("AWS::StepFunctions::StateMachineAlias") {
		p := tmpl.Resources[id].Properties
		v := ref(dig(p, "DeploymentPreference", "StateMachineVersionArn"))
		if version := tmpl.Resources[v]; version.Type == "AWS::StepFunctions::StateMachineVersion" && ref(version.Properties["StateMachineArn"]) == sm {
			if smAlias != "" || p["Name"] != alias {
				t.Errorf("%s: alias %s named %v (another: %q), want one alias named %s", sm, id, p["Name"], smAlias, alias)
			}
			smAlias = id
		}
	}
	if smAlias == "" {
		t.Fatalf("%s has no alias routing to one of its versions (AutoPublishAlias)", sm)
	}
	pref, _ := tmpl.Resources[smAlias].Properties["DeploymentPreference"].(map[string]any)
	for key, want := range map[string]any{
		"Type":       map[string]any{"Fn::If": []any{"GradualDeployment", "CANARY", "ALL_AT_ONCE"}},
		"Percentage": map[string]any{"Fn::If": []any{"GradualDeployment", 10.0, map[string]any{"Ref": "AWS::NoValue"}}},
		"Interval":   map[string]any{"Fn::If": []any{"GradualDeployment", 5.0, map[string]any{"Ref": "AWS::NoValue"}}},
	} {
		if !reflect.DeepEqual(pref[key], want) {
			t.Errorf("%s: DeploymentPreference.%s %s, want %s", smAlias, key, Render(pref[key]), Render(want))
		}
	}
	failed := findAlarms(tmpl, "AWS/States", "ExecutionsFailed", map[string]string{"StateMachineArn": "${" + sm + "}"})
	alarms := stringList(pref["Alarms"])
	if len(failed) != 1 || !slices.Contains(alarms, "${"+failed[0]+"}") {
		t.Errorf("%s: rolls back on %v, want the alarm on failed executions %v among them", smAlias, alarms, failed)
	}

	env := func(fn string) string {
		return Render(dig(tmpl.Resources[fn].Properties, "Environment", "Variables", "STATE_MACHINE_ARN"))
	}
	if got := env("OrchestratorFunction"); got != "${"+smAlias+"}" {
		t.Errorf("OrchestratorFunction starts executions with STATE_MACHINE_ARN %s, want the alias ${%s}", got, smAlias)
	}
	if got := env("TimeoutReconcilerFunction"); got != "${"+sm+"}" {
		t.Errorf("TimeoutReconcilerFunction has STATE_MACHINE_ARN %s, want the state machine's own ARN ${%s}", got, sm)
	}
}
