package samtemplate

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// ManagedPolicy returns the PolicyDocument of the template's AWS::IAM::ManagedPolicy id as plain JSON values, its
// intrinsics resolved through r and env (Fn::Sub of pseudo parameters and of the API's id, Fn::If on the
// template's conditions, …).
func (t *Template) ManagedPolicy(id string, env Env, r Resolver) (map[string]any, error) {
	res, ok := t.Resources[id]
	if !ok || res.Type != "AWS::IAM::ManagedPolicy" {
		return nil, fmt.Errorf("%s: no AWS::IAM::ManagedPolicy of that name in the template", id)
	}
	doc := mapping(&res.Properties, "PolicyDocument")
	if doc == nil {
		return nil, fmt.Errorf("%s: no PolicyDocument", id)
	}
	v, err := t.toJSONValue(doc, env, r)
	if err != nil {
		return nil, fmt.Errorf("%s.PolicyDocument: %w", id, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s.PolicyDocument: want a mapping", id)
	}
	return m, nil
}

// APIResourcePolicy returns the resource policy of the template's AWS::Serverless::Api, as the policy document API
// Gateway is given ({"Version": "2012-10-17", "Statement": […]}, intrinsics resolved; a statement that is
// AWS::NoValue left out), or nil when no API declares one. Only Auth.ResourcePolicy.CustomStatements are read: the
// other forms SAM turns into statements (AwsAccountWhitelist, IpRangeBlacklist, …) are an error, so that a policy
// is never evaluated locally without them. More than one API declaring a resource policy is an error: the local
// stack serves one API.
func (t *Template) APIResourcePolicy(env Env, r Resolver) (map[string]any, error) {
	api, rp, err := t.apiProperty("Auth", "ResourcePolicy")
	if rp == nil || err != nil {
		return nil, err
	}
	where := api + ".Auth.ResourcePolicy"
	if rp.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: line %d: want a mapping", where, rp.Line)
	}
	for i := 0; i+1 < len(rp.Content); i += 2 {
		if key := rp.Content[i].Value; key != "CustomStatements" {
			return nil, fmt.Errorf("%s.%s: not evaluated locally (write it as CustomStatements)", where, key)
		}
	}
	custom := mapping(rp, "CustomStatements")
	if custom == nil {
		return nil, nil
	}
	v, err := t.toJSONValue(custom, env, r)
	if err != nil {
		return nil, fmt.Errorf("%s.CustomStatements: %w", where, err)
	}
	stmts, ok := v.([]any)
	if !ok {
		stmts = []any{v}
	}
	return map[string]any{"Version": "2012-10-17", "Statement": stmts}, nil
}
