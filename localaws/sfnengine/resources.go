package sfnengine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// supportedIntegrations lists, for messages, the Task resources this engine runs.
const supportedIntegrations = "Lambda function ARNs, lambda:invoke, dynamodb:getItem/putItem/updateItem/deleteItem, " +
	"events:putEvents, sqs:sendMessage, sns:publish, states:startExecution (.sync, .sync:2), .waitForTaskToken on " +
	"all but dynamodb and .sync, and activity ARNs"

// LoadDefinition parses and validates a definition as asl.Load does, and also checks that this engine runs every
// Task's Resource. A resource it does not run is refused here, as AWS refuses a resource it does not know, with a
// problem at States.<name>.Resource, so that CreateStateMachine, UpdateStateMachine and
// ValidateStateMachineDefinition reject the definition instead of letting it fail at run time with an error that no
// Catch would expect. All problems are joined, as asl.Load joins them (asl.Errors lists them).
func LoadDefinition(data []byte) (*asl.Definition, error) {
	def, err := asl.Load(data)
	if err != nil {
		return nil, err
	}
	var problems []error
	checkResources(def, "", &problems)
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return def, nil
}

// checkResources appends a problem for each Task of def (and of its nested Parallel branches and Map processors)
// whose Resource the engine does not run.
func checkResources(def *asl.Definition, base string, problems *[]error) {
	for _, name := range def.Order {
		st := def.States[name]
		sp := joinPath(base, "States."+name)
		switch st.Type {
		case asl.TypeTask:
			integ, err := resolveResource(st.Resource)
			if err != nil {
				*problems = append(*problems, &asl.Error{Path: sp + ".Resource", Msg: resourceProblem(st.Resource), Code: "INVALID_RESOURCE"})
				continue
			}
			checkParameters(st, integ, sp, problems)
		case asl.TypeParallel:
			for i, b := range st.Branches {
				checkResources(b, fmt.Sprintf("%s.Branches[%d]", sp, i), problems)
			}
		case asl.TypeMap:
			if st.ItemProcessor != nil {
				checkResources(st.ItemProcessor, sp+".ItemProcessor", problems)
			}
		}
	}
}

// requiredParameters lists, per optimized integration (resourceType:API without the .sync or .waitForTaskToken
// suffix), the Parameters its API requires. A field is present when its name or its "<name>.$" form is.
var requiredParameters = map[string][]string{
	"lambda:invoke":         {"FunctionName"},
	"dynamodb:getItem":      {"TableName", "Key"},
	"dynamodb:putItem":      {"TableName", "Item"},
	"dynamodb:updateItem":   {"TableName", "Key"},
	"dynamodb:deleteItem":   {"TableName", "Key"},
	"events:putEvents":      {"Entries"},
	"sqs:sendMessage":       {"QueueUrl", "MessageBody"},
	"sns:publish":           {"Message"},
	"states:startExecution": {"StateMachineArn"},
}

// checkParameters reports, as AWS's schema validation does, each field an optimized integration's API requires that
// the Task's Parameters lack ("The field 'FunctionName' is required but was missing", at States.<name>.Parameters),
// and Parameters that are not an object. A task without Parameters is left to fail at run time, where the input may
// supply them.
func checkParameters(st *asl.State, integ integration, sp string, problems *[]error) {
	if !st.HasParameters || integ.resourceType == "" {
		return
	}
	api, _, _ := strings.Cut(integ.resource, ".")
	required := requiredParameters[integ.resourceType+":"+api]
	if len(required) == 0 {
		return
	}
	if !jsonvalue.IsObject(st.Parameters) {
		*problems = append(*problems, &asl.Error{Path: sp + ".Parameters", Msg: "The value for the field 'Parameters' must be an OBJECT"})
		return
	}
	for _, field := range required {
		if _, ok := jsonvalue.Lookup(st.Parameters, field); ok {
			continue
		}
		if _, ok := jsonvalue.Lookup(st.Parameters, field+".$"); ok {
			continue
		}
		*problems = append(*problems, &asl.Error{Path: sp + ".Parameters", Msg: fmt.Sprintf("The field '%s' is required but was missing", field)})
	}
}

// resourceProblem words a refused resource: AWS's message for an ARN that names no integration, and the local
// engine's own, with what it runs, for an integration AWS has and this engine does not.
func resourceProblem(arn string) string {
	if knownIntegration(arn) {
		return fmt.Sprintf("The resource provided %s is not supported by the local engine. It runs %s.", arn, supportedIntegrations)
	}
	return fmt.Sprintf("The resource provided %s is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", arn)
}

// knownIntegration reports whether arn has the shape of one of AWS's integrations: an optimized or AWS SDK
// integration (arn:aws:states:::<service>:<api>), a Lambda function, or an activity.
func knownIntegration(arn string) bool {
	if rest, ok := strings.CutPrefix(arn, statesPrefix); ok {
		svc, api, found := strings.Cut(rest, ":")
		return found && svc != "" && api != ""
	}
	parts := strings.Split(arn, ":")
	return len(parts) >= 7 && parts[0] == "arn" && (parts[2] == "lambda" || parts[2] == "states")
}

func joinPath(base, field string) string {
	if base == "" {
		return field
	}
	return base + "." + field
}
