package samtemplate

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Function is an AWS::Serverless::Function with Globals.Function applied.
type Function struct {
	LogicalID string
	CodeURI   string
	// Runtime and Handler are the function's (e.g. provided.al2023 and bootstrap); BuildMethod is its
	// Metadata.BuildMethod (go1.x for a Go function sam build compiles).
	Runtime, Handler, BuildMethod string
	// Architectures is x86_64 or arm64 (Lambda's default is x86_64).
	Architectures []string
	Timeout       time.Duration
	// MemorySize is in MB (Lambda's default is 128).
	MemorySize int
	// LogFormat is LoggingConfig.LogFormat: Text (the default) or JSON.
	LogFormat string
	// ReservedConcurrentExecutions is the function's reserved concurrency (the function's own, else Globals'); nil
	// when the template reserves none, so the function shares the account's unreserved concurrency.
	ReservedConcurrentExecutions *int
	Environment                  map[string]string
	Events                       []Event
}

// functionProps are the AWS::Serverless::Function properties read from Globals.Function and from each function,
// whose own values win.
type functionProps struct {
	Runtime       string   `yaml:"Runtime"`
	Handler       string   `yaml:"Handler"`
	Architectures []string `yaml:"Architectures"`
	Timeout       int      `yaml:"Timeout"`
	MemorySize    int      `yaml:"MemorySize"`
	LoggingConfig struct {
		LogFormat string `yaml:"LogFormat"`
	} `yaml:"LoggingConfig"`
}

// over returns p with the values o sets.
func (p functionProps) over(o functionProps) functionProps {
	if o.Runtime != "" {
		p.Runtime = o.Runtime
	}
	if o.Handler != "" {
		p.Handler = o.Handler
	}
	if len(o.Architectures) > 0 {
		p.Architectures = o.Architectures
	}
	if o.Timeout != 0 {
		p.Timeout = o.Timeout
	}
	if o.MemorySize != 0 {
		p.MemorySize = o.MemorySize
	}
	if o.LoggingConfig.LogFormat != "" {
		p.LoggingConfig.LogFormat = o.LoggingConfig.LogFormat
	}
	return p
}

// Event types a function can be triggered by.
const (
	EventAPI             = "Api"
	EventEventBridgeRule = "EventBridgeRule"
	EventSchedule        = "Schedule"
	// EventDynamoDB is an event source mapping on a DynamoDB table's stream (Event.DynamoDB).
	EventDynamoDB = "DynamoDB"
)

// Event is one entry of a function's Events.
type Event struct {
	Name string
	Type string
	// Path and Method, for Api events (Path in API Gateway's resource form, e.g. /transfers/{transferId}).
	Path, Method string
	// Pattern, for EventBridgeRule events: the event pattern as plain JSON values.
	Pattern map[string]any
	// Schedule, for Schedule events: rate(…) or cron(…).
	Schedule string
	// DynamoDB, for DynamoDB events: the event source mapping's properties.
	DynamoDB *StreamSource
}

// StateMachine is an AWS::Serverless::StateMachine.
type StateMachine struct {
	LogicalID     string
	Type          string
	DefinitionURI string
	Substitutions map[string]string
	// AutoPublishAlias is the alias the template publishes the state machine behind ("" for none): the local stack
	// publishes a version of the definition and points the alias at it, as the SAM transform's resources do.
	AutoPublishAlias string
}

// Functions returns the template's functions, sorted by logical id, with intrinsics resolved through r.
func (t *Template) Functions(env Env, r Resolver) ([]Function, error) {
	var globals struct {
		functionProps `yaml:",inline"`
		Environment   struct {
			Variables yaml.Node `yaml:"Variables"`
		} `yaml:"Environment"`
	}
	if g, ok := t.Globals["Function"]; ok {
		if err := g.Decode(&globals); err != nil {
			return nil, fmt.Errorf("Globals.Function: %w", err)
		}
	}
	genv, err := t.stringMap(nodeOrNil(&globals.Environment.Variables), env, r)
	if err != nil {
		return nil, fmt.Errorf("Globals.Function.Environment: %w", err)
	}
	var out []Function
	for id, res := range t.Resources {
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		p := &res.Properties
		var fp functionProps
		if err := p.Decode(&fp); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		props := globals.functionProps.over(fp)
		f := Function{
			LogicalID: id, Runtime: props.Runtime, Handler: props.Handler, Architectures: props.Architectures,
			Timeout: time.Duration(props.Timeout) * time.Second, MemorySize: props.MemorySize,
			LogFormat: props.LoggingConfig.LogFormat, Environment: map[string]string{},
		}
		if n := mapping(p, "CodeUri"); n != nil {
			f.CodeURI = n.Value
		}
		if n := mapping(&res.Metadata, "BuildMethod"); n != nil {
			f.BuildMethod = n.Value
		}
		if f.Timeout == 0 {
			f.Timeout = 3 * time.Second // Lambda's default
		}
		if f.MemorySize == 0 {
			f.MemorySize = 128 // Lambda's default
		}
		for k, v := range genv {
			f.Environment[k] = v
		}
		if f.ReservedConcurrentExecutions, err = t.reserved(id, p, env, r); err != nil {
			return nil, err
		}
		own, err := t.stringMap(mapping(mapping(p, "Environment"), "Variables"), env, r)
		if err != nil {
			return nil, fmt.Errorf("%s.Environment: %w", id, err)
		}
		for k, v := range own {
			f.Environment[k] = v
		}
		if f.Events, err = t.events(id, mapping(p, "Events"), env, r); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LogicalID < out[j].LogicalID })
	return out, nil
}

// reserved reads a function's ReservedConcurrentExecutions, its own or else Globals.Function's: an integer >= 0,
// written plainly or as an intrinsic such as !Ref to a parameter.
func (t *Template) reserved(id string, props *yaml.Node, env Env, r Resolver) (*int, error) {
	where, n := id, mapping(props, "ReservedConcurrentExecutions")
	if n == nil {
		if g, ok := t.Globals["Function"]; ok {
			where, n = "Globals.Function", mapping(&g, "ReservedConcurrentExecutions")
		}
	}
	if n == nil {
		return nil, nil
	}
	s, err := t.scalar(n, env, r)
	if err != nil {
		return nil, fmt.Errorf("%s.ReservedConcurrentExecutions: %w", where, err)
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return nil, fmt.Errorf("%s.ReservedConcurrentExecutions: %q is not an integer >= 0", where, s)
	}
	return &v, nil
}

func nodeOrNil(n *yaml.Node) *yaml.Node {
	if n.Kind == 0 {
		return nil
	}
	return n
}

func (t *Template) events(fn string, n *yaml.Node, env Env, r Resolver) ([]Event, error) {
	if n == nil {
		return nil, nil
	}
	var out []Event
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, body := n.Content[i].Value, n.Content[i+1]
		ev := Event{Name: name}
		if tn := mapping(body, "Type"); tn != nil {
			ev.Type = tn.Value
		}
		props := mapping(body, "Properties")
		switch ev.Type {
		case EventAPI:
			if v := mapping(props, "Path"); v != nil {
				ev.Path = v.Value
			}
			if v := mapping(props, "Method"); v != nil {
				ev.Method = v.Value
			}
		case EventEventBridgeRule:
			pat := mapping(props, "Pattern")
			if pat == nil {
				return nil, fmt.Errorf("%s.Events.%s: no Pattern", fn, name)
			}
			v, err := t.toJSONValue(pat, env, r)
			if err != nil {
				return nil, fmt.Errorf("%s.Events.%s.Pattern: %w", fn, name, err)
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s.Events.%s.Pattern: want a mapping", fn, name)
			}
			ev.Pattern = m
		case EventSchedule:
			if v := mapping(props, "Schedule"); v != nil {
				ev.Schedule = v.Value
			}
		case EventDynamoDB:
			src, err := t.streamSource(props, env, r)
			if err != nil {
				return nil, fmt.Errorf("%s.Events.%s: %w", fn, name, err)
			}
			ev.DynamoDB = src
		}
		out = append(out, ev)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// StateMachines returns the template's state machines, sorted by logical id, with substitutions resolved.
func (t *Template) StateMachines(env Env, r Resolver) ([]StateMachine, error) {
	var out []StateMachine
	for id, res := range t.Resources {
		if res.Type != "AWS::Serverless::StateMachine" {
			continue
		}
		p := &res.Properties
		sm := StateMachine{LogicalID: id, Type: "STANDARD"}
		if n := mapping(p, "Type"); n != nil {
			sm.Type = n.Value
		}
		if n := mapping(p, "DefinitionUri"); n != nil {
			sm.DefinitionURI = n.Value
		}
		subs, err := t.stringMap(mapping(p, "DefinitionSubstitutions"), env, r)
		if err != nil {
			return nil, fmt.Errorf("%s.DefinitionSubstitutions: %w", id, err)
		}
		sm.Substitutions = subs
		if sm.AutoPublishAlias, err = t.AutoPublishAlias(id); err != nil {
			return nil, err
		}
		out = append(out, sm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LogicalID < out[j].LogicalID })
	return out, nil
}
