package stack

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/transferflow/orchestrator/localaws/gateway"
	"github.com/transferflow/orchestrator/localaws/iampolicy"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

func TestOperatorFlag(t *testing.T) {
	c, err := ParseFlags([]string{"--operator", "arn:aws:iam::000000000000:user/operator", "--operator", "arn:aws:iam::*:role/ops-*"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"arn:aws:iam::000000000000:user/operator", "arn:aws:iam::*:role/ops-*"}; !slices.Equal(c.Operators, want) {
		t.Errorf("Operators = %q, want %q", c.Operators, want)
	}
	if _, err := ParseFlags([]string{"--operator", ""}, io.Discard); err == nil {
		t.Error("an empty --operator accepted")
	}
	if _, err := ParseFlags([]string{"--operator", "arn:aws:iam::000000000000:user/a,b"}, io.Discard); err == nil {
		t.Error("an --operator with a comma accepted: it would be two patterns of OperatorPrincipalArns")
	}
}

// session is the principal of a session of role in the local account.
func session(role, name string) gateway.Principal {
	return gateway.Principal{UserARN: "arn:aws:sts::" + AccountID + ":assumed-role/" + role + "/" + name,
		ARN: "arn:aws:iam::" + AccountID + ":role/" + role, Account: AccountID}
}

func localUser(name string) gateway.Principal {
	arn := "arn:aws:iam::" + AccountID + ":user/" + name
	return gateway.Principal{UserARN: arn, ARN: arn, Account: AccountID}
}

// TestTemplatePoliciesLocally reads template.yaml's two managed policies as the stack does and gives them by
// --operator: an operator may invoke the operator routes and no other, every other caller the client routes and no
// other, on the gateway's API and stage. The API's resource policy lets through to the operator routes the same
// principals.
func TestTemplatePoliciesLocally(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{tmpl: tmpl, names: newNames(tmpl), cfg: Config{Operators: []string{
		"arn:aws:iam::000000000000:user/operator", "arn:aws:iam::000000000000:role/ops-*", "arn:aws:sts::000000000000:assumed-role/oncall/*"}}}
	policies, err := s.identityPolicies()
	if err != nil {
		t.Fatal(err)
	}
	method := func(m string) string {
		return "arn:aws:execute-api:" + Region + ":" + AccountID + ":" + APIID + "/v1/" + m
	}
	clientRoute, operatorRoute := method("GET/accounts/acc-alice/transfers"), method("PUT/operator/accounts/acc-alice/owner")
	tests := []struct {
		name      string
		principal gateway.Principal
		operator  bool
	}{
		{name: "the unsigned local user: a client", principal: localUser("local")},
		{name: "the operator user", principal: localUser("operator"), operator: true},
		{name: "a user whose name starts as the operator's: a client", principal: localUser("operator2")},
		{name: "a session of a role matched by its role ARN", principal: session("ops-oncall", "ASIA1"), operator: true},
		{name: "a session matched only by its assumed-role ARN: a client, as API Gateway matches the role's ARN", principal: session("oncall", "ASIA2")},
		{name: "a session of another role: a client", principal: session("payments", "ASIA3")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decide := func(resource string) iampolicy.Decision {
				var ds []iampolicy.Decision
				for _, p := range policies(tt.principal) {
					ds = append(ds, p.Evaluate(iampolicy.Request{Action: "execute-api:Invoke", Resource: resource}))
				}
				return iampolicy.Combine(ds...)
			}
			client, operator := decide(clientRoute), decide(operatorRoute)
			if (client == iampolicy.Allow) == tt.operator || (operator == iampolicy.Allow) != tt.operator {
				t.Errorf("client route %v, operator route %v; want an operator %v", client, operator, tt.operator)
			}
		})
	}

	// The API's resource policy names the same patterns: it denies the operator routes to every principal whose ARN
	// matches none of them, and to every principal without --operator.
	for _, operators := range [][]string{s.cfg.Operators, nil} {
		s := &stack{tmpl: tmpl, names: newNames(tmpl), cfg: Config{Operators: operators}}
		doc, err := tmpl.APIResourcePolicy(s.env(), s.names)
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, st := range doc["Statement"].([]any) {
			st := st.(map[string]any)
			if fmt.Sprint(st["Resource"]) != "[execute-api:/*/GET/operator/* execute-api:/*/POST/operator/* execute-api:/*/PUT/operator/*]" {
				continue
			}
			found = true
			cond, _ := st["Condition"].(map[string]any)
			var got []string
			if like, ok := cond["ArnNotLike"].(map[string]any); ok {
				for _, v := range like["aws:PrincipalArn"].([]any) {
					got = append(got, v.(string))
				}
			}
			if st["Effect"] != "Deny" || !slices.Equal(got, operators) || (operators == nil) != (cond == nil) {
				t.Errorf("--operator %q: the operator routes' statement %v: want a Deny unless aws:PrincipalArn matches them", operators, st)
			}
		}
		if !found {
			t.Errorf("--operator %q: the resource policy %v has no statement on the operator routes", operators, doc)
		}
	}

	s.tmpl = &samtemplate.Template{Resources: map[string]samtemplate.Resource{}}
	if p, err := s.identityPolicies(); err == nil || p != nil {
		t.Errorf("--operator with a template without the policies: %v", err)
	}
}
