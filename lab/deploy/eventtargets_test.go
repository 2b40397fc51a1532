package deploy

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
)

// logGroupTarget matches the ARN EventBridge wants for a CloudWatch Logs target, as the template builds it: the log
// group's name (its Ref) after "log-group:", and nothing after it (the Arn attribute of a log group ends in ":*").
var logGroupTarget = regexp.MustCompile(`^arn:\$\{AWS::Partition\}:logs:\$\{AWS::Region\}:\$\{AWS::AccountId\}:log-group:\$\{([A-Za-z0-9]+)\}$`)

// logGroupTargetProblems returns what is wrong with the rule id's target tg when it sends events to a log group
// (nothing for other targets), and whether it does: its ARN must be the log group's without ":*"; it must have a
// dead-letter queue, encrypted, that only EventBridge may send to, and only for this rule; and alarms must watch the
// rule's FailedInvocations and the queue's depth.
func logGroupTargetProblems(tmpl *Template, id string, tg any) ([]string, bool) {
	arn := Render(dig(tg, "Arn"))
	if r, ok := tmpl.Resources[ref(dig(tg, "Arn"))]; ok && r.Type == "AWS::Logs::LogGroup" {
		return []string{fmt.Sprintf("%s: target %s is a log group's Arn attribute, which ends in \":*\"; use "+
			"arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:${Name}", id, arn)}, true
	}
	m := logGroupTarget.FindStringSubmatch(arn)
	if m == nil {
		if regexp.MustCompile(`:logs:|log-group`).MatchString(arn) {
			return []string{fmt.Sprintf("%s: target %s: want arn:${AWS::Partition}:logs:${AWS::Region}:"+
				"${AWS::AccountId}:log-group:${Name}, Name a log group of the template", id, arn)}, true
		}
		return nil, false
	}
	var problems []string
	if r := tmpl.Resources[m[1]]; r.Type != "AWS::Logs::LogGroup" {
		problems = append(problems, fmt.Sprintf("%s: target %s: %s is not a log group of the template", id, arn, m[1]))
	}
	p := tmpl.Resources[id].Properties

	dlq := ref(dig(tg, "DeadLetterConfig", "Arn"))
	q, ok := tmpl.Resources[dlq]
	if !ok || q.Type != "AWS::SQS::Queue" {
		return append(problems, fmt.Sprintf("%s: target %s has no dead-letter queue of the template (%v)", id, arn,
			dig(tg, "DeadLetterConfig"))), true
	}
	if q.Properties["SqsManagedSseEnabled"] != true && q.Properties["KmsMasterKeyId"] == nil {
		problems = append(problems, fmt.Sprintf("%s: dead-letter queue %s is not encrypted", id, dlq))
	}
	allowed := false
	for _, qp := range tmpl.OfType("AWS::SQS::QueuePolicy") {
		pp := tmpl.Resources[qp].Properties
		if !slices.Contains(stringList(pp["Queues"]), "${"+dlq+"}") {
			continue
		}
		for _, s := range policyStatements(dig(pp, "PolicyDocument", "Statement")) {
			if s["Effect"] != "Allow" {
				continue
			}
			cond, _ := s["Condition"].(map[string]any)
			if Render(dig(s, "Principal", "Service")) == "events.amazonaws.com" && Render(s["Action"]) == "sqs:SendMessage" &&
				Render(s["Resource"]) == "${"+dlq+".Arn}" &&
				Render(dig(s, "Condition", "ArnEquals", "aws:SourceArn")) == "${"+id+".Arn}" && len(cond) == 1 {
				allowed = true
			} else {
				problems = append(problems, fmt.Sprintf("%s: %s allows %v: want only events.amazonaws.com to "+
					"sqs:SendMessage, for this rule (aws:SourceArn)", id, qp, s))
			}
		}
	}
	if !allowed {
		problems = append(problems, fmt.Sprintf("%s: no queue policy lets EventBridge send %s's dead letters to %s", id, id, dlq))
	}

	name := Render(p["Name"])
	if p["Name"] == nil {
		problems = append(problems, fmt.Sprintf("%s: no Name, which its FailedInvocations alarm needs", id))
	} else if ids := findAlarms(tmpl, "AWS/Events", "FailedInvocations",
		map[string]string{"EventBusName": Render(p["EventBusName"]), "RuleName": name}); len(ids) != 1 {
		problems = append(problems, fmt.Sprintf("%s: %d alarms on AWS/Events FailedInvocations of EventBusName %s "+
			"RuleName %s, want 1", id, len(ids), Render(p["EventBusName"]), name))
	}
	if ids := findAlarms(tmpl, "AWS/SQS", "ApproximateNumberOfMessagesVisible",
		map[string]string{"QueueName": "${" + dlq + ".QueueName}"}); len(ids) != 1 {
		problems = append(problems, fmt.Sprintf("%s: %d alarms on the depth of %s, want 1", id, len(ids), dlq))
	}
	return problems, true
}

// policyStatements returns a policy's Statement as a list of statements, whether written as a list or as one.
func policyStatements(v any) []map[string]any {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var out []map[string]any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// TestLogGroupTargets: every rule that sends events to a log group names it by the ARN EventBridge wants, and what it
// cannot deliver lands in a dead-letter queue with alarms instead of being lost.
func TestLogGroupTargets(t *testing.T) {
	tmpl := TransformT(t)
	n := 0
	for _, id := range tmpl.OfType("AWS::Events::Rule") {
		targets, _ := tmpl.Resources[id].Properties["Targets"].([]any)
		for _, tg := range targets {
			problems, isLogs := logGroupTargetProblems(tmpl, id, tg)
			if isLogs {
				n++
			}
			for _, p := range problems {
				t.Error(p)
			}
		}
	}
	if n == 0 {
		t.Fatal("no rule targets a log group: the check saw nothing")
	}

	// The check itself: the log group's Arn attribute as the target is refused.
	broken := TransformT(t)
	rule := broken.Resources["TransferEventsRule"]
	tg := rule.Properties["Targets"].([]any)[0].(map[string]any)
	tg["Arn"] = map[string]any{"Fn::GetAtt": []any{"TransferEventsLogGroup", "Arn"}}
	if problems, _ := logGroupTargetProblems(broken, "TransferEventsRule", tg); len(problems) != 1 {
		t.Errorf("a target with \":*\": problems %v, want 1", problems)
	}
}
