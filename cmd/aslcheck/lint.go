package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// The resource prefixes of Step Functions' optimized DynamoDB and EventBridge integrations.
const (
	dynamoDBIntegration    = "arn:aws:states:::dynamodb:"
	eventBridgeIntegration = "arn:aws:states:::events:"
)

// lint reports what Step Functions accepts but can never work as meant. Today: a Retry or Catch of a DynamoDB
// integration task naming a DynamoDB error the integration never reports (such as DynamoDB.ThrottlingException or
// DynamoDB.InternalServerError, the wire codes, instead of the names AWS gives them), which would silently never
// match; and the same for an EventBridge integration task's EventBridge. names (EventBridge.Throttling instead of
// EventBridge.ThrottlingException). Each finding names the field.
func lint(def *asl.Definition) []string {
	known := sfnengine.DynamoDBErrorNames()
	knownEvents := sfnengine.EventBridgeErrorNames()
	var out []string
	var walk func(prefix string, d *asl.Definition)
	walk = func(prefix string, d *asl.Definition) {
		for _, name := range d.Order {
			s := d.States[name]
			path := prefix + "States." + name
			if s.Type == asl.TypeTask && strings.HasPrefix(s.Resource, dynamoDBIntegration) {
				check := func(field string, names []string) {
					for i, n := range names {
						if len(n) > len("DynamoDB.") && strings.EqualFold(n[:len("DynamoDB.")], "DynamoDB.") && !slices.Contains(known, n) {
							out = append(out, fmt.Sprintf("%s.%s.ErrorEquals[%d]: %q is never reported by %s: it names errors after AWS SDK for Java exceptions; this one is %s",
								path, field, i, n, s.Resource, sfnengine.DynamoDBErrorName(n[len("DynamoDB."):])))
						}
					}
				}
				for i, r := range s.Retry {
					check(fmt.Sprintf("Retry[%d]", i), r.ErrorEquals)
				}
				for i, c := range s.Catch {
					check(fmt.Sprintf("Catch[%d]", i), c.ErrorEquals)
				}
			}
			if s.Type == asl.TypeTask && strings.HasPrefix(s.Resource, eventBridgeIntegration) {
				const prefix = "EventBridge."
				check := func(field string, names []string) {
					for i, n := range names {
						if strings.HasPrefix(n, prefix) && !slices.Contains(knownEvents, n) {
							out = append(out, fmt.Sprintf("%s.%s.ErrorEquals[%d]: %q is never reported by %s, which reports %s",
								path, field, i, n, s.Resource, strings.Join(knownEvents, ", ")))
						}
					}
				}
				for i, r := range s.Retry {
					check(fmt.Sprintf("Retry[%d]", i), r.ErrorEquals)
				}
				for i, c := range s.Catch {
					check(fmt.Sprintf("Catch[%d]", i), c.ErrorEquals)
				}
			}
			for i, b := range s.Branches {
				walk(fmt.Sprintf("%s.Branches[%d].", path, i), b)
			}
			if s.ItemProcessor != nil {
				walk(path+".ItemProcessor.", s.ItemProcessor)
			}
		}
	}
	walk("", def)
	return out
}
