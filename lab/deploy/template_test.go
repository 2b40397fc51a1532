package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// apiInvokeProblems returns what would stop API Gateway from invoking the function behind method m for a caller
// allowed only execute-api:Invoke: integration credentials (API Gateway would then call Lambda as the caller, who
// has no lambda:InvokeFunction, and answer 500), a method not authorized with AWS_IAM, or no resource-based policy
// statement (AWS::Lambda::Permission) letting API Gateway invoke the function for the method on each stage of its API.
func apiInvokeProblems(tmpl *Template, m Method) []string {
	var problems []string
	if c, ok := m.Integration["credentials"]; ok {
		problems = append(problems, fmt.Sprintf("%s: integration credentials %v: API Gateway would invoke the "+
			"function with them instead of through its resource-based policy; want none (Auth.InvokeRole: NONE)", m, c))
	}
	if !slices.Contains(m.Security, "AWS_IAM") {
		problems = append(problems, fmt.Sprintf("%s: security %v, want AWS_IAM", m, m.Security))
	}
	fn := m.IntegratedFunction()
	if fn == "" {
		return append(problems, fmt.Sprintf("%s: integration uri %v does not invoke a function of the template",
			m, m.Integration["uri"]))
	}
	stages := tmpl.Stages(m.API)
	if len(stages) == 0 {
		problems = append(problems, fmt.Sprintf("%s: %s has no AWS::ApiGateway::Stage", m, m.API))
	}
	for _, stage := range stages {
		arn := m.ARN(stage)
		if !slices.ContainsFunc(tmpl.LambdaPermissions(), func(p Permission) bool {
			return p.Function == fn && p.Action == "lambda:InvokeFunction" &&
				p.Principal == "apigateway.amazonaws.com" && p.Covers(arn)
		}) {
			problems = append(problems, fmt.Sprintf("%s: no AWS::Lambda::Permission lets apigateway.amazonaws.com "+
				"invoke %s from %s", m, fn, arn))
		}
	}
	return problems
}

func TestAPIMethodsInvokeThroughResourcePolicy(t *testing.T) {
	const callerCredentials = ": integration credentials arn:aws:iam::*:user/*: API Gateway would invoke the " +
		"function with them instead of through its resource-based policy; want none (Auth.InvokeRole: NONE)"
	tests := []struct {
		name     string
		template string          // "" for the project's template.yaml
		edit     func(*Template) // changes the transformed template before the check, or nil
		want     []string
	}{
		{name: "project template", template: ""},
		{
			name:     "default InvokeRole (caller credentials)",
			template: "testdata/caller-credentials.yaml",
			want: []string{
				"ItemsApi GET /items" + callerCredentials,
				"ItemsApi PUT /items/{itemId}" + callerCredentials,
			},
		},
		{
			name:     "no authorizer",
			template: "testdata/open-api.yaml",
			want:     []string{"ItemsApi GET /items: security [], want AWS_IAM"},
		},
		{
			name:     "no Lambda permissions",
			template: "testdata/caller-credentials.yaml",
			edit: func(tmpl *Template) {
				for _, id := range tmpl.OfType("AWS::Lambda::Permission") {
					delete(tmpl.Resources, id)
				}
			},
			want: []string{
				"ItemsApi GET /items" + callerCredentials,
				"ItemsApi GET /items: no AWS::Lambda::Permission lets apigateway.amazonaws.com invoke ItemsFunction " +
					"from arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${ItemsApi}/prod/GET/items",
				"ItemsApi PUT /items/{itemId}" + callerCredentials,
				"ItemsApi PUT /items/{itemId}: no AWS::Lambda::Permission lets apigateway.amazonaws.com invoke " +
					"ItemsFunction from arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${ItemsApi}/prod/PUT/items/*",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tmpl *Template
			if tt.template == "" {
				tmpl = TransformT(t)
			} else {
				tmpl = TransformFileT(t, tt.template)
			}
			if tt.edit != nil {
				tt.edit(tmpl)
			}
			methods := tmpl.APIMethods()
			if len(methods) == 0 {
				t.Fatalf("no API methods in the transformed template: the check would see nothing")
			}
			var got []string
			for _, m := range methods {
				t.Logf("checking %s", m)
				got = append(got, apiInvokeProblems(tmpl, m)...)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%d methods checked; problems:\n%s\nwant:\n%s", len(methods), lines(got), lines(tt.want))
			}
		})
	}
}

func lines(s []string) string {
	if len(s) == 0 {
		return "  (none)"
	}
	return "  " + strings.Join(s, "\n  ")
}
