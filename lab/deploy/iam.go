package deploy

import (
	"encoding/json"
	"fmt"
)

// Statement is one statement of an IAM policy in the template, its Action and Resource lists normalised to strings:
// an intrinsic becomes the form Fn::Sub reads ({"Ref": "T"} is "${T}", {"Fn::GetAtt": ["T", "Arn"]} is
// "${T.Arn}", a Fn::Sub its template with Ref and GetAtt variables written back).
type Statement struct {
	// Role is the logical id of the role the statement belongs to.
	Role string
	// Policy is the name of the inline policy.
	Policy   string
	Sid      string
	Effect   string
	Action   []string
	Resource []string
	// Condition is the statement's Condition block as decoded from JSON (nil without one).
	Condition map[string]any
	// LeadingKeys are the patterns of a ForAllValues:StringLike condition on dynamodb:LeadingKeys: the statement
	// applies only to items whose partition key matches one of them. Nil without that condition.
	LeadingKeys []string
}

func (s Statement) String() string {
	str := fmt.Sprintf("%s/%s/%s %s %v on %v", s.Role, s.Policy, s.Sid, s.Effect, s.Action, s.Resource)
	if s.LeadingKeys != nil {
		str += fmt.Sprintf(" for keys %v", s.LeadingKeys)
	}
	return str
}

// leadingKeysCondition is the condition operator and key of a LeadingKeys condition: every partition key the
// request names must match one of the patterns (a request that names none, such as a Scan, passes it).
const (
	leadingKeysOperator = "ForAllValues:StringLike"
	leadingKeysKey      = "dynamodb:LeadingKeys"
)

// RoleStatements returns the statements of the inline policies of every AWS::IAM::Role, by role and policy in
// template order. Statements written as a single object rather than a list are returned too.
func (t *Template) RoleStatements() []Statement {
	var out []Statement
	for _, role := range t.OfType("AWS::IAM::Role") {
		policies, _ := t.Resources[role].Properties["Policies"].([]any)
		for _, p := range policies {
			pm, _ := p.(map[string]any)
			name, _ := pm["PolicyName"].(string)
			doc, _ := pm["PolicyDocument"].(map[string]any)
			stmts, ok := doc["Statement"].([]any)
			if !ok {
				stmts = []any{doc["Statement"]}
			}
			for _, st := range stmts {
				sm, _ := st.(map[string]any)
				sid, _ := sm["Sid"].(string)
				effect, _ := sm["Effect"].(string)
				cond, _ := sm["Condition"].(map[string]any)
				like, _ := cond[leadingKeysOperator].(map[string]any)
				out = append(out, Statement{
					Role: role, Policy: name, Sid: sid, Effect: effect,
					Action: stringList(sm["Action"]), Resource: stringList(sm["Resource"]),
					Condition: cond, LeadingKeys: stringList(like[leadingKeysKey]),
				})
			}
		}
	}
	return out
}

// ManagedPolicies returns the ManagedPolicyArns of every AWS::IAM::Role, rendered as Render does, by role.
func (t *Template) ManagedPolicies() map[string][]string {
	out := map[string][]string{}
	for _, role := range t.OfType("AWS::IAM::Role") {
		if arns := stringList(t.Resources[role].Properties["ManagedPolicyArns"]); len(arns) > 0 {
			out[role] = arns
		}
	}
	return out
}

// FunctionRole returns the logical id of the AWS::IAM::Role a function's Role property names, or "".
func (t *Template) FunctionRole(function string) string {
	return ref(t.Resources[function].Properties["Role"])
}

// stringList normalises a string or a list of strings and intrinsics to []string, each rendered by Render.
func stringList(v any) []string {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, Render(e))
	}
	return out
}

// Render writes a template value as a string: a string as is, {"Ref": "X"} as "${X}", {"Fn::GetAtt": ["X", "A"]}
// as "${X.A}", a Fn::Sub as its template with Ref and GetAtt variables written back (see subString), and anything
// else as JSON.
func Render(v any) string {
	if s, ok := subString(v); ok {
		return s
	}
	if m, ok := v.(map[string]any); ok {
		if id, ok := m["Ref"].(string); ok {
			return "${" + id + "}"
		}
		if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
			return fmt.Sprintf("${%v.%v}", ga[0], ga[1])
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// PartitionKey returns the name of the partition (HASH) key attribute of the AWS::DynamoDB::Table table, the
// attribute whose value dynamodb:LeadingKeys is, or "" when the table or its key schema is not in the template.
func (t *Template) PartitionKey(table string) string {
	schema, _ := t.Resources[table].Properties["KeySchema"].([]any)
	for _, e := range schema {
		m, _ := e.(map[string]any)
		if m["KeyType"] == "HASH" {
			name, _ := m["AttributeName"].(string)
			return name
		}
	}
	return ""
}
