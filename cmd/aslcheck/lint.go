package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/transferflow/orchestrator/internal/asl"
	"github.com/transferflow/orchestrator/internal/sfnlocal"
)

// dynamoDBIntegration is the resource prefix of Step Functions' optimized DynamoDB integration.
const dynamoDBIntegration = "arn:aws:states:::dynamodb:"

// lint reports what Step Functions accepts but can never work as meant. Today: a Retry or Catch of a DynamoDB
// integration task naming a DynamoDB error the integration never reports (such as DynamoDB.ThrottlingException or
// DynamoDB.InternalServerError, the wire codes, instead of the names AWS gives them), which would silently never
// match. Each finding names the field.
func lint(def *asl.Definition) []string {
	known := sfnlocal.DynamoDBErrorNames()
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
								path, field, i, n, s.Resource, sfnlocal.DynamoDBErrorName(n[len("DynamoDB."):])))
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
