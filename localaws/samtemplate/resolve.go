package samtemplate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Resolver says what a resource's logical id and attributes stand for in the caller's environment (locally: names
// and ARNs the local stack assigns; on AWS CloudFormation does this).
type Resolver interface {
	// Ref is the value of `!Ref LogicalID` for a resource.
	Ref(logicalID string) (string, error)
	// GetAtt is the value of `!GetAtt LogicalID.Attribute`.
	GetAtt(logicalID, attribute string) (string, error)
}

// Env is what the pseudo parameters (AWS::Region, AWS::AccountId, AWS::Partition, AWS::StackName) resolve to.
type Env struct {
	Region    string
	AccountID string
	// StackName is AWS::StackName; empty means "local", the name `sam local` gives it.
	StackName string
	// Parameters overrides parameter defaults.
	Parameters map[string]string
}

// scalar resolves a scalar YAML node, which may be a plain value or a CloudFormation intrinsic in short
// (!Ref, !GetAtt, !Sub) or long ({Ref: …}, {"Fn::GetAtt": […]}, {"Fn::Sub": …}) form.
func (t *Template) scalar(n *yaml.Node, env Env, r Resolver) (string, error) {
	switch {
	case n == nil:
		return "", nil
	case n.Tag == "!Ref":
		return t.ref(n.Value, env, r)
	case n.Tag == "!GetAtt":
		id, attr, ok := strings.Cut(n.Value, ".")
		if !ok {
			return "", fmt.Errorf("!GetAtt %q: want LogicalId.Attribute", n.Value)
		}
		return r.GetAtt(id, attr)
	case n.Tag == "!Sub":
		return t.sub(n.Value, env, r)
	case n.Kind == yaml.ScalarNode:
		return n.Value, nil
	case n.Kind == yaml.MappingNode && len(n.Content) == 2:
		key, val := n.Content[0].Value, n.Content[1]
		switch key {
		case "Ref":
			return t.ref(val.Value, env, r)
		case "Fn::GetAtt":
			if val.Kind == yaml.SequenceNode && len(val.Content) == 2 {
				return r.GetAtt(val.Content[0].Value, val.Content[1].Value)
			}
			id, attr, _ := strings.Cut(val.Value, ".")
			return r.GetAtt(id, attr)
		case "Fn::Sub":
			return t.sub(val.Value, env, r)
		}
	}
	return "", fmt.Errorf("line %d: unsupported value (only scalars, Ref, GetAtt and Sub are resolved)", n.Line)
}

func (t *Template) ref(name string, env Env, r Resolver) (string, error) {
	switch name {
	case "AWS::Region":
		return env.Region, nil
	case "AWS::AccountId":
		return env.AccountID, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::StackName":
		if env.StackName == "" {
			return "local", nil
		}
		return env.StackName, nil
	}
	if p, ok := t.Parameters[name]; ok {
		if v, ok := env.Parameters[name]; ok {
			return v, nil
		}
		return p.Default, nil
	}
	if _, ok := t.Resources[name]; ok {
		return r.Ref(name)
	}
	if strings.Contains(name, ".") {
		return t.refAttribute(name, r)
	}
	if _, ok := t.GeneratedResource(name); ok {
		return r.Ref(name)
	}
	return "", fmt.Errorf("!Ref %s: no such parameter or resource", name)
}

var subVar = regexp.MustCompile(`\$\{([^}!]+)\}`)

// sub expands ${Name} and ${LogicalId.Attribute} in s.
func (t *Template) sub(s string, env Env, r Resolver) (string, error) {
	var firstErr error
	out := subVar.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		var v string
		var err error
		if id, attr, ok := strings.Cut(name, "."); ok {
			v, err = r.GetAtt(id, attr)
		} else {
			v, err = t.ref(name, env, r)
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	return out, firstErr
}

// mapping returns the value node of key in a mapping node, or nil.
func mapping(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// stringMap resolves every value of a mapping node.
func (t *Template) stringMap(n *yaml.Node, env Env, r Resolver) (map[string]string, error) {
	return mapValues(n, func(v *yaml.Node) (string, error) { return t.scalar(v, env, r) })
}

// mapValues turns each value of a mapping node into a string with value (an empty map for nil); an error names the
// key whose value it is about.
func mapValues(n *yaml.Node, value func(*yaml.Node) (string, error)) (map[string]string, error) {
	out := map[string]string{}
	if n == nil {
		return out, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		v, err := value(n.Content[i+1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Content[i].Value, err)
		}
		out[n.Content[i].Value] = v
	}
	return out, nil
}

// toJSONValue converts a YAML node to plain values (map[string]any, []any, string, float64, bool, nil), resolving
// intrinsics wherever they stand (see value). It is used for EventBridge patterns and policy documents.
func (t *Template) toJSONValue(n *yaml.Node, env Env, r Resolver) (any, error) {
	v, err := t.value(n, env, r)
	if v == noValue {
		return nil, err
	}
	return v, err
}

// value is toJSONValue that returns noValue for AWS::NoValue, so that the list element or mapping entry holding
// it is dropped.
func (t *Template) value(n *yaml.Node, env Env, r Resolver) (any, error) {
	if fn, arg, ok := intrinsic(n); ok {
		return t.intrinsicValue(fn, arg, env, r)
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := t.value(n.Content[i+1], env, r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n.Content[i].Value, err)
			}
			if v != noValue {
				m[n.Content[i].Value] = v
			}
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := t.value(c, env, r)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			if v != noValue {
				s = append(s, v)
			}
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float":
			f, err := strconv.ParseFloat(n.Value, 64)
			if err != nil {
				return nil, err
			}
			return f, nil
		case "!!bool":
			return n.Value == "true", nil
		case "!!null":
			return nil, nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}
