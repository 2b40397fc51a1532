package iampolicy

import (
	"errors"
	"testing"
)

const (
	api     = "arn:aws:execute-api:us-east-1:111122223333:abc/v1"
	user    = "arn:aws:iam::111122223333:user/alice"
	role    = "arn:aws:iam::111122223333:role/ops/payments"
	foreign = "arn:aws:iam::444455556666:role/intruder"
)

// caller is the context of a request from principal arn of account.
func caller(account, arn string) map[string][]string {
	return map[string][]string{"aws:PrincipalAccount": {account}, "aws:PrincipalArn": {arn}}
}

func TestEvaluate(t *testing.T) {
	invoke := func(resource string, ctx map[string][]string) Request {
		return Request{Action: "execute-api:Invoke", Resource: api + resource, Context: ctx}
	}
	tests := []struct {
		name   string
		policy string
		req    Request
		want   Decision
	}{
		{name: "an allow on the exact resource",
			policy: `{"Statement":[{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"` + api + `/POST/transfers"}]}`,
			req:    invoke("/POST/transfers", caller("111122223333", user)), want: Allow},
		{name: "a single statement object",
			policy: `{"Statement":{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"` + api + `/POST/transfers"}}`,
			req:    invoke("/POST/transfers", nil), want: Allow},
		{name: "another resource: not applicable",
			policy: `{"Statement":[{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"` + api + `/POST/transfers"}]}`,
			req:    invoke("/POST/accounts", nil), want: NotApplicable},
		{name: "a wildcard spans slashes",
			policy: `{"Statement":[{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"` + api + `/GET/transfers/*"}]}`,
			req:    invoke("/GET/transfers/tr_1/history", nil), want: Allow},
		{name: "? is one character",
			policy: `{"Statement":[{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"` + api + `/GET/transfers/tr_?"}]}`,
			req:    invoke("/GET/transfers/tr_12", nil), want: NotApplicable},
		{name: "resources are case-sensitive",
			policy: `{"Statement":[{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"` + api + `/GET/Transfers/*"}]}`,
			req:    invoke("/GET/transfers/tr_1", nil), want: NotApplicable},
		{name: "actions are not",
			policy: `{"Statement":[{"Effect":"Allow","Action":"Execute-API:invoke","Resource":"*"}]}`,
			req:    invoke("/GET/transfers/tr_1", nil), want: Allow},
		{name: "an action wildcard",
			policy: `{"Statement":[{"Effect":"Allow","Action":"execute-api:*","Resource":"*"}]}`,
			req:    invoke("/GET/transfers/tr_1", nil), want: Allow},
		{name: "NotAction",
			policy: `{"Statement":[{"Effect":"Allow","NotAction":"execute-api:ManageConnections","Resource":"*"}]}`,
			req:    invoke("/GET/transfers/tr_1", nil), want: Allow},
		{name: "NotResource",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","NotResource":"` + api + `/*/operator/*"}]}`,
			req:    invoke("/GET/operator/accounts/a", nil), want: NotApplicable},
		{name: "a deny wins over an allow",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":"*","Resource":"` + api + `/*/operator/*"}]}`,
			req:    invoke("/GET/operator/accounts/a", nil), want: Deny},

		{name: "this account only: a principal of it",
			policy: thisAccountOnly, req: invoke("/GET/x", caller("111122223333", user)), want: NotApplicable},
		{name: "this account only: another account's principal",
			policy: thisAccountOnly, req: invoke("/GET/x", caller("444455556666", foreign)), want: Deny},
		{name: "this account only: no principal account (a negated operator holds on a missing key)",
			policy: thisAccountOnly, req: invoke("/GET/x", nil), want: Deny},
		{name: "allowed principals: a user that matches",
			policy: allowedPrincipals, req: invoke("/GET/x", caller("111122223333", user)), want: NotApplicable},
		{name: "allowed principals: a role under a path that matches a wildcard",
			policy: allowedPrincipals, req: invoke("/GET/x", caller("111122223333", role)), want: NotApplicable},
		{name: "allowed principals: another",
			policy: allowedPrincipals, req: invoke("/GET/x", caller("111122223333", "arn:aws:iam::111122223333:user/bob")), want: Deny},
		{name: "an ARN wildcard does not cross a colon",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*"}}}]}`,
			req:    invoke("/GET/x", caller("111122223333", user)), want: NotApplicable},
		{name: "organization: a principal without one (the key is missing)",
			policy: `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"StringNotEquals":{"aws:PrincipalOrgID":"o-abcdefghij"}}}]}`,
			req:    invoke("/GET/x", caller("111122223333", user)), want: Deny},
		{name: "IfExists: a missing key holds",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEqualsIfExists":{"aws:PrincipalOrgID":"o-abcdefghij"}}}]}`,
			req:    invoke("/GET/x", caller("111122223333", user)), want: Allow},
		{name: "a missing key does not hold for a plain operator",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:PrincipalOrgID":"o-abcdefghij"}}}]}`,
			req:    invoke("/GET/x", caller("111122223333", user)), want: NotApplicable},
		{name: "ignoring case",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEqualsIgnoreCase":{"aws:PrincipalArn":"ARN:AWS:IAM::111122223333:USER/ALICE"}}}]}`,
			req:    invoke("/GET/x", caller("111122223333", user)), want: Allow},

		{name: "LeadingKeys: every key within the prefixes",
			policy: leadingKeys, req: Request{Action: "dynamodb:GetItem", Resource: "t", Context: map[string][]string{"dynamodb:LeadingKeys": {"A#1", "B#2"}}}, want: Allow},
		{name: "LeadingKeys: one key outside",
			policy: leadingKeys, req: Request{Action: "dynamodb:GetItem", Resource: "t", Context: map[string][]string{"dynamodb:LeadingKeys": {"A#1", "C#2"}}}, want: NotApplicable},
		{name: "LeadingKeys: no key at all passes ForAllValues",
			policy: leadingKeys, req: Request{Action: "dynamodb:Scan", Resource: "t"}, want: Allow},
		{name: "ForAnyValue: one key is enough",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForAnyValue:StringLike":{"dynamodb:LeadingKeys":"A#*"}}}]}`,
			req:    Request{Action: "dynamodb:GetItem", Resource: "t", Context: map[string][]string{"dynamodb:LeadingKeys": {"C#1", "A#2"}}}, want: Allow},
		{name: "ForAnyValue: no key fails",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForAnyValue:StringLike":{"dynamodb:LeadingKeys":"A#*"}}}]}`,
			req:    Request{Action: "dynamodb:Scan", Resource: "t"}, want: NotApplicable},
		{name: "ForAllValues with a negated operator",
			policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForAllValues:StringNotLike":{"dynamodb:LeadingKeys":"A#*"}}}]}`,
			req:    Request{Action: "dynamodb:GetItem", Resource: "t", Context: map[string][]string{"dynamodb:LeadingKeys": {"B#1", "A#2"}}}, want: NotApplicable},

		{name: "principal: anyone",
			policy: `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"*","Resource":"*"}]}`,
			req:    invoke("/GET/x", caller("444455556666", foreign)), want: Allow},
		{name: "principal: an account by its id",
			policy: `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"*","Resource":"*"}]}`,
			req:    invoke("/GET/x", caller("111122223333", role)), want: Allow},
		{name: "principal: an account by its root ARN, another account",
			policy: `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"*","Resource":"*"}]}`,
			req:    invoke("/GET/x", caller("444455556666", foreign)), want: NotApplicable},
		{name: "principal: a role's ARN covers its sessions",
			policy: `{"Statement":[{"Effect":"Allow","Principal":{"AWS":["` + role + `"]},"Action":"*","Resource":"*"}]}`,
			req:    invoke("/GET/x", caller("111122223333", role)), want: Allow},
		{name: "principal: another principal",
			policy: `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + role + `"},"Action":"*","Resource":"*"}]}`,
			req:    invoke("/GET/x", caller("111122223333", user)), want: NotApplicable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Evaluate(tt.req); got != tt.want {
				t.Errorf("Evaluate = %v, want %v", got, tt.want)
			}
		})
	}
}

// The resource policy shapes of template.yaml's API.
const (
	thisAccountOnly = `{"Version":"2012-10-17","Statement":[{"Sid":"OnlyThisAccount","Effect":"Deny","Principal":"*",
		"Action":"execute-api:Invoke","Resource":"*","Condition":{"StringNotEquals":{"aws:PrincipalAccount":"111122223333"}}}]}`
	allowedPrincipals = `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"execute-api:Invoke","Resource":"*",
		"Condition":{"ArnNotLike":{"aws:PrincipalArn":["` + user + `","arn:aws:iam::111122223333:role/ops/*"]}}}]}`
	leadingKeys = `{"Statement":[{"Effect":"Allow","Action":"dynamodb:*","Resource":"*",
		"Condition":{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["A#*","B#*"]}}}]}`
)

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name        string
		policy      string
		unsupported bool
	}{
		{name: "not JSON", policy: `{`},
		{name: "no Statement", policy: `{"Version":"2012-10-17"}`},
		{name: "an unknown effect", policy: `{"Statement":[{"Effect":"Maybe","Action":"*","Resource":"*"}]}`},
		{name: "no action", policy: `{"Statement":[{"Effect":"Allow","Resource":"*"}]}`},
		{name: "Action and NotAction", policy: `{"Statement":[{"Effect":"Allow","Action":"*","NotAction":"a:b","Resource":"*"}]}`},
		{name: "no resource", policy: `{"Statement":[{"Effect":"Allow","Action":"*"}]}`},
		{name: "a number as the resource", policy: `{"Statement":[{"Effect":"Allow","Action":"*","Resource":1}]}`},
		{name: "NotPrincipal", policy: `{"Statement":[{"Effect":"Deny","NotPrincipal":{"AWS":"*"},"Action":"*","Resource":"*"}]}`, unsupported: true},
		{name: "a service principal", policy: `{"Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"*","Resource":"*"}]}`, unsupported: true},
		{name: "an address condition", policy: `{"Statement":[{"Effect":"Deny","Action":"*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`, unsupported: true},
		{name: "another set operator", policy: `{"Statement":[{"Effect":"Deny","Action":"*","Resource":"*","Condition":{"ForSomeValues:StringLike":{"k":"v"}}}]}`, unsupported: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.policy))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			if errors.Is(err, ErrUnsupported) != tt.unsupported {
				t.Errorf("error %v: unsupported = %v, want %v", err, errors.Is(err, ErrUnsupported), tt.unsupported)
			}
		})
	}
}

func TestCombine(t *testing.T) {
	tests := []struct {
		name string
		ds   []Decision
		want Decision
	}{
		{name: "nothing", want: NotApplicable},
		{name: "an allow", ds: []Decision{NotApplicable, Allow}, want: Allow},
		{name: "a deny wins", ds: []Decision{Allow, Deny, NotApplicable}, want: Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Combine(tt.ds...); got != tt.want {
				t.Errorf("Combine(%v) = %v, want %v", tt.ds, got, tt.want)
			}
		})
	}
}
