package stack

import (
	"fmt"

	"github.com/transferflow/orchestrator/localaws/gateway"
	"github.com/transferflow/orchestrator/localaws/iampolicy"
)

// APIID is the id of the API locally: requestContext.apiId, and what !Ref of the template's AWS::Serverless::Api
// stands for (so its execute-api ARNs, in the managed policies, name the API the gateway serves).
const APIID = gateway.DefaultAPIID

// The template's managed policies the local callers have: an operator (--operator) the first, everyone else the
// second.
const (
	OperatorPolicy = "TransferOperatorPolicy"
	ClientPolicy   = "TransferClientPolicy"
)

// OperatorPrincipalArnsParameter is the template's parameter of the principals the API's resource policy lets
// through to the operator routes; the stack gives it the --operator patterns.
const OperatorPrincipalArnsParameter = "OperatorPrincipalArns"

// isOperator reports whether a caller is an operator: its principal's ARN (aws:PrincipalArn: a user's, or a role
// session's role's) matches one of the --operator patterns. The API's resource policy matches the same key with the
// same patterns (OperatorPrincipalArns), so a pattern of a session's own ARN (arn:aws:sts::…:assumed-role/…) names
// no operator, here as on AWS.
func isOperator(patterns []string, p gateway.Principal) bool {
	for _, pattern := range patterns {
		if iampolicy.Match(pattern, p.ARN) {
			return true
		}
	}
	return false
}

// identityPolicies gives each caller its IAM policy, read from the template: TransferOperatorPolicy to the
// --operator principals, TransferClientPolicy to every other. A template with neither gives none (nil: the gateway
// then evaluates only the API's resource policy, if any); one with only one of them is an error.
func (s *stack) identityPolicies() (func(gateway.Principal) []*iampolicy.Policy, error) {
	_, hasOperator := s.tmpl.Resources[OperatorPolicy]
	_, hasClient := s.tmpl.Resources[ClientPolicy]
	switch {
	case !hasOperator && !hasClient:
		if len(s.cfg.Operators) > 0 {
			return nil, fmt.Errorf("--operator: the template has no %s to give them", OperatorPolicy)
		}
		return nil, nil
	case !hasOperator || !hasClient:
		return nil, fmt.Errorf("the template declares one of %s and %s: the local stack needs both", OperatorPolicy, ClientPolicy)
	}
	load := func(id string) (*iampolicy.Policy, error) {
		doc, err := s.tmpl.ManagedPolicy(id, s.env(), s.names)
		if err != nil {
			return nil, err
		}
		p, err := iampolicy.FromValue(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		return p, nil
	}
	operator, err := load(OperatorPolicy)
	if err != nil {
		return nil, err
	}
	client, err := load(ClientPolicy)
	if err != nil {
		return nil, err
	}
	patterns := s.cfg.Operators
	return func(p gateway.Principal) []*iampolicy.Policy {
		if isOperator(patterns, p) {
			return []*iampolicy.Policy{operator}
		}
		return []*iampolicy.Policy{client}
	}, nil
}
