package gateway

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/transferflow/orchestrator/localaws/iampolicy"
)

// ResponseAccessDenied is the gateway response of a caller that neither its IAM policies nor the API's resource
// policy allow to invoke the method, or that one of them explicitly denies.
const ResponseAccessDenied = "ACCESS_DENIED"

// API Gateway's message for a refused execute-api:Invoke, as AWS documents it for a REST API with IAM authorization
// or a resource policy ("How do I troubleshoot HTTP 403 errors from API Gateway?", AWS Knowledge Center): the
// caller's ARN and the method's ARN, whose account API Gateway masks but for its last four digits; an explicit deny
// adds msgExplicitDeny.
const (
	msgNotAuthorized = "User: %s is not authorized to perform: execute-api:Invoke on resource: %s"
	msgExplicitDeny  = " with an explicit deny"
)

// invokeAction is the IAM action of calling a method of an API.
const invokeAction = "execute-api:Invoke"

// Principal is who a request comes from, as IAM sees it.
type Principal struct {
	// UserARN is the caller's ARN as API Gateway reports it (requestContext.identity.userArn): an IAM user's ARN, or
	// arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION for a session of a role.
	UserARN string
	// ARN is the condition key aws:PrincipalArn: the user's ARN, or the role's, arn:aws:iam::ACCOUNT:role/[PATH/]ROLE,
	// for a session of the role.
	ARN string
	// Account is the principal's account (aws:PrincipalAccount).
	Account string
}

// context is the principal's condition keys. A principal of the local stack is in no organization, so
// aws:PrincipalOrgID is missing, as it is on AWS for an account outside AWS Organizations.
func (p Principal) context() map[string][]string {
	return map[string][]string{"aws:PrincipalArn": {p.ARN}, "aws:PrincipalAccount": {p.Account}}
}

// authorizer decides whether a principal may invoke a method, as API Gateway does for a method with AWS_IAM
// authorization and a resource policy.
type authorizer struct {
	// identity gives a principal's IAM policies; nil: IAM allows every principal every method.
	identity func(Principal) []*iampolicy.Policy
	// resource is the API's resource policy; nil: none.
	resource *iampolicy.Policy
	// account is the API's.
	account string
}

// decide returns nil when p may invoke the method methodARN, else the gatewayError API Gateway answers. An explicit
// deny in either policy refuses; then, for a principal of the API's account, an allow in either is enough, and for
// another account's, both must allow (API Gateway's "authorization flow" for IAM and resource policies). Without
// either policy nothing is evaluated and every caller may invoke every method.
func (a authorizer) decide(p Principal, methodARN string) *gatewayError {
	if a.identity == nil && a.resource == nil {
		return nil
	}
	req := iampolicy.Request{Action: invokeAction, Resource: methodARN, Context: p.context()}
	resource := iampolicy.NotApplicable
	if a.resource != nil {
		resource = a.resource.Evaluate(req)
	}
	identity := iampolicy.Allow
	if a.identity != nil {
		identity = iampolicy.NotApplicable
		for _, policy := range a.identity(p) {
			identity = iampolicy.Combine(identity, policy.Evaluate(req))
		}
	}
	allowed := identity == iampolicy.Allow || resource == iampolicy.Allow
	if p.Account != a.account {
		allowed = identity == iampolicy.Allow && resource == iampolicy.Allow
	}
	explicit := identity == iampolicy.Deny || resource == iampolicy.Deny
	if allowed && !explicit {
		return nil
	}
	msg := fmt.Sprintf(msgNotAuthorized, p.UserARN, maskAccount(methodARN))
	if explicit {
		msg += msgExplicitDeny
	}
	return &gatewayError{ResponseAccessDenied, http.StatusForbidden, msg}
}

// methodARN is the execute-api ARN of a request: arn:aws:execute-api:REGION:ACCOUNT:API/STAGE/METHOD/PATH, the path
// as requested (a path parameter's value in place).
func (g *Gateway) methodARN(method, path string) string {
	return fmt.Sprintf("%s%s/%s%s", g.apiARNPrefix(), g.stage, method, path)
}

// apiARNPrefix is the ARN of the API followed by a slash: what API Gateway's shorthand execute-api:/ stands for in
// a resource policy.
func (g *Gateway) apiARNPrefix() string {
	return fmt.Sprintf("arn:aws:execute-api:%s:%s:%s/", g.region, g.account, g.apiID)
}

// maskAccount hides the account of an ARN but for its last four digits, as API Gateway shows it in its messages:
// arn:aws:execute-api:us-east-1:********0000:local/v1/GET/transfers.
func maskAccount(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || len(parts[4]) <= 4 {
		return arn
	}
	parts[4] = strings.Repeat("*", len(parts[4])-4) + parts[4][len(parts[4])-4:]
	return strings.Join(parts, ":")
}

// expandResourcePolicy returns the resource policy document with API Gateway's shorthand for the API's own methods
// (execute-api:/STAGE/METHOD/PATH in Resource and NotResource) written as the ARNs it stands for, parsed.
func expandResourcePolicy(doc map[string]any, apiPrefix string) (*iampolicy.Policy, error) {
	expand := func(v any) any {
		s, ok := v.(string)
		if rest, short := strings.CutPrefix(s, "execute-api:/"); ok && short {
			return apiPrefix + rest
		}
		return v
	}
	stmts, ok := doc["Statement"].([]any)
	if !ok {
		stmts = []any{doc["Statement"]}
	}
	out := make([]any, 0, len(stmts))
	for _, s := range stmts {
		sm, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("gateway: resource policy: statement %v is not an object", s)
		}
		c := make(map[string]any, len(sm))
		for k, v := range sm {
			if k == "Resource" || k == "NotResource" {
				if list, ok := v.([]any); ok {
					expanded := make([]any, len(list))
					for i, e := range list {
						expanded[i] = expand(e)
					}
					v = expanded
				} else {
					v = expand(v)
				}
			}
			c[k] = v
		}
		out = append(out, c)
	}
	p, err := iampolicy.FromValue(map[string]any{"Version": doc["Version"], "Statement": out})
	if err != nil {
		return nil, fmt.Errorf("gateway: resource policy: %w", err)
	}
	return p, nil
}
