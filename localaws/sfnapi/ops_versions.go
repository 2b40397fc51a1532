package sfnapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Wire error types of versions and aliases.
const (
	codeConflict     = "ConflictException"
	codeServiceQuota = "ServiceQuotaExceededException"
)

// Limits of the version and alias members, from the API model.
const (
	maxAliasRoutes        = 2
	maxDescriptionLength  = 256
	maxVersionArnLength   = 2000
	maxRevisionIDLength   = 2048
	minRoutingWeight      = 0
	maxRoutingWeight      = 100
	routingConfigurations = "routingConfiguration"
	// aliasNamePattern is the model's pattern of alias names (sfnengine.ValidAliasName checks it).
	aliasNamePattern = `^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$`
)

func init() {
	description := member{name: "description", max: maxDescriptionLength, sensitive: true}
	aliasArn := arnMember("stateMachineAliasArn", true)
	models["PublishStateMachineVersion"] = []member{arnMember("stateMachineArn", true), description,
		{name: "revisionId", max: maxRevisionIDLength}}
	models["ListStateMachineVersions"] = []member{arnMember("stateMachineArn", true), pageSize, pageToken}
	models["DeleteStateMachineVersion"] = []member{{name: "stateMachineVersionArn", required: true, min: 1, max: maxVersionArnLength}}
	models["CreateStateMachineAlias"] = []member{description, required(nameMember)}
	models["DescribeStateMachineAlias"] = []member{aliasArn}
	models["UpdateStateMachineAlias"] = []member{aliasArn, description}
	models["DeleteStateMachineAlias"] = []member{aliasArn}
	models["ListStateMachineAliases"] = []member{arnMember("stateMachineArn", true), pageSize, pageToken}
	wireErrors = append(wireErrors, []wireError{
		{sfnengine.ErrConflict, codeConflict, "%s"},
		{sfnengine.ErrQuotaExceeded, codeServiceQuota, "%s"},
		{sfnengine.ErrInvalidRouting, codeValidation, "Invalid Routing Configuration: '%s'"},
	}...)
	wireFields[sfnengine.ErrInvalidRouting] = func(string) map[string]string {
		return map[string]string{"reason": "INVALID_ROUTING_CONFIGURATION"}
	}
}

func (s *Server) publishStateMachineVersion(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		Description     string `json:"description"`
		RevisionID      string `json:"revisionId"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	v, err := s.eng.PublishStateMachineVersion(ctx, in.StateMachineArn, in.Description, in.RevisionID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"stateMachineVersionArn": v.Arn, "creationDate": epoch(v.CreationDate)}, nil
}

func (s *Server) listStateMachineVersions(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		pageRequest
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	vs, err := s.eng.ListStateMachineVersions(ctx, in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	// Newest first: by version number, descending (numbers are never reused).
	pg := pager[sfnengine.StateMachineVersion]{Op: "ListStateMachineVersions", Scope: []string{in.StateMachineArn},
		Key:   func(v sfnengine.StateMachineVersion) anchor { return anchor{N: int64(v.Version)} },
		After: func(v sfnengine.StateMachineVersion, a anchor) bool { return int64(v.Version) < a.N }}
	return pg.list(s.eng.Now(), vs, in.pageRequest, "stateMachineVersions", func(v sfnengine.StateMachineVersion) any {
		return map[string]any{"stateMachineVersionArn": v.Arn, "creationDate": epoch(v.CreationDate)}
	})
}

func (s *Server) deleteStateMachineVersion(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		StateMachineVersionArn string `json:"stateMachineVersionArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	return struct{}{}, s.eng.DeleteStateMachineVersion(ctx, in.StateMachineVersionArn)
}

// routes checks a routing configuration against the API model (one or two items, weights 0-100, version ARNs of
// 1-2000 characters) and returns it for the engine, which checks the rest. violations are the request's other
// violations of the model, reported first in the same ValidationException.
func routes(items []sfnengine.Route, violations ...string) ([]sfnengine.Route, error) {
	if len(items) < 1 || len(items) > maxAliasRoutes {
		violations = append(violations, fmt.Sprintf("Value '%v' at '%s' failed to satisfy constraint: Member must have length between 1 and %d", items, routingConfigurations, maxAliasRoutes))
	}
	for i, r := range items {
		at := fmt.Sprintf("%s.%d.member", routingConfigurations, i+1)
		if len(r.VersionArn) < 1 || len(r.VersionArn) > maxVersionArnLength {
			violations = append(violations, fmt.Sprintf("Value '%s' at '%s.stateMachineVersionArn' failed to satisfy constraint: Member must have length between 1 and %d", r.VersionArn, at, maxVersionArnLength))
		}
		if r.Weight < minRoutingWeight {
			violations = append(violations, fmt.Sprintf("Value '%d' at '%s.weight' failed to satisfy constraint: Member must have value greater than or equal to %d", r.Weight, at, minRoutingWeight))
		}
		if r.Weight > maxRoutingWeight {
			violations = append(violations, fmt.Sprintf("Value '%d' at '%s.weight' failed to satisfy constraint: Member must have value less than or equal to %d", r.Weight, at, maxRoutingWeight))
		}
	}
	if err := validationError(violations); err != nil {
		return nil, err
	}
	return items, nil
}

// routingList renders an alias's routing configuration.
func routingList(rs []sfnengine.Route) []any {
	out := make([]any, 0, len(rs))
	for _, r := range rs {
		out = append(out, map[string]any{"stateMachineVersionArn": r.VersionArn, "weight": r.Weight})
	}
	return out
}

func (s *Server) createStateMachineAlias(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		Name                 string            `json:"name"`
		Description          string            `json:"description"`
		RoutingConfiguration []sfnengine.Route `json:"routingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var violations []string
	if !sfnengine.ValidAliasName(in.Name) {
		violations = append(violations, fmt.Sprintf("Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", in.Name, aliasNamePattern))
	}
	rs, err := routes(in.RoutingConfiguration, violations...)
	if err != nil {
		return nil, err
	}
	a, err := s.eng.CreateStateMachineAlias(ctx, in.Name, in.Description, rs)
	if err != nil {
		return nil, err
	}
	return map[string]any{"stateMachineAliasArn": a.Arn, "creationDate": epoch(a.CreationDate)}, nil
}

func (s *Server) describeStateMachineAlias(ctx context.Context, body json.RawMessage) (any, error) {
	var in stateMachineAliasArnInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	a, err := s.eng.DescribeStateMachineAlias(ctx, in.StateMachineAliasArn)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineAliasArn": a.Arn, "name": a.Name, "routingConfiguration": routingList(a.Routing),
		"creationDate": epoch(a.CreationDate), "updateDate": epoch(a.UpdateDate)}
	putString(out, "description", a.Description)
	return out, nil
}

func (s *Server) updateStateMachineAlias(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		StateMachineAliasArn string             `json:"stateMachineAliasArn"`
		Description          *string            `json:"description"`
		RoutingConfiguration *[]sfnengine.Route `json:"routingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if in.Description == nil && in.RoutingConfiguration == nil {
		return nil, errorf(codeValidation, "Either the description or the routingConfiguration must be specified")
	}
	var rs []sfnengine.Route
	if in.RoutingConfiguration != nil {
		var err error
		if rs, err = routes(*in.RoutingConfiguration); err != nil {
			return nil, err
		}
	}
	a, err := s.eng.UpdateStateMachineAlias(ctx, in.StateMachineAliasArn, in.Description, rs)
	if err != nil {
		return nil, err
	}
	return map[string]any{"updateDate": epoch(a.UpdateDate)}, nil
}

func (s *Server) deleteStateMachineAlias(ctx context.Context, body json.RawMessage) (any, error) {
	var in stateMachineAliasArnInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	return struct{}{}, s.eng.DeleteStateMachineAlias(ctx, in.StateMachineAliasArn)
}

func (s *Server) listStateMachineAliases(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		pageRequest
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	as, err := s.eng.ListStateMachineAliases(ctx, in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	pg := byName("ListStateMachineAliases", []string{in.StateMachineArn}, func(a sfnengine.StateMachineAlias) string { return a.Name })
	return pg.list(s.eng.Now(), as, in.pageRequest, "stateMachineAliases", func(a sfnengine.StateMachineAlias) any {
		return map[string]any{"stateMachineAliasArn": a.Arn, "creationDate": epoch(a.CreationDate)}
	})
}
