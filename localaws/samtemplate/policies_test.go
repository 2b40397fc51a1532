package samtemplate

import (
	"reflect"
	"strings"
	"testing"
)

// policyTemplate has an API whose resource policy narrows by parameters, as template.yaml's does, and a managed
// policy on the API's methods.
const policyTemplate = `Parameters:
  Allowed:
    Type: CommaDelimitedList
    Default: ""
  Org:
    Type: String
    Default: ""
Conditions:
  HasAllowed: !Not [!Equals [!Join ["", !Ref Allowed], ""]]
  HasOrg: !Not [!Equals [!Ref Org, ""]]
  Both: !And [!Condition HasAllowed, {Condition: HasOrg}]
  Either: !Or [!Condition HasAllowed, !Condition HasOrg]
Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      Auth:
        ResourcePolicy:
          CustomStatements:
            - Effect: Deny
              Principal: "*"
              Action: execute-api:Invoke
              Resource: execute-api:/*
              Condition:
                StringNotEquals:
                  aws:PrincipalAccount: !Ref AWS::AccountId
            - !If
              - HasAllowed
              - Effect: Deny
                Principal: "*"
                Action: execute-api:Invoke
                Resource: execute-api:/*
                Condition:
                  ArnNotLike:
                    aws:PrincipalArn: !Ref Allowed
              - !Ref AWS::NoValue
            - Fn::If:
                - HasOrg
                - Effect: Deny
                  Principal: "*"
                  Action: execute-api:Invoke
                  Resource: execute-api:/*
                  Condition:
                    StringNotEquals:
                      aws:PrincipalOrgID: !Ref Org
                - Ref: AWS::NoValue
  Invoke:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument:
        Version: "2012-10-17"
        Statement:
          - Effect: Allow
            Action: execute-api:Invoke
            Resource:
              - !Sub "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${Api}/v1/GET/items/*"
`

func TestAPIResourcePolicy(t *testing.T) {
	tmpl, err := Parse([]byte(policyTemplate))
	if err != nil {
		t.Fatal(err)
	}
	accountOnly := map[string]any{"Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke", "Resource": "execute-api:/*",
		"Condition": map[string]any{"StringNotEquals": map[string]any{"aws:PrincipalAccount": "111122223333"}}}
	principals := func(arns ...any) map[string]any {
		return map[string]any{"Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke", "Resource": "execute-api:/*",
			"Condition": map[string]any{"ArnNotLike": map[string]any{"aws:PrincipalArn": arns}}}
	}
	org := map[string]any{"Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke", "Resource": "execute-api:/*",
		"Condition": map[string]any{"StringNotEquals": map[string]any{"aws:PrincipalOrgID": "o-abcdefghij"}}}
	tests := []struct {
		name   string
		params map[string]string
		want   []any
	}{
		{name: "empty parameters add nothing", want: []any{accountOnly}},
		{name: "a list of principals", params: map[string]string{"Allowed": "arn:aws:iam::111122223333:user/a, arn:aws:iam::111122223333:role/*"},
			want: []any{accountOnly, principals("arn:aws:iam::111122223333:user/a", "arn:aws:iam::111122223333:role/*")}},
		{name: "an organization", params: map[string]string{"Org": "o-abcdefghij"}, want: []any{accountOnly, org}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tmpl.APIResourcePolicy(Env{Region: "us-east-1", AccountID: "111122223333", Parameters: tt.params}, fakeResolver{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"Version": "2012-10-17", "Statement": tt.want}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("APIResourcePolicy =\n%v\nwant\n%v", got, want)
			}
		})
	}
}

func TestAPIResourcePolicyRefuses(t *testing.T) {
	tests := []struct {
		name, template, want string
	}{
		{name: "a form SAM expands", template: `Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      Auth:
        ResourcePolicy:
          IpRangeBlacklist: ["10.0.0.0/8"]
`, want: "Api.Auth.ResourcePolicy.IpRangeBlacklist: not evaluated locally (write it as CustomStatements)"},
		{name: "two APIs", template: `Resources:
  B:
    Type: AWS::Serverless::Api
    Properties: {Auth: {ResourcePolicy: {CustomStatements: []}}}
  A:
    Type: AWS::Serverless::Api
    Properties: {Auth: {ResourcePolicy: {CustomStatements: []}}}
`, want: "APIs [A B] declare Auth.ResourcePolicy: the local stack serves one API"},
		{name: "an intrinsic not resolved locally", template: `Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      Auth:
        ResourcePolicy:
          CustomStatements:
            - Effect: Deny
              Principal: "*"
              Action: execute-api:Invoke
              Resource: !ImportValue shared-resource
`, want: "Api.Auth.ResourcePolicy.CustomStatements: [0]: Resource: line 11: Fn::ImportValue is not resolved locally"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse([]byte(tt.template))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tmpl.APIResourcePolicy(Env{}, fakeResolver{}); err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestManagedPolicy(t *testing.T) {
	tmpl, err := Parse([]byte(policyTemplate))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.ManagedPolicy("Invoke", Env{Region: "eu-west-1", AccountID: "111122223333"}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "execute-api:Invoke",
		"Resource": []any{"arn:aws:execute-api:eu-west-1:111122223333:ref:Api/v1/GET/items/*"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ManagedPolicy =\n%v\nwant\n%v", got, want)
	}
	if _, err := tmpl.ManagedPolicy("Api", Env{}, fakeResolver{}); err == nil {
		t.Error("ManagedPolicy of an API: no error")
	}
}

func TestCondition(t *testing.T) {
	tmpl, err := Parse([]byte(strings.Replace(policyTemplate, "Conditions:\n",
		"Conditions:\n  Cycle: !Not [!Condition Cycle]\n  NotAList: !Not {Condition: HasOrg}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, condition string
		params          map[string]string
		want            bool
		wantErr         string
	}{
		{name: "an empty list parameter", condition: "HasAllowed"},
		{name: "a list parameter", condition: "HasAllowed", params: map[string]string{"Allowed": "a"}, want: true},
		{name: "And of one", condition: "Both", params: map[string]string{"Allowed": "a"}},
		{name: "And of both", condition: "Both", params: map[string]string{"Allowed": "a", "Org": "o-1"}, want: true},
		{name: "Or of one", condition: "Either", params: map[string]string{"Org": "o-1"}, want: true},
		{name: "Or of none", condition: "Either"},
		{name: "an unknown condition", condition: "Nope", wantErr: "condition Nope: not in Conditions"},
		{name: "a cycle", condition: "Cycle", wantErr: "conditions nest deeper than 32 (a cycle?)"},
		{name: "Fn::Not of a mapping", condition: "NotAList", wantErr: "condition NotAList: line 10: Fn::Not takes a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tmpl.Condition(tt.condition, Env{Parameters: tt.params}, fakeResolver{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Condition(%s) = %v, %v; want %v", tt.condition, got, err, tt.want)
			}
		})
	}
}
