package samtemplate

import (
	"fmt"
	"sort"
)

// EventRule is an AWS::Events::Rule resource: the events of a bus that match its pattern go to its targets.
type EventRule struct {
	// LogicalID is the resource's name in the template; locally it is also the rule's name.
	LogicalID string
	// EventBusName is the bus the rule is on ("default" when the template names none).
	EventBusName string
	// Pattern is the rule's EventPattern, as decoded JSON.
	Pattern map[string]any
	// Targets are the targets' ARNs, resolved.
	Targets []string
	// Enabled is false for a rule whose State is DISABLED.
	Enabled bool
}

// EventRules returns the template's AWS::Events::Rule resources with an EventPattern, sorted by logical id, with
// their bus names and target ARNs resolved. (Scheduled rules written as AWS::Events::Rule are not read; the
// functions' Schedule events are, by Functions.)
func (t *Template) EventRules(env Env, r Resolver) ([]EventRule, error) {
	var out []EventRule
	for id, res := range t.Resources {
		if res.Type != "AWS::Events::Rule" {
			continue
		}
		p := &res.Properties
		pat := mapping(p, "EventPattern")
		if pat == nil {
			continue
		}
		rule := EventRule{LogicalID: id, EventBusName: "default", Enabled: true}
		if n := mapping(p, "EventBusName"); n != nil {
			bus, err := t.scalar(n, env, r)
			if err != nil {
				return nil, fmt.Errorf("%s.EventBusName: %w", id, err)
			}
			rule.EventBusName = bus
		}
		if n := mapping(p, "State"); n != nil && n.Value == "DISABLED" {
			rule.Enabled = false
		}
		v, err := t.toJSONValue(pat, env, r)
		if err != nil {
			return nil, fmt.Errorf("%s.EventPattern: %w", id, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.EventPattern: want a mapping", id)
		}
		rule.Pattern = m
		if targets := mapping(p, "Targets"); targets != nil {
			for i, tn := range targets.Content {
				arn, err := t.scalar(mapping(tn, "Arn"), env, r)
				if err != nil {
					return nil, fmt.Errorf("%s.Targets[%d].Arn: %w", id, i, err)
				}
				rule.Targets = append(rule.Targets, arn)
			}
		}
		out = append(out, rule)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LogicalID < out[j].LogicalID })
	return out, nil
}

// PropertyString resolves one scalar property of a resource (for example a log group's LogGroupName); ok is false
// when the resource or the property is absent.
func (t *Template) PropertyString(logicalID, property string, env Env, r Resolver) (value string, ok bool, err error) {
	res, found := t.Resources[logicalID]
	if !found {
		return "", false, nil
	}
	n := mapping(&res.Properties, property)
	if n == nil {
		return "", false, nil
	}
	v, err := t.scalar(n, env, r)
	if err != nil {
		return "", true, fmt.Errorf("%s.%s: %w", logicalID, property, err)
	}
	return v, true, nil
}
