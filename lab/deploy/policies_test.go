package deploy

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/iampolicy"
)

// The account and the principals the policies are evaluated for.
const (
	deployAccount = "111122223333"
	otherAccount  = "444455556666"
)

// cfnValues stands in for CloudFormation on deploy: what each Ref and Fn::GetAtt resolves to (by "Id" and
// "Id.Attribute") and which of the template's conditions hold.
type cfnValues struct {
	refs       map[string]string
	conditions map[string]bool
}

// resolve returns v with its intrinsics resolved as CloudFormation would with these values: Ref, Fn::GetAtt, Fn::Sub
// (its variables written back by Render, then substituted) and Fn::If; AWS::NoValue drops the list element or
// mapping entry that holds it. Anything else it cannot resolve fails the test.
func (c cfnValues) resolve(t *testing.T, v any) any {
	t.Helper()
	out, _ := c.value(t, v)
	return out
}

// value is resolve that reports whether v is AWS::NoValue.
func (c cfnValues) value(t *testing.T, v any) (any, bool) {
	t.Helper()
	switch v := v.(type) {
	case []any:
		out := []any{}
		for _, e := range v {
			if r, ok := c.value(t, e); ok {
				out = append(out, r)
			}
		}
		return out, true
	case map[string]any:
		if cond, ok := v["Fn::If"].([]any); ok && len(v) == 1 && len(cond) == 3 {
			holds, known := c.conditions[fmt.Sprint(cond[0])]
			if !known {
				t.Fatalf("condition %v: not given", cond[0])
			}
			if holds {
				return c.value(t, cond[1])
			}
			return c.value(t, cond[2])
		}
		if v["Ref"] == "AWS::NoValue" && len(v) == 1 {
			return nil, false
		}
		if _, ok := v["Ref"]; ok && len(v) == 1 {
			return c.sub(t, Render(v)), true
		}
		if _, ok := v["Fn::GetAtt"]; ok && len(v) == 1 {
			return c.sub(t, Render(v)), true
		}
		if _, ok := v["Fn::Sub"]; ok && len(v) == 1 {
			s, ok := subString(v)
			if !ok {
				t.Fatalf("Fn::Sub %v: not resolved", v)
			}
			return c.sub(t, s), true
		}
		out := map[string]any{}
		for k, e := range v {
			if strings.HasPrefix(k, "Fn::") {
				t.Fatalf("%s: not resolved", k)
			}
			if r, ok := c.value(t, e); ok {
				out[k] = r
			}
		}
		return out, true
	}
	return v, true
}

// sub substitutes each ${Name} in s with its value.
func (c cfnValues) sub(t *testing.T, s string) string {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(c.refs)) {
		s = strings.ReplaceAll(s, "${"+name+"}", c.refs[name])
	}
	if strings.Contains(s, "${") {
		t.Fatalf("%s: a variable with no value", s)
	}
	return s
}

// principal is the request context of a caller: its account, its ARN as aws:PrincipalArn has it (a role's ARN for
// a session of the role) and, when it is in one, its organization.
func principal(account, arn, org string) map[string][]string {
	ctx := map[string][]string{"aws:PrincipalAccount": {account}, "aws:PrincipalArn": {arn}}
	if org != "" {
		ctx["aws:PrincipalOrgID"] = []string{org}
	}
	return ctx
}

// TestAPIResourcePolicy: SAM writes the API's resource policy into its OpenAPI body: an explicit deny of every
// principal of another account, and, only when their parameters are not empty, of the principals whose ARN matches
// none of ApiAllowedPrincipalArns and of those outside ApiAllowedOrgId; and on the operator routes alone, of every
// principal whose ARN matches none of OperatorPrincipalArns (every principal when it is empty). It allows nothing:
// which routes a principal of the account may call within that is its IAM policies' decision. Evaluated as API
// Gateway evaluates it, for each parameter value CloudFormation would hand the transform.
func TestAPIResourcePolicy(t *testing.T) {
	tmpl := TransformT(t)
	for name, want := range map[string]map[string]any{
		"ApiAllowedPrincipalArns": {"Type": "CommaDelimitedList", "Default": ""},
		"ApiAllowedOrgId":         {"Type": "String", "Default": ""},
		"OperatorPrincipalArns":   {"Type": "CommaDelimitedList", "Default": ""},
	} {
		for k, v := range want {
			if got := tmpl.Parameters[name][k]; got != v {
				t.Errorf("parameter %s: %s = %v, want %v", name, k, got, v)
			}
		}
	}
	notEmpty := func(v any) any {
		return map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{v, ""}}}}
	}
	for name, want := range map[string]any{
		"HasApiAllowedPrincipalArns": notEmpty(map[string]any{"Fn::Join": []any{"", map[string]any{"Ref": "ApiAllowedPrincipalArns"}}}),
		"HasApiAllowedOrgId":         notEmpty(map[string]any{"Ref": "ApiAllowedOrgId"}),
		"HasOperatorPrincipalArns":   notEmpty(map[string]any{"Fn::Join": []any{"", map[string]any{"Ref": "OperatorPrincipalArns"}}}),
	} {
		if got := tmpl.Conditions[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("condition %s = %v, want %v", name, got, want)
		}
	}

	// The account is the stack's own, whichever it is deployed in.
	onlyThisAccount := map[string]any{"Sid": "OnlyThisAccount", "Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke",
		"Resource": "execute-api:/*", "Condition": map[string]any{"StringNotEquals": map[string]any{"aws:PrincipalAccount": map[string]any{"Ref": "AWS::AccountId"}}}}
	if stmts, _ := tmpl.ResourcePolicy("TransferApi")["Statement"].([]any); len(stmts) == 0 || !reflect.DeepEqual(stmts[0], onlyThisAccount) {
		t.Errorf("TransferApi's resource policy %v: want its first statement %v", stmts, onlyThisAccount)
	}

	const (
		user      = "arn:aws:iam::" + deployAccount + ":user/alice"
		payments  = "arn:aws:iam::" + deployAccount + ":role/payments-batch"
		intruder  = "arn:aws:iam::" + otherAccount + ":role/payments-batch"
		org       = "o-abcdefghij"
		paymentsP = "arn:aws:iam::" + deployAccount + ":role/payments-*"
		ops       = "arn:aws:iam::" + deployAccount + ":role/ops-oncall"
		opsP      = "arn:aws:iam::" + deployAccount + ":role/ops-*"
	)
	tests := []struct {
		name       string
		params     map[string]any // the parameter values CloudFormation hands the transform; nil: the defaults
		principals bool           // HasApiAllowedPrincipalArns holds
		org        bool           // HasApiAllowedOrgId holds
		operators  bool           // HasOperatorPrincipalArns holds
		caller     map[string][]string
		want       iampolicy.Decision // on a client route
		operator   iampolicy.Decision // on an operator route
	}{
		{name: "defaults: a user of the account is left to IAM on the client routes, denied the operator routes", caller: principal(deployAccount, user, ""), want: iampolicy.NotApplicable, operator: iampolicy.Deny},
		{name: "defaults: a role of another account is denied", caller: principal(otherAccount, intruder, ""), want: iampolicy.Deny, operator: iampolicy.Deny},
		{name: "operators: a named role is left to IAM on every route", params: map[string]any{"OperatorPrincipalArns": []any{user + "-admin", opsP}},
			operators: true, caller: principal(deployAccount, ops, ""), want: iampolicy.NotApplicable, operator: iampolicy.NotApplicable},
		{name: "operators: another user of the account is denied the operator routes", params: map[string]any{"OperatorPrincipalArns": []any{user + "-admin", opsP}},
			operators: true, caller: principal(deployAccount, user, ""), want: iampolicy.NotApplicable, operator: iampolicy.Deny},
		{name: "operators: a named role of another account is denied", params: map[string]any{"OperatorPrincipalArns": []any{"arn:aws:iam::*:role/ops-*"}},
			operators: true, caller: principal(otherAccount, "arn:aws:iam::"+otherAccount+":role/ops-oncall", ""), want: iampolicy.Deny, operator: iampolicy.Deny},
		{name: "operators and allowed principals: a named operator outside ApiAllowedPrincipalArns is denied", params: map[string]any{"OperatorPrincipalArns": []any{opsP}, "ApiAllowedPrincipalArns": []any{paymentsP}},
			operators: true, principals: true, caller: principal(deployAccount, ops, ""), want: iampolicy.Deny, operator: iampolicy.Deny},
		{name: "allowed principals: a matching role", params: map[string]any{"ApiAllowedPrincipalArns": []any{user + "-admin", paymentsP}},
			principals: true, caller: principal(deployAccount, payments, ""), want: iampolicy.NotApplicable, operator: iampolicy.Deny},
		{name: "allowed principals: another user of the account", params: map[string]any{"ApiAllowedPrincipalArns": []any{user + "-admin", paymentsP}},
			principals: true, caller: principal(deployAccount, user, ""), want: iampolicy.Deny, operator: iampolicy.Deny},
		{name: "allowed principals: a role of that name in another account", params: map[string]any{"ApiAllowedPrincipalArns": []any{paymentsP}},
			principals: true, caller: principal(otherAccount, intruder, ""), want: iampolicy.Deny, operator: iampolicy.Deny},
		{name: "organization: a principal of it", params: map[string]any{"ApiAllowedOrgId": org},
			org: true, caller: principal(deployAccount, user, org), want: iampolicy.NotApplicable, operator: iampolicy.Deny},
		{name: "organization: a principal of another", params: map[string]any{"ApiAllowedOrgId": org},
			org: true, caller: principal(deployAccount, user, "o-zyxwvutsrq"), want: iampolicy.Deny, operator: iampolicy.Deny},
		{name: "organization: a principal of none", params: map[string]any{"ApiAllowedOrgId": org},
			org: true, caller: principal(deployAccount, user, ""), want: iampolicy.Deny, operator: iampolicy.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := TransformWithParametersT(t, tt.params)
			raw := tmpl.ResourcePolicy("TransferApi")
			if raw == nil {
				t.Fatal("TransferApi has no resource policy in its OpenAPI body")
			}
			values := cfnValues{refs: map[string]string{"AWS::AccountId": deployAccount},
				conditions: map[string]bool{"HasApiAllowedPrincipalArns": tt.principals, "HasApiAllowedOrgId": tt.org,
					"HasOperatorPrincipalArns": tt.operators}}
			doc := values.resolve(t, raw)
			for _, s := range doc.(map[string]any)["Statement"].([]any) {
				s := s.(map[string]any)
				whole := s["Resource"] == "execute-api:/*"
				operatorRoutes := fmt.Sprint(s["Resource"]) == "[execute-api:/*/GET/operator/* execute-api:/*/POST/operator/* execute-api:/*/PUT/operator/*]" &&
					(s["Sid"] == "OnlyNamedOperators" || s["Sid"] == "NoOperators")
				if s["Effect"] != "Deny" || s["Principal"] != "*" || s["Action"] != "execute-api:Invoke" || !whole && !operatorRoutes {
					t.Errorf("statement %v: want a Deny of execute-api:Invoke on the whole API (execute-api:/*), or on the operator routes, for any principal", s)
				}
			}
			policy, err := iampolicy.FromValue(doc)
			if err != nil {
				t.Fatal(err)
			}
			for route, want := range map[string]iampolicy.Decision{
				"execute-api:/v1/GET/transfers/tr_1": tt.want, "execute-api:/v1/POST/transfers": tt.want,
				// A client route with "operator" in it: the account may be called that.
				"execute-api:/v1/GET/accounts/operator/transfers": tt.want,
				"execute-api:/v1/POST/operator/accounts":          tt.operator, "execute-api:/v1/GET/operator/transfers/tr_1/history": tt.operator,
				"execute-api:/v1/PUT/operator/accounts/acc-1/owner": tt.operator,
			} {
				got := policy.Evaluate(iampolicy.Request{Action: "execute-api:Invoke", Resource: route, Context: tt.caller})
				if got != want {
					t.Errorf("%s: %v, want %v; policy %v", route, got, want, doc)
				}
			}
		})
	}
}

// TestBroadInvokeGrantMakesNoOperator: a principal of the account whose IAM policy grants execute-api:Invoke on every
// API (AWS's managed AmazonAPIGatewayInvokeFullAccess; AdministratorAccess and execute-api:* grant as much) may call
// the client routes, where it acts on its own accounts only, and is refused every operator route unless
// OperatorPrincipalArns names it. Decided as API Gateway decides for a principal of the API's account: an explicit
// deny in either policy refuses, else an allow in either is enough.
func TestBroadInvokeGrantMakesNoOperator(t *testing.T) {
	invokeFullAccess, err := iampolicy.FromValue(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Action": []any{"execute-api:Invoke", "execute-api:ManageConnections"}, "Resource": "arn:aws:execute-api:*:*:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	const (
		holder = "arn:aws:iam::" + deployAccount + ":role/reporting"
		ops    = "arn:aws:iam::" + deployAccount + ":role/ops-oncall"
	)
	for _, tt := range []struct {
		name      string
		params    map[string]any
		operators bool
		caller    string
		operator  bool // may call the operator routes
	}{
		{name: "no operators named", caller: holder},
		{name: "others named", params: map[string]any{"OperatorPrincipalArns": []any{ops}}, operators: true, caller: holder},
		{name: "the holder named", params: map[string]any{"OperatorPrincipalArns": []any{ops, holder}}, operators: true, caller: holder, operator: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			values := cfnValues{refs: map[string]string{"AWS::AccountId": deployAccount},
				conditions: map[string]bool{"HasApiAllowedPrincipalArns": false, "HasApiAllowedOrgId": false, "HasOperatorPrincipalArns": tt.operators}}
			resource, err := iampolicy.FromValue(values.resolve(t, TransformWithParametersT(t, tt.params).ResourcePolicy("TransferApi")))
			if err != nil {
				t.Fatal(err)
			}
			ctx := principal(deployAccount, tt.caller, "")
			for _, route := range []string{"GET/transfers/tr_1", "POST/transfers", "GET/accounts/operator/transfers", "POST/operator/accounts",
				"PUT/operator/accounts/acc-1/owner", "POST/operator/transfers", "GET/operator/transfers/tr_1/history"} {
				identity := invokeFullAccess.Evaluate(iampolicy.Request{Action: "execute-api:Invoke",
					Resource: "arn:aws:execute-api:us-east-1:" + deployAccount + ":a1b2c3d4e5/v1/" + route, Context: ctx})
				res := resource.Evaluate(iampolicy.Request{Action: "execute-api:Invoke", Resource: "execute-api:/v1/" + route, Context: ctx})
				allowed := identity != iampolicy.Deny && res != iampolicy.Deny && (identity == iampolicy.Allow || res == iampolicy.Allow)
				if want := !strings.Contains(route, "/operator/") || strings.HasPrefix(route, "GET/accounts/") || tt.operator; allowed != want {
					t.Errorf("%s: identity %v, resource policy %v: allowed %v, want %v", route, identity, res, allowed, want)
				}
			}
		})
	}
}

// TestManagedPoliciesGrantExactlyTheirRoutes: TransferClientPolicy allows execute-api:Invoke on exactly the API's
// six client routes and TransferOperatorPolicy on exactly its seven /operator/ routes, as the template's Api events
// define them, on the API's stage; the only wildcard is a path parameter, and no resource of one covers a route of
// the other. Neither is attached to anything in the stack; their ARNs are outputs.
func TestManagedPoliciesGrantExactlyTheirRoutes(t *testing.T) {
	tmpl := TransformT(t)
	var client, operator []Method
	for _, m := range tmpl.APIMethods() {
		if m.API != "TransferApi" {
			t.Errorf("%s: a method of another API", m)
			continue
		}
		if strings.HasPrefix(m.Path, "/operator/") {
			operator = append(operator, m)
		} else {
			client = append(client, m)
		}
	}
	if len(client) != 6 || len(operator) != 7 {
		t.Fatalf("client routes %v, operator routes %v: want 6 and 7", client, operator)
	}
	stages := tmpl.Stages("TransferApi")
	if len(stages) == 0 {
		t.Fatal("TransferApi has no stage")
	}
	all := slices.Concat(client, operator)
	for _, tt := range []struct {
		name   string
		policy string
		routes []Method
	}{
		{name: "client", policy: "TransferClientPolicy", routes: client},
		{name: "operator", policy: "TransferOperatorPolicy", routes: operator},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, ok := tmpl.Resources[tt.policy]
			if !ok || res.Type != "AWS::IAM::ManagedPolicy" {
				t.Fatalf("%s: no AWS::IAM::ManagedPolicy", tt.policy)
			}
			for _, attach := range []string{"Roles", "Users", "Groups"} {
				if v, ok := res.Properties[attach]; ok {
					t.Errorf("%s is attached to %s %v in the stack; principals attach it themselves", tt.policy, attach, v)
				}
			}
			var got []string
			doc, _ := res.Properties["PolicyDocument"].(map[string]any)
			stmts, ok := doc["Statement"].([]any)
			if !ok {
				stmts = []any{doc["Statement"]}
			}
			for _, s := range stmts {
				sm, _ := s.(map[string]any)
				if sm["Effect"] != "Allow" || !slices.Equal(stringList(sm["Action"]), []string{"execute-api:Invoke"}) ||
					sm["Condition"] != nil || sm["NotAction"] != nil || sm["NotResource"] != nil {
					t.Errorf("%s: statement %v: want an Allow of execute-api:Invoke alone, with no condition", tt.policy, sm)
				}
				for _, r := range stringList(sm["Resource"]) {
					// The transform runs in the aws partition, whose name SAM writes literally in the ARNs it makes.
					got = append(got, strings.Replace(r, "arn:${AWS::Partition}:", "arn:aws:", 1))
				}
			}
			var want []string
			for _, m := range tt.routes {
				for _, stage := range stages {
					want = append(want, m.ARN(stage))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s grants\n  %s\nwant exactly its routes' method ARNs (a path parameter is the only wildcard)\n  %s",
					tt.policy, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			for _, m := range all {
				if slices.ContainsFunc(tt.routes, func(r Method) bool { return r.String() == m.String() }) {
					continue
				}
				for _, stage := range stages {
					// A request of the method, each path parameter given a value.
					request := strings.ReplaceAll(m.ARN(stage), "*", "p1")
					for _, r := range got {
						if iampolicy.Match(r, request) {
							t.Errorf("%s: %s covers %s, a route of the other policy", tt.policy, r, m)
						}
					}
				}
			}
			out, ok := tmpl.Outputs[tt.policy+"Arn"]
			if want := map[string]any{"Ref": tt.policy}; !ok || !reflect.DeepEqual(out.Value, want) {
				t.Errorf("output %sArn = %v, want %v", tt.policy, out.Value, want)
			}
		})
	}
}

// TestEventBusPolicy: the outcome events' bus refuses events:PutEvents to every principal but the two roles granted
// it, the workflow's and the reconciler's, with an explicit deny that no IAM policy can lift. Nothing else in the
// stack needs to put events on it: no rule targets it and no function's asynchronous invocations end there.
func TestEventBusPolicy(t *testing.T) {
	tmpl := TransformT(t)
	const bus = "TransferEventBus"
	var policies []string
	for _, id := range tmpl.OfType("AWS::Events::EventBusPolicy") {
		if ref(tmpl.Resources[id].Properties["EventBusName"]) == bus {
			policies = append(policies, id)
		}
	}
	if len(policies) != 1 {
		t.Fatalf("event bus policies of %s: %v, want one", bus, policies)
	}
	stmt, _ := tmpl.Resources[policies[0]].Properties["Statement"].(map[string]any)

	// The roles the template grants events:PutEvents on the bus are the ones the policy lets through.
	var granted []string
	for _, s := range tmpl.RoleStatements() {
		if s.Effect == "Allow" && slices.Contains(s.Action, "events:PutEvents") && slices.Contains(s.Resource, "${"+bus+".Arn}") {
			granted = append(granted, "${"+s.Role+".Arn}")
		}
	}
	cond, _ := stmt["Condition"].(map[string]any)
	arnNotEquals, _ := cond["ArnNotEquals"].(map[string]any)
	exempt := stringList(arnNotEquals["aws:PrincipalArn"])
	slices.Sort(granted)
	slices.Sort(exempt)
	if len(granted) != 1 || !slices.Equal(granted, exempt) {
		t.Errorf("roles granted events:PutEvents on %s: %v; the bus policy lets through %v", bus, granted, exempt)
	}
	if stmt["Effect"] != "Deny" || stmt["Principal"] != "*" || stmt["Action"] != "events:PutEvents" ||
		Render(stmt["Resource"]) != "${"+bus+".Arn}" || len(cond) != 1 {
		t.Errorf("bus policy statement %v: want a Deny of events:PutEvents on the bus to any principal whose ARN is not one of the roles", stmt)
	}

	for _, id := range tmpl.OfType("AWS::Events::Rule") {
		targets, _ := tmpl.Resources[id].Properties["Targets"].([]any)
		for _, tg := range targets {
			if m, _ := tg.(map[string]any); Render(m["Arn"]) == "${"+bus+".Arn}" {
				t.Errorf("rule %s targets %s: EventBridge would put events on it, which its policy denies", id, bus)
			}
		}
	}
	for _, fn := range tmpl.OfType("AWS::Lambda::Function") {
		for _, g := range asyncDestinations(tmpl, fn) {
			if g.resource == "${"+bus+".Arn}" {
				t.Errorf("%s's asynchronous invocations end on %s, which its policy denies", fn, bus)
			}
		}
	}

	roleArn := func(account, name string) string { return "arn:aws:iam::" + account + ":role/stack-" + name + "-1ABC" }
	values := cfnValues{refs: map[string]string{bus + ".Arn": "arn:aws:events:us-east-1:" + deployAccount + ":event-bus/stack-transfers"}}
	for _, role := range []string{"OutcomeRelayRole", "TransferStateMachineRole", "TimeoutReconcilerRole", "OrchestratorRole"} {
		values.refs[role+".Arn"] = roleArn(deployAccount, role)
	}
	policy, err := iampolicy.FromValue(map[string]any{"Statement": values.resolve(t, stmt)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		caller map[string][]string
		want   iampolicy.Decision
	}{
		{name: "the outcome relay", caller: principal(deployAccount, roleArn(deployAccount, "OutcomeRelayRole"), ""), want: iampolicy.NotApplicable},
		{name: "the workflow", caller: principal(deployAccount, roleArn(deployAccount, "TransferStateMachineRole"), ""), want: iampolicy.Deny},
		{name: "the reconciler", caller: principal(deployAccount, roleArn(deployAccount, "TimeoutReconcilerRole"), ""), want: iampolicy.Deny},
		{name: "the orchestrator", caller: principal(deployAccount, roleArn(deployAccount, "OrchestratorRole"), ""), want: iampolicy.Deny},
		{name: "a user of the account", caller: principal(deployAccount, "arn:aws:iam::"+deployAccount+":user/admin", ""), want: iampolicy.Deny},
		{name: "a role of that name in another account", caller: principal(otherAccount, roleArn(otherAccount, "OutcomeRelayRole"), ""), want: iampolicy.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policy.Evaluate(iampolicy.Request{Action: "events:PutEvents", Resource: values.refs[bus+".Arn"], Context: tt.caller})
			if got != tt.want {
				t.Errorf("PutEvents: %v, want %v", got, tt.want)
			}
		})
	}
}
