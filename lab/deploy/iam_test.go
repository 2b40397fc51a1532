package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/iampolicy"
)

// forbiddenActions are DynamoDB actions the design never uses: a role that has one can destroy or bulk-read the
// ledger.
var forbiddenActions = []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:BatchGetItem",
	"dynamodb:DeleteTable", "dynamodb:PartiQLDelete"}

// anyResourceActions are the actions that support no resource-level permissions, so may be granted on "*".
var anyResourceActions = []string{
	"xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets",
	"logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery",
	"logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
	"dynamodb:ListStreams",
}

// policyProblems returns what breaks least privilege in stmts: a wildcard in an action, an action the design
// forbids, or "*" as the resource of an action that supports resource-level permissions.
func policyProblems(stmts []Statement) []string {
	var problems []string
	for _, s := range stmts {
		if s.Effect != "Allow" {
			continue
		}
		for _, a := range s.Action {
			if strings.ContainsAny(a, "*?") {
				problems = append(problems, fmt.Sprintf("%s: wildcard action %s", s, a))
			}
			if slices.Contains(forbiddenActions, a) {
				problems = append(problems, fmt.Sprintf("%s: forbidden action %s", s, a))
			}
			if slices.Contains(s.Resource, "*") && !slices.Contains(anyResourceActions, a) {
				problems = append(problems, fmt.Sprintf("%s: %s on any resource", s, a))
			}
		}
	}
	return problems
}

func TestPolicyProblems(t *testing.T) {
	table := []string{"${TransfersTable.Arn}"}
	tests := []struct {
		name string
		stmt Statement
		want int
	}{
		{name: "exact actions on the table", stmt: Statement{Effect: "Allow", Action: []string{"dynamodb:GetItem"}, Resource: table}},
		{name: "service wildcard", stmt: Statement{Effect: "Allow", Action: []string{"dynamodb:*"}, Resource: table}, want: 1},
		{name: "prefix wildcard", stmt: Statement{Effect: "Allow", Action: []string{"dynamodb:Get*"}, Resource: table}, want: 1},
		{name: "scan", stmt: Statement{Effect: "Allow", Action: []string{"dynamodb:Scan"}, Resource: table}, want: 1},
		{name: "batch write", stmt: Statement{Effect: "Allow", Action: []string{"dynamodb:BatchWriteItem"}, Resource: table}, want: 1},
		{name: "table action on any resource", stmt: Statement{Effect: "Allow", Action: []string{"dynamodb:GetItem"}, Resource: []string{"*"}}, want: 1},
		{name: "x-ray on any resource", stmt: Statement{Effect: "Allow", Action: []string{"xray:PutTraceSegments"}, Resource: []string{"*"}}},
		{name: "deny is not a grant", stmt: Statement{Effect: "Deny", Action: []string{"dynamodb:*"}, Resource: []string{"*"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := policyProblems([]Statement{tt.stmt}); len(got) != tt.want {
				t.Errorf("problems = %q, want %d", got, tt.want)
			}
		})
	}
}

// unconfinedItemGrants returns the Allow statements on table (its items, not an index) that have no
// dynamodb:LeadingKeys condition: every role's accesses to the table's items are confined to the partition keys of
// the kinds of item it uses. A statement with another condition, or one LeadingKeys cannot narrow (a pattern of
// only wildcards), counts as unconfined.
func unconfinedItemGrants(stmts []Statement, table string) []string {
	var problems []string
	for _, s := range stmts {
		if s.Effect != "Allow" || !slices.Contains(s.Resource, table) {
			continue
		}
		switch {
		case len(s.LeadingKeys) == 0:
			problems = append(problems, fmt.Sprintf("%s: no %s condition on %s", s, leadingKeysKey, leadingKeysOperator))
		case len(s.Condition) != 1:
			problems = append(problems, fmt.Sprintf("%s: conditions %v besides %s", s, s.Condition, leadingKeysKey))
		case slices.ContainsFunc(s.LeadingKeys, func(k string) bool { return strings.Trim(k, "*?") == "" }):
			problems = append(problems, fmt.Sprintf("%s: a key pattern that matches any key", s))
		}
	}
	return problems
}

func TestUnconfinedItemGrants(t *testing.T) {
	const table = "${T.Arn}"
	like := func(keys ...any) map[string]any {
		return map[string]any{leadingKeysOperator: map[string]any{leadingKeysKey: keys}}
	}
	tests := []struct {
		name string
		stmt Statement
		want int
	}{
		{name: "confined to a prefix", stmt: Statement{Effect: "Allow", Resource: []string{table}, Condition: like("A#*"), LeadingKeys: []string{"A#*"}}},
		{name: "no condition", stmt: Statement{Effect: "Allow", Resource: []string{table}}, want: 1},
		{name: "a pattern of any key", stmt: Statement{Effect: "Allow", Resource: []string{table}, Condition: like("*"), LeadingKeys: []string{"*"}}, want: 1},
		{name: "an index is not the table's items", stmt: Statement{Effect: "Allow", Resource: []string{table + "/index/I"}}},
		{name: "a deny", stmt: Statement{Effect: "Deny", Resource: []string{table}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unconfinedItemGrants([]Statement{tt.stmt}, table); len(got) != tt.want {
				t.Errorf("problems = %q, want %d", got, tt.want)
			}
		})
	}
}

// grant is one action on one resource, for the items whose partition key matches key when key is not empty (a
// dynamodb:LeadingKeys condition).
type grant struct{ action, resource, key string }

func (g grant) String() string {
	if g.key == "" {
		return g.action + " on " + g.resource
	}
	return g.action + " on " + g.resource + " for keys " + g.key
}

// covers reports whether g allows a. A grant with a key covers only an access to an item whose partition key
// matches it: an access with no key (a Scan, an index Query) would pass the condition on AWS (ForAllValues of
// nothing), but what that allows is not what the condition was written for, so it does not count here.
func (g grant) covers(a access) bool {
	return iampolicy.Match(g.action, a.action) && iampolicy.Match(g.resource, a.resource) &&
		(g.key == "" || a.key != "" && iampolicy.Match(g.key, a.key))
}

func compareGrants(a, b grant) int { return strings.Compare(a.String(), b.String()) }

func grants(stmts []Statement, role string) []grant {
	var out []grant
	for _, s := range stmts {
		if s.Role != role || s.Effect != "Allow" {
			continue
		}
		keys := s.LeadingKeys
		if keys == nil {
			keys = []string{""}
		}
		for _, a := range s.Action {
			for _, r := range s.Resource {
				for _, k := range keys {
					out = append(out, grant{a, r, k})
				}
			}
		}
	}
	slices.SortFunc(out, compareGrants)
	return slices.Compact(out)
}

func on(resource string, actions ...string) []grant {
	return onKeys(resource, []string{""}, actions...)
}

// onKeys is on with a LeadingKeys condition: each action on each key pattern.
func onKeys(resource string, keys []string, actions ...string) []grant {
	out := make([]grant, 0, len(actions)*len(keys))
	for _, a := range actions {
		for _, k := range keys {
			out = append(out, grant{a, resource, k})
		}
	}
	return out
}

// TestLeastPrivilege checks every role of the deployed stack: one role per function, each granted exactly the
// actions its code calls (the methods of internal/ledger and the Step Functions calls of internal/transfer that the
// function uses) on the table, its index, the state machine or its executions, its own log group, and nothing else.
// The table is written by hand; TestRolesGrantWhatTheCodeCalls checks the same grants against the calls the functions'
// code really makes.
func TestLeastPrivilege(t *testing.T) {
	tmpl := TransformT(t)
	stmts := tmpl.RoleStatements()
	if p := policyProblems(stmts); len(p) > 0 {
		t.Errorf("least privilege:\n%s", strings.Join(p, "\n"))
	}
	if p := unconfinedItemGrants(stmts, "${TransfersTable.Arn}"); len(p) > 0 {
		t.Errorf("item grants without a LeadingKeys condition:\n%s", strings.Join(p, "\n"))
	}

	const (
		table      = "${TransfersTable.Arn}"
		index      = "${TransfersTable.Arn}/index/InProgress"
		activity   = "${TransfersTable.Arn}/index/AccountActivity"
		machine    = "${TransferStateMachine}"
		executions = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${TransferStateMachine.Name}:*"
	)
	tracing := on("*", "xray:PutTraceSegments", "xray:PutTelemetryRecords")
	logsTo := func(group string) []grant { return on("${"+group+".Arn}", "logs:CreateLogStream", "logs:PutLogEvents") }
	// The table's items by the prefix of their partition key (docs/data-model.md), each granted with a
	// dynamodb:LeadingKeys condition.
	items := func(prefix string, actions ...string) []grant {
		return onKeys(table, []string{prefix + "#*"}, actions...)
	}
	want := map[string][]grant{
		"OrchestratorFunction": slices.Concat(
			items("TRANSFER", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"),
			items("ACCOUNT", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"),
			items("ACCOUNTKEY", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"),
			items("LEDGER", "dynamodb:GetItem", "dynamodb:Query"),
			on(activity, "dynamodb:Query"),
			on(machine, "states:StartExecution"),
			on(executions, "states:GetExecutionHistory"),
			logsTo("OrchestratorLogGroup"), tracing),
		"DebitFunction": slices.Concat(
			items("LEDGER", "dynamodb:PutItem"),
			items("ACCOUNT", "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"),
			items("TRANSFER", "dynamodb:GetItem", "dynamodb:UpdateItem"),
			logsTo("DebitLogGroup"), tracing),
		"CreditFunction": slices.Concat(
			items("LEDGER", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"),
			items("ACCOUNT", "dynamodb:GetItem", "dynamodb:UpdateItem"),
			items("TRANSFER", "dynamodb:GetItem", "dynamodb:UpdateItem"),
			logsTo("CreditLogGroup"), tracing),
		"TimeoutReconcilerFunction": slices.Concat(
			items("TRANSFER", "dynamodb:GetItem", "dynamodb:UpdateItem"),
			items("LEDGER", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"),
			items("ACCOUNT", "dynamodb:UpdateItem"),
			on(index, "dynamodb:Query"),
			on(machine, "states:StartExecution"),
			on(executions, "states:DescribeExecution"),
			on("${ReconcilerDeadLetterQueue.Arn}", "sqs:SendMessage"),
			logsTo("TimeoutReconcilerLogGroup"), tracing),
		// The stream's event source mapping reads the stream and writes its on-failure destination with the
		// function's role; the function itself only publishes.
		"OutcomeRelayFunction": slices.Concat(
			on("${TransfersTable.StreamArn}", "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"),
			on("*", "dynamodb:ListStreams"),
			on("${TransferEventBus.Arn}", "events:PutEvents"),
			on("${OutcomeRelayDeadLetterQueue.Arn}", "sqs:SendMessage"),
			logsTo("OutcomeRelayLogGroup"), tracing),
	}

	functions := tmpl.OfType("AWS::Lambda::Function")
	if !slices.Equal(functions, []string{"CreditFunction", "DebitFunction", "OrchestratorFunction", "OutcomeRelayFunction", "TimeoutReconcilerFunction"}) {
		t.Fatalf("functions = %v", functions)
	}
	roles := map[string]string{}
	for _, fn := range functions {
		role := tmpl.FunctionRole(fn)
		if role == "" {
			t.Errorf("%s: Role %v is not a role of the template", fn, tmpl.Resources[fn].Properties["Role"])
			continue
		}
		if other, ok := roles[role]; ok {
			t.Errorf("%s and %s share %s: each function gets its own role", fn, other, role)
		}
		roles[role] = fn
		checkGrants(t, fn, role, grants(stmts, role), want[fn])
	}

	sm := "TransferStateMachine"
	smRole := ref(tmpl.Resources[sm].Properties["RoleArn"])
	smWant := slices.Concat(
		// The aliases the definition invokes (TestWorkflowInvokesFunctionAliases), not the functions' unqualified ARNs.
		on("${DebitFunctionAliaslive}", "lambda:InvokeFunction"),
		on("${CreditFunctionAliaslive}", "lambda:InvokeFunction"),
		items("TRANSFER", "dynamodb:UpdateItem"),
		on("*", "logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery",
			"logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups"),
		on("*", "xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"),
	)
	checkGrants(t, sm, smRole, grants(stmts, smRole), smWant)

	// Managed policies grant what the template cannot show; only two roles have one, each the service role AWS
	// defines for exactly its job: API Gateway's account-wide logging role, and the role SAM gives CodeDeploy to
	// shift the functions' aliases (DeploymentPreference).
	for role, arns := range tmpl.ManagedPolicies() {
		want := map[string][]string{
			"ApiGatewayLoggingRole": {"arn:${AWS::Partition}:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"},
			"CodeDeployServiceRole": {"arn:aws:iam::aws:policy/service-role/AWSCodeDeployRoleForLambda"},
		}[role]
		if !slices.Equal(arns, want) {
			t.Errorf("%s: managed policies %v", role, arns)
		}
	}
}

func checkGrants(t *testing.T, who, role string, got, want []grant) {
	t.Helper()
	slices.SortFunc(want, compareGrants)
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("%s (%s) may %s, which its code never calls", who, role, g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s (%s) may not %s, which its code calls", who, role, w)
		}
	}
}
