package samtemplate

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// absent is the type of noValue.
type absent struct{}

// noValue is what AWS::NoValue stands for: the list element or mapping entry that holds it is left out.
var noValue any = absent{}

// shortForms maps the YAML tags of CloudFormation's short forms to the names of their functions.
var shortForms = map[string]string{
	"!Ref": "Ref", "!GetAtt": "Fn::GetAtt", "!Sub": "Fn::Sub", "!If": "Fn::If", "!Join": "Fn::Join",
	"!Equals": "Fn::Equals", "!Not": "Fn::Not", "!And": "Fn::And", "!Or": "Fn::Or", "!Condition": "Condition",
	"!Select": "Fn::Select", "!Split": "Fn::Split", "!FindInMap": "Fn::FindInMap", "!ImportValue": "Fn::ImportValue",
	"!Base64": "Fn::Base64", "!GetAZs": "Fn::GetAZs", "!Cidr": "Fn::Cidr",
}

// intrinsic recognizes an intrinsic function written in short (!If [...]) or long ({"Fn::If": [...]}) form and
// returns its name in long form and its argument. A mapping whose one key is Condition is not one here: it is only
// in a condition (condition), elsewhere it is a mapping like any other.
func intrinsic(n *yaml.Node) (string, *yaml.Node, bool) {
	if fn, ok := shortForms[n.Tag]; ok {
		arg := *n
		arg.Tag = ""
		if arg.Kind == yaml.ScalarNode {
			arg.Tag = "!!str"
		}
		return fn, &arg, true
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		if key := n.Content[0].Value; key == "Ref" || strings.HasPrefix(key, "Fn::") {
			return key, n.Content[1], true
		}
	}
	return "", nil, false
}

// intrinsicValue resolves the intrinsic fn with its argument to a plain value: a Ref to a list parameter
// (CommaDelimitedList, List<…>) is a list, AWS::NoValue is noValue, Fn::If picks by its condition, Fn::Join joins;
// Ref, Fn::GetAtt and Fn::Sub otherwise are strings, as scalar resolves them. The rest are not resolved locally.
func (t *Template) intrinsicValue(fn string, arg *yaml.Node, env Env, r Resolver) (any, error) {
	switch fn {
	case "Ref":
		if arg.Value == "AWS::NoValue" {
			return noValue, nil
		}
		if p, ok := t.Parameters[arg.Value]; ok && isListType(p.Type) {
			v, ok := env.Parameters[arg.Value]
			if !ok {
				v = p.Default
			}
			out := []any{}
			for _, e := range strings.Split(v, ",") {
				out = append(out, strings.TrimSpace(e))
			}
			return out, nil
		}
		return t.ref(arg.Value, env, r)
	case "Fn::GetAtt", "Fn::Sub":
		return t.scalar(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: fn}, arg}}, env, r)
	case "Fn::If":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 {
			return nil, fmt.Errorf("line %d: Fn::If takes [condition, value if true, value if false]", arg.Line)
		}
		ok, err := t.Condition(arg.Content[0].Value, env, r)
		if err != nil {
			return nil, err
		}
		if ok {
			return t.value(arg.Content[1], env, r)
		}
		return t.value(arg.Content[2], env, r)
	case "Fn::Join":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 {
			return nil, fmt.Errorf("line %d: Fn::Join takes [delimiter, list]", arg.Line)
		}
		list, err := t.value(arg.Content[1], env, r)
		if err != nil {
			return nil, err
		}
		items, ok := list.([]any)
		if !ok {
			return nil, fmt.Errorf("line %d: Fn::Join of %v: want a list", arg.Line, list)
		}
		parts := make([]string, len(items))
		for i, e := range items {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("line %d: Fn::Join of %v: want a list of strings", arg.Line, list)
			}
			parts[i] = s
		}
		return strings.Join(parts, arg.Content[0].Value), nil
	}
	return nil, fmt.Errorf("line %d: %s is not resolved locally", arg.Line, fn)
}

// isListType reports whether a parameter of this type is a list: a Ref to it stands for a list of strings.
func isListType(typ string) bool {
	return typ == "CommaDelimitedList" || strings.HasPrefix(typ, "List<") ||
		strings.HasPrefix(typ, "AWS::SSM::Parameter::Value<List<") || typ == "AWS::SSM::Parameter::Value<CommaDelimitedList>"
}

// maxConditionDepth bounds conditions that name conditions, so that a cycle is an error rather than a hang.
const maxConditionDepth = 32

// Condition evaluates the template's condition name (its Conditions section) with the parameters of env: Fn::Equals
// of two values, Fn::Not, Fn::And, Fn::Or and Condition (another condition by name).
func (t *Template) Condition(name string, env Env, r Resolver) (bool, error) {
	return t.condition(name, env, r, 0)
}

func (t *Template) condition(name string, env Env, r Resolver, depth int) (bool, error) {
	n, ok := t.Conditions[name]
	if !ok {
		return false, fmt.Errorf("condition %s: not in Conditions", name)
	}
	if depth > maxConditionDepth {
		return false, fmt.Errorf("condition %s: conditions nest deeper than %d (a cycle?)", name, maxConditionDepth)
	}
	v, err := t.conditionValue(&n, env, r, depth)
	if err != nil {
		return false, fmt.Errorf("condition %s: %w", name, err)
	}
	return v, nil
}

func (t *Template) conditionValue(n *yaml.Node, env Env, r Resolver, depth int) (bool, error) {
	if _, tagged := shortForms[n.Tag]; !tagged && n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "Condition" {
		return t.condition(n.Content[1].Value, env, r, depth+1)
	}
	fn, arg, ok := intrinsic(n)
	if !ok {
		return false, fmt.Errorf("line %d: want Fn::Equals, Fn::Not, Fn::And, Fn::Or or Condition", n.Line)
	}
	if fn == "Condition" {
		return t.condition(arg.Value, env, r, depth+1)
	}
	if arg.Kind != yaml.SequenceNode {
		return false, fmt.Errorf("line %d: %s takes a list", arg.Line, fn)
	}
	switch fn {
	case "Fn::Equals":
		if len(arg.Content) != 2 {
			return false, fmt.Errorf("line %d: Fn::Equals takes two values", arg.Line)
		}
		a, err := t.toJSONValue(arg.Content[0], env, r)
		if err != nil {
			return false, err
		}
		b, err := t.toJSONValue(arg.Content[1], env, r)
		if err != nil {
			return false, err
		}
		return fmt.Sprint(a) == fmt.Sprint(b), nil
	case "Fn::Not", "Fn::And", "Fn::Or":
		all, some := true, false
		for _, c := range arg.Content {
			v, err := t.conditionValue(c, env, r, depth+1)
			if err != nil {
				return false, err
			}
			all, some = all && v, some || v
		}
		switch {
		case fn == "Fn::Not" && len(arg.Content) == 1:
			return !all, nil
		case fn == "Fn::And":
			return all, nil
		case fn == "Fn::Or":
			return some, nil
		}
		return false, fmt.Errorf("line %d: Fn::Not takes one condition", arg.Line)
	}
	return false, fmt.Errorf("line %d: %s is not a condition function", n.Line, fn)
}
