package samtemplate

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Types of the resources the SAM transform adds for a function's or a state machine's AutoPublishAlias, which a
// template names by their logical ids (or, for a function's alias, as !Ref Function.Alias).
const (
	TypeLambdaAlias       = "AWS::Lambda::Alias"
	TypeStateMachineAlias = "AWS::StepFunctions::StateMachineAlias"
)

// Generated is an alias the SAM transform adds for AutoPublishAlias: a Resolver's Ref gets its LogicalID and
// resolves it to the alias's ARN (on AWS, CloudFormation does: a Ref of an AWS::Lambda::Alias or an
// AWS::StepFunctions::StateMachineAlias is the alias's ARN).
type Generated struct {
	// LogicalID is the alias's logical id as the transform names it: DebitFunctionAliaslive for a function,
	// TransferStateMachineAliaslive for a state machine.
	LogicalID string
	// Type is TypeLambdaAlias or TypeStateMachineAlias.
	Type string
	// Parent is the logical id of the function or state machine the alias is of.
	Parent string
	// Alias is the alias's name, the AutoPublishAlias value (live).
	Alias string
}

// AutoPublishAlias returns the AutoPublishAlias of the function or state machine id (a function's own, else
// Globals.Function's), "" when it publishes none. Only a plain name is read: the local stack does not resolve one
// given by an intrinsic.
func (t *Template) AutoPublishAlias(id string) (string, error) {
	res, ok := t.Resources[id]
	if !ok {
		return "", nil
	}
	n := mapping(&res.Properties, "AutoPublishAlias")
	if n == nil && res.Type == "AWS::Serverless::Function" {
		if g, ok := t.Globals["Function"]; ok {
			n = mapping(&g, "AutoPublishAlias")
		}
	}
	switch {
	case n == nil:
		return "", nil
	case n.Kind != yaml.ScalarNode || n.Tag != "" && !strings.HasPrefix(n.Tag, "!!"):
		return "", fmt.Errorf("%s.AutoPublishAlias: line %d: only a plain name is resolved locally", id, n.Line)
	}
	return n.Value, nil
}

// GeneratedResource returns the alias the transform generates under logical id, if one of the template's functions
// or state machines publishes it.
func (t *Template) GeneratedResource(id string) (Generated, bool) {
	for parent, res := range t.Resources {
		var typ, suffix string
		alias, err := t.AutoPublishAlias(parent)
		if err != nil || alias == "" {
			continue
		}
		switch res.Type {
		case "AWS::Serverless::Function":
			typ, suffix = TypeLambdaAlias, functionAliasSuffix(alias)
		case "AWS::Serverless::StateMachine":
			typ, suffix = TypeStateMachineAlias, "Alias"+alias
		default:
			continue
		}
		if id == parent+suffix {
			return Generated{LogicalID: id, Type: typ, Parent: parent, Alias: alias}, true
		}
	}
	return Generated{}, false
}

// functionAliasSuffix is what the transform appends to a function's logical id to name its alias: "Alias" and the
// alias name with '-' written D and '_' written U.
func functionAliasSuffix(alias string) string {
	return "Alias" + strings.NewReplacer("-", "D", "_", "U").Replace(alias)
}

// refAttribute resolves !Ref Function.Alias, the transform's name for the alias AutoPublishAlias gives a function,
// to a Ref of the alias's logical id. Function.Version, whose logical id holds a hash of the code, is not resolved
// locally.
func (t *Template) refAttribute(name string, r Resolver) (string, error) {
	id, attr, _ := strings.Cut(name, ".")
	res, ok := t.Resources[id]
	if !ok || res.Type != "AWS::Serverless::Function" || attr != "Alias" {
		return "", fmt.Errorf("!Ref %s: only a function's .Alias is resolved locally", name)
	}
	alias, err := t.AutoPublishAlias(id)
	if err != nil {
		return "", err
	}
	if alias == "" {
		return "", fmt.Errorf("!Ref %s: %s has no AutoPublishAlias", name, id)
	}
	return r.Ref(id + functionAliasSuffix(alias))
}
