package deploy

import (
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// subVariable matches a variable of a Fn::Sub template, ${Name} or ${Name.Attr}, but not the literal ${!Name}.
var subVariable = regexp.MustCompile(`\$\{([A-Za-z0-9:]+)(?:\.[A-Za-z0-9.]+)?\}`)

// references adds to out the logical ids of tmpl's resources that v refers to by Ref, Fn::GetAtt or a Fn::Sub
// variable, following only the branch of each Fn::If that conds takes (a condition not in conds is false), as
// CloudFormation does once it has evaluated the conditions.
func references(tmpl *Template, v any, conds map[string]bool, out map[string]bool) {
	add := func(id string) {
		if _, ok := tmpl.Resources[id]; ok {
			out[id] = true
		}
	}
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			references(tmpl, e, conds, out)
		}
	case map[string]any:
		if c, ok := v["Fn::If"].([]any); ok && len(c) == 3 {
			name, _ := c[0].(string)
			if conds[name] {
				references(tmpl, c[1], conds, out)
			} else {
				references(tmpl, c[2], conds, out)
			}
			return
		}
		if id, ok := v["Ref"].(string); ok {
			add(id)
		}
		switch ga := v["Fn::GetAtt"].(type) {
		case []any:
			if len(ga) > 0 {
				id, _ := ga[0].(string)
				add(id)
			}
		case string:
			add(strings.SplitN(ga, ".", 2)[0])
		}
		if sub, ok := v["Fn::Sub"]; ok {
			var text string
			switch s := sub.(type) {
			case string:
				text = s
			case []any:
				if len(s) == 2 {
					text, _ = s[0].(string)
					references(tmpl, s[1], conds, out)
				}
			}
			for _, m := range subVariable.FindAllStringSubmatch(text, -1) {
				add(m[1])
			}
			return
		}
		for _, e := range v {
			references(tmpl, e, conds, out)
		}
	}
}

// dependencies returns every resource id must wait for when CloudFormation creates it with the conditions conds:
// those its properties and metadata refer to and those its DependsOn names, and theirs, transitively; sorted.
func dependencies(tmpl *Template, id string, conds map[string]bool) []string {
	seen := map[string]bool{}
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		r := tmpl.Resources[cur]
		direct := map[string]bool{}
		references(tmpl, r.Properties, conds, direct)
		references(tmpl, r.Metadata, conds, direct)
		for _, d := range stringList(r.DependsOn) {
			direct[d] = true
		}
		for d := range direct {
			if !seen[d] && d != id {
				seen[d] = true
				queue = append(queue, d)
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// TestApiGatewayLoggingRoleIsOptIn: API Gateway's CloudWatch role is an account setting, one per account and region.
// The stack leaves it alone unless CreateApiGatewayLoggingRole is "true" (not the default, and not in samconfig.toml,
// TestSamconfigEnvironments); when it is, the role trusts API Gateway exactly as AWS documents it, and the API's
// stage, whose logging needs the setting, is created after it. DependsOn cannot name a conditional resource from an
// unconditional one (CloudFormation refuses the template when the condition is false), so every DependsOn is checked
// for that too.
func TestApiGatewayLoggingRoleIsOptIn(t *testing.T) {
	tmpl := TransformT(t)
	const param = "CreateApiGatewayLoggingRole"
	if d := Render(tmpl.Parameters[param]["Default"]); d != "false" {
		t.Errorf("parameter %s defaults to %s, want false (the account setting is opt-in)", param, d)
	}
	cond := "CreateApiGatewayLoggingRole"
	if got := Render(tmpl.Conditions[cond]); got != `{"Fn::Equals":[{"Ref":"`+param+`"},"true"]}` {
		t.Errorf("condition %s is %s, want the parameter equal to \"true\"", cond, got)
	}
	accounts := tmpl.OfType("AWS::ApiGateway::Account")
	if len(accounts) != 1 {
		t.Fatalf("AWS::ApiGateway::Account resources %v, want 1", accounts)
	}
	account := tmpl.Resources[accounts[0]]
	if account.Condition != cond {
		t.Errorf("%s: Condition %q, want %s", accounts[0], account.Condition, cond)
	}
	role := ref(account.Properties["CloudWatchRoleArn"])
	r, ok := tmpl.Resources[role]
	if !ok || r.Type != "AWS::IAM::Role" {
		t.Fatalf("%s: CloudWatchRoleArn %v is not a role of the template", accounts[0], account.Properties["CloudWatchRoleArn"])
	}
	if r.Condition != cond {
		t.Errorf("%s: Condition %q, want %s", role, r.Condition, cond)
	}
	// The trust policy of AWS's guide to API Gateway logging, with no condition that API Gateway's AssumeRole call
	// might not meet.
	want := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"Service": "apigateway.amazonaws.com"}, "Action": "sts:AssumeRole",
	}}}
	if got := r.Properties["AssumeRolePolicyDocument"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s: trust policy %s, want %s", role, g, w)
	}
	if got := stringList(r.Properties["ManagedPolicyArns"]); !slices.Equal(got,
		[]string{"arn:${AWS::Partition}:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"}) {
		t.Errorf("%s: managed policies %v, want AmazonAPIGatewayPushToCloudWatchLogs only", role, got)
	}

	stages := apiStages(t, tmpl)
	for _, stage := range stages {
		if deps := dependencies(tmpl, stage, map[string]bool{cond: true}); !slices.Contains(deps, accounts[0]) {
			t.Errorf("with %s, %s is not created after %s: it depends on %v", cond, stage, accounts[0], deps)
		}
		if deps := dependencies(tmpl, stage, map[string]bool{cond: false}); slices.Contains(deps, accounts[0]) {
			t.Errorf("without %s, %s still depends on %s, which is not created", cond, stage, accounts[0])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(tmpl.Resources)) {
		res := tmpl.Resources[id]
		for _, d := range stringList(res.DependsOn) {
			dep, ok := tmpl.Resources[d]
			if !ok {
				t.Errorf("%s: DependsOn %s, which is not a resource of the template", id, d)
			} else if dep.Condition != "" && dep.Condition != res.Condition {
				t.Errorf("%s: DependsOn %s, which exists only under condition %s: CloudFormation refuses the "+
					"template when it is false", id, d, dep.Condition)
			}
		}
	}
}
