// Package iampolicy evaluates IAM policy documents for one request as AWS does: a statement applies when its
// principal, action, resource and conditions all match; an explicit Deny of any statement wins over any Allow; no
// statement that applies is an implicit deny.
//
// It supports what the local stack's policies use (template.yaml's managed policies and the API's resource policy):
// Effect Allow and Deny; Action and NotAction, Resource and NotResource, with the * and ? wildcards; Principal "*",
// {"AWS": "*"}, an account (its id or arn:…:root) or a principal's ARN; and the String and Arn condition operators,
// with …IfExists and the ForAllValues: and ForAnyValue: set operators, on the keys of the request's context. A
// document using anything else (NotPrincipal, a service principal, Bool, IpAddress, …) is refused by Parse rather
// than evaluated wrongly.
package iampolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Decision is the outcome of evaluating a request against policies.
type Decision int

// The decisions, in increasing precedence: Combine returns the highest of its arguments.
const (
	// NotApplicable means no statement applies: an implicit deny, unless another policy allows.
	NotApplicable Decision = iota
	// Allow means a statement allows the request and none denies it.
	Allow
	// Deny means a statement explicitly denies the request, whatever any other allows.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return "NotApplicable"
}

// Combine is the decision of several policies together: an explicit deny in any, else an allow in any.
func Combine(ds ...Decision) Decision {
	out := NotApplicable
	for _, d := range ds {
		out = max(out, d)
	}
	return out
}

// Request is what a policy is evaluated for.
type Request struct {
	// Action is the action asked for, e.g. execute-api:Invoke.
	Action string
	// Resource is the ARN of the resource it is asked on.
	Resource string
	// Context holds the condition keys of the request by name, e.g. aws:PrincipalArn and aws:PrincipalAccount
	// (which a Principal element is also matched against). A key that is absent is missing from the request.
	Context map[string][]string
}

// Policy is a parsed policy document. It is immutable and safe for concurrent use.
type Policy struct {
	statements []statement
}

type statement struct {
	sid          string
	deny         bool
	principals   []string // nil: no Principal element (an identity-based policy's statement); "*" is anyone
	actions      []string
	notActions   bool
	resources    []string
	notResources bool
	conditions   []condition
}

type condition struct {
	op       string // the base operator: StringEquals, ArnLike, …
	ifExists bool
	set      string // "", "ForAllValues" or "ForAnyValue"
	key      string
	values   []string
}

// ErrUnsupported is wrapped by Parse's errors for a document that uses what the package does not evaluate.
var ErrUnsupported = errors.New("iampolicy: not supported")

// Parse reads a policy document: {"Version": …, "Statement": [ … ] or { … }}.
func Parse(doc []byte) (*Policy, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("iampolicy: parse: %w", err)
	}
	return FromValue(v)
}

// FromValue reads a policy document already decoded from JSON (maps, slices, strings).
func FromValue(doc any) (*Policy, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("iampolicy: a policy document is an object")
	}
	list, ok := m["Statement"].([]any)
	if !ok {
		if m["Statement"] == nil {
			return nil, errors.New("iampolicy: no Statement")
		}
		list = []any{m["Statement"]}
	}
	p := &Policy{}
	for i, raw := range list {
		s, err := parseStatement(raw)
		if err != nil {
			return nil, fmt.Errorf("iampolicy: Statement[%d]: %w", i, err)
		}
		p.statements = append(p.statements, s)
	}
	return p, nil
}

func parseStatement(raw any) (statement, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return statement{}, errors.New("a statement is an object")
	}
	var s statement
	s.sid, _ = m["Sid"].(string)
	switch m["Effect"] {
	case "Allow":
	case "Deny":
		s.deny = true
	default:
		return s, fmt.Errorf("Effect %v: want Allow or Deny", m["Effect"])
	}
	if _, ok := m["NotPrincipal"]; ok {
		return s, fmt.Errorf("NotPrincipal: %w", ErrUnsupported)
	}
	if p, ok := m["Principal"]; ok {
		var err error
		if s.principals, err = principals(p); err != nil {
			return s, err
		}
	}
	var err error
	if s.actions, s.notActions, err = oneOf(m, "Action", "NotAction"); err != nil {
		return s, err
	}
	if s.resources, s.notResources, err = oneOf(m, "Resource", "NotResource"); err != nil {
		return s, err
	}
	if c, ok := m["Condition"]; ok {
		if s.conditions, err = conditions(c); err != nil {
			return s, err
		}
	}
	return s, nil
}

// principals reads a Principal element: "*", or {"AWS": one or a list of "*", account ids and ARNs}.
func principals(v any) ([]string, error) {
	if v == "*" {
		return []string{"*"}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Principal %v: want \"*\" or {\"AWS\": …}", v)
	}
	for k := range m {
		if k != "AWS" {
			return nil, fmt.Errorf("Principal %s: %w", k, ErrUnsupported)
		}
	}
	list, err := strings1(m["AWS"])
	if err != nil || len(list) == 0 {
		return nil, fmt.Errorf("Principal AWS %v: want a string or a list of strings", m["AWS"])
	}
	return list, nil
}

// oneOf reads the element name or its negation notName, exactly one of which a statement has.
func oneOf(m map[string]any, name, notName string) ([]string, bool, error) {
	v, has := m[name]
	nv, hasNot := m[notName]
	switch {
	case has && hasNot:
		return nil, false, fmt.Errorf("both %s and %s", name, notName)
	case hasNot:
		v, name = nv, notName
	case !has:
		return nil, false, fmt.Errorf("no %s", name)
	}
	list, err := strings1(v)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	return list, hasNot, nil
}

// strings1 reads a string or a list of strings.
func strings1(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%v: want a string or a list of strings", v)
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%v: want a string or a list of strings", v)
		}
		out = append(out, s)
	}
	return out, nil
}

// operators are the base condition operators evaluated, by whether each negates its match.
var operators = map[string]bool{
	"StringEquals": false, "StringNotEquals": true, "StringEqualsIgnoreCase": false, "StringNotEqualsIgnoreCase": true,
	"StringLike": false, "StringNotLike": true, "ArnEquals": false, "ArnNotEquals": true, "ArnLike": false, "ArnNotLike": true,
}

func conditions(v any) ([]condition, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Condition %v: want an object", v)
	}
	var out []condition
	for name, keys := range m {
		c := condition{op: name}
		if set, op, ok := strings.Cut(name, ":"); ok {
			if set != "ForAllValues" && set != "ForAnyValue" {
				return nil, fmt.Errorf("Condition %s: %w", name, ErrUnsupported)
			}
			c.set, c.op = set, op
		}
		if op, ok := strings.CutSuffix(c.op, "IfExists"); ok {
			c.op, c.ifExists = op, true
		}
		if _, ok := operators[c.op]; !ok {
			return nil, fmt.Errorf("Condition %s: %w", name, ErrUnsupported)
		}
		km, ok := keys.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Condition %s: want an object of keys", name)
		}
		for key, vals := range km {
			values, err := strings1(vals)
			if err != nil {
				return nil, fmt.Errorf("Condition %s %s: %w", name, key, err)
			}
			cc := c
			cc.key, cc.values = key, values
			out = append(out, cc)
		}
	}
	return out, nil
}

// Evaluate is the policy's decision for r: Deny if a statement that applies denies it, else Allow if one allows it,
// else NotApplicable.
func (p *Policy) Evaluate(r Request) Decision {
	d := NotApplicable
	for _, s := range p.statements {
		if !s.applies(r) {
			continue
		}
		if s.deny {
			return Deny
		}
		d = Allow
	}
	return d
}

func (s statement) applies(r Request) bool {
	if s.principals != nil && !slices.ContainsFunc(s.principals, func(p string) bool { return principalMatches(p, r.Context) }) {
		return false
	}
	action := slices.ContainsFunc(s.actions, func(a string) bool { return Match(strings.ToLower(a), strings.ToLower(r.Action)) })
	if action == s.notActions {
		return false
	}
	resource := slices.ContainsFunc(s.resources, func(res string) bool { return Match(res, r.Resource) })
	if resource == s.notResources {
		return false
	}
	for _, c := range s.conditions {
		if !c.holds(r.Context[c.key]) {
			return false
		}
	}
	return true
}

// principalMatches reports whether the Principal entry p names the request's principal: "*" anyone, an account
// id or arn:…:iam::ACCOUNT:root any principal of that account, an ARN that principal (aws:PrincipalArn).
func principalMatches(p string, ctx map[string][]string) bool {
	account, arn := first(ctx["aws:PrincipalAccount"]), first(ctx["aws:PrincipalArn"])
	switch {
	case p == "*":
		return true
	case accountIDRe.MatchString(p):
		return p == account && account != ""
	case strings.HasSuffix(p, ":root") && strings.Count(p, ":") == 5:
		return strings.Split(p, ":")[4] == account && account != ""
	}
	return p == arn && arn != ""
}

var accountIDRe = regexp.MustCompile(`^[0-9]{12}$`)

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// holds evaluates the condition on the request's values of its key (none: the key is missing).
func (c condition) holds(got []string) bool {
	negated := operators[c.op]
	matchesOne := func(v string) bool {
		return slices.ContainsFunc(c.values, func(want string) bool { return c.match(want, v) })
	}
	switch c.set {
	case "ForAllValues":
		// Every value of the request must satisfy the operator; a request with none satisfies it.
		for _, v := range got {
			if matchesOne(v) == negated {
				return false
			}
		}
		return true
	case "ForAnyValue":
		for _, v := range got {
			if matchesOne(v) != negated {
				return true
			}
		}
		return false
	}
	if len(got) == 0 {
		// A missing key: only a negated operator, or …IfExists, holds.
		return negated || c.ifExists
	}
	if negated {
		return !slices.ContainsFunc(got, matchesOne)
	}
	return slices.ContainsFunc(got, matchesOne)
}

// match compares one value of the request with one value of the condition, as the operator does.
func (c condition) match(want, got string) bool {
	switch c.op {
	case "StringEquals", "StringNotEquals":
		return want == got
	case "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase":
		return strings.EqualFold(want, got)
	case "StringLike", "StringNotLike":
		return Match(want, got)
	}
	return arnMatch(want, got)
}

// arnMatch is ArnEquals and ArnLike: both ARNs have six colon-separated parts (the last may hold colons) and each
// part of got matches the same part of want, wildcards included.
func arnMatch(want, got string) bool {
	w, g := strings.SplitN(want, ":", 6), strings.SplitN(got, ":", 6)
	if len(w) != 6 || len(g) != 6 {
		return false
	}
	for i := range w {
		if !Match(w[i], g[i]) {
			return false
		}
	}
	return true
}

// patterns caches compiled wildcard patterns: policies are matched for every request.
var patterns sync.Map // string → *regexp.Regexp

// Match reports whether s matches pattern with IAM's wildcards, case-sensitively: * any run of characters (slashes
// and colons included), ? any one character.
func Match(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	re, ok := patterns.Load(pattern)
	if !ok {
		expr := strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern))
		re, _ = patterns.LoadOrStore(pattern, regexp.MustCompile("^(?s:"+expr+")$"))
	}
	return re.(*regexp.Regexp).MatchString(s)
}
