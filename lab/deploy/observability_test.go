package deploy

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// logGroup checks that v names an AWS::Logs::LogGroup of tmpl (by Ref or GetAtt Arn) that is kept on delete (except
// when the failed operation that created it is rolled back, TestRetainedResourcesDoNotBlockRetries) and on
// replacement, and has a retention, and returns its logical id and RetentionInDays.
func logGroup(t *testing.T, tmpl *Template, who string, v any) (string, string) {
	t.Helper()
	id := ref(v)
	r, ok := tmpl.Resources[id]
	if !ok || r.Type != "AWS::Logs::LogGroup" {
		t.Errorf("%s: log group %v is not an AWS::Logs::LogGroup of the template", who, v)
		return "", ""
	}
	retention := Render(r.Properties["RetentionInDays"])
	if retention == "null" {
		t.Errorf("%s: log group %s keeps logs forever (no RetentionInDays)", who, id)
	}
	if r.DeletionPolicy != "RetainExceptOnCreate" || r.UpdateReplacePolicy != "Retain" {
		t.Errorf("%s: log group %s DeletionPolicy %q UpdateReplacePolicy %q, want RetainExceptOnCreate and Retain",
			who, id, r.DeletionPolicy, r.UpdateReplacePolicy)
	}
	return id, retention
}

func TestFunctionsAreTracedAndLogged(t *testing.T) {
	tmpl := TransformT(t)
	stmts := tmpl.RoleStatements()
	groups := map[string]string{}
	for _, fn := range tmpl.OfType("AWS::Lambda::Function") {
		p := tmpl.Resources[fn].Properties
		if mode := Render(dig(p, "TracingConfig", "Mode")); mode != "Active" {
			t.Errorf("%s: TracingConfig.Mode %s, want Active", fn, mode)
		}
		if f := Render(dig(p, "LoggingConfig", "LogFormat")); f != "JSON" {
			t.Errorf("%s: LoggingConfig.LogFormat %s, want JSON", fn, f)
		}
		group, retention := logGroup(t, tmpl, fn, dig(p, "LoggingConfig", "LogGroup"))
		if retention != "${LogRetentionDays}" {
			t.Errorf("%s: log group %s RetentionInDays %s, want the LogRetentionDays parameter", fn, group, retention)
		}
		if other, ok := groups[group]; ok {
			t.Errorf("%s and %s log to the same group %s", fn, other, group)
		}
		groups[group] = fn
		// The function's role may write to its own group only (TestLeastPrivilege checks the exact grants).
		role := tmpl.FunctionRole(fn)
		for _, s := range stmts {
			if s.Role == role && slices.Contains(s.Action, "logs:PutLogEvents") && !slices.Equal(s.Resource, []string{"${" + group + ".Arn}"}) {
				t.Errorf("%s: %s writes logs to %v, want only its group %s", fn, role, s.Resource, group)
			}
		}
	}
}

// TestWorkflowIsLoggedAndTraced: Step Functions deletes an execution's history 90 days after it closes, so every
// event is logged to a group kept AuditLogRetentionDays. Execution data stays out: task results carry balances.
func TestWorkflowIsLoggedAndTraced(t *testing.T) {
	tmpl := TransformT(t)
	for _, sm := range tmpl.OfType("AWS::StepFunctions::StateMachine") {
		p := tmpl.Resources[sm].Properties
		if v := Render(dig(p, "TracingConfiguration", "Enabled")); v != "true" {
			t.Errorf("%s: TracingConfiguration.Enabled %s", sm, v)
		}
		lc, _ := p["LoggingConfiguration"].(map[string]any)
		if lc["Level"] != "ALL" || lc["IncludeExecutionData"] != false {
			t.Errorf("%s: LoggingConfiguration Level %v IncludeExecutionData %v, want ALL and false", sm, lc["Level"], lc["IncludeExecutionData"])
		}
		dests, _ := lc["Destinations"].([]any)
		if len(dests) != 1 {
			t.Fatalf("%s: %d log destinations, want 1", sm, len(dests))
		}
		group, retention := logGroup(t, tmpl, sm, dig(dests[0], "CloudWatchLogsLogGroup", "LogGroupArn"))
		if retention != "${AuditLogRetentionDays}" {
			t.Errorf("%s: log group %s RetentionInDays %s, want the AuditLogRetentionDays parameter", sm, group, retention)
		}
	}
}

func TestAPIStageIsThrottledTracedAndLogged(t *testing.T) {
	tmpl := TransformT(t)
	stages := apiStages(t, tmpl)
	for _, id := range stages {
		p := tmpl.Resources[id].Properties
		if p["TracingEnabled"] != true {
			t.Errorf("%s: TracingEnabled %v", id, p["TracingEnabled"])
		}
		logGroup(t, tmpl, id+" access logs", dig(p, "AccessLogSetting", "DestinationArn"))
		// Which fields a line has; TestAccessLogFormatIsJSONForEveryValue checks that every line is JSON.
		format := map[string]bool{}
		for _, f := range accessLogField.FindAllStringSubmatch(Render(dig(p, "AccessLogSetting", "Format")), -1) {
			format[f[1]] = true
		}
		for _, field := range []string{"requestId", "status", "caller", "responseLatency", "errorMessage"} {
			if !format[field] {
				t.Errorf("%s: access log format has no %q", id, field)
			}
		}
		settings, _ := p["MethodSettings"].([]any)
		var all map[string]any
		for _, s := range settings {
			if m, _ := s.(map[string]any); m["ResourcePath"] == "/*" && m["HttpMethod"] == "*" {
				all = m
			}
		}
		if all == nil {
			t.Fatalf("%s: no MethodSettings for every method (/* *): %v", id, settings)
		}
		if Render(all["ThrottlingRateLimit"]) != "${ApiThrottleRateLimit}" || Render(all["ThrottlingBurstLimit"]) != "${ApiThrottleBurstLimit}" {
			t.Errorf("%s: throttling %v/%v, want the ApiThrottleRateLimit and ApiThrottleBurstLimit parameters",
				id, all["ThrottlingRateLimit"], all["ThrottlingBurstLimit"])
		}
		// Data tracing would log request and response bodies, balances included.
		if all["DataTraceEnabled"] != false || all["MetricsEnabled"] != true {
			t.Errorf("%s: DataTraceEnabled %v MetricsEnabled %v, want false and true", id, all["DataTraceEnabled"], all["MetricsEnabled"])
		}
	}
}

func TestLedgerTableOutlivesTheStack(t *testing.T) {
	tmpl := TransformT(t)
	r := tmpl.Resources["TransfersTable"]
	if r.DeletionPolicy != "Retain" || r.UpdateReplacePolicy != "Retain" {
		t.Errorf("DeletionPolicy %q UpdateReplacePolicy %q, want Retain", r.DeletionPolicy, r.UpdateReplacePolicy)
	}
	p := r.Properties
	for path, want := range map[string]string{
		"DeletionProtectionEnabled":                                   "true",
		"PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled": "true",
		"SSESpecification.SSEEnabled":                                 "true",
	} {
		if got := Render(dig(p, strings.Split(path, ".")...)); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
}

// TestReconcilerFailuresAreKept: an asynchronous invocation of the reconciler that keeps failing, or an event
// EventBridge cannot deliver, lands in an encrypted queue with an alarm on its depth instead of being dropped.
func TestReconcilerFailuresAreKept(t *testing.T) {
	tmpl := TransformT(t)
	const fn = "TimeoutReconcilerFunction"
	var dlq string
	for _, id := range tmpl.OfType("AWS::Lambda::EventInvokeConfig") {
		p := tmpl.Resources[id].Properties
		if ref(p["FunctionName"]) == fn {
			dlq = ref(dig(p, "DestinationConfig", "OnFailure", "Destination"))
		}
	}
	q, ok := tmpl.Resources[dlq]
	if !ok || q.Type != "AWS::SQS::Queue" {
		t.Fatalf("%s: no EventInvokeConfig OnFailure destination that is a queue of the template (got %q)", fn, dlq)
	}
	if q.Properties["SqsManagedSseEnabled"] != true && q.Properties["KmsMasterKeyId"] == nil {
		t.Errorf("%s is not encrypted", dlq)
	}
	rules := 0
	for _, id := range tmpl.OfType("AWS::Events::Rule") {
		targets, _ := tmpl.Resources[id].Properties["Targets"].([]any)
		for _, tg := range targets {
			if tmpl.Function(ref(dig(tg, "Arn"))) != fn { // the function or its alias
				continue
			}
			rules++
			if got := ref(dig(tg, "DeadLetterConfig", "Arn")); got != dlq {
				t.Errorf("%s: target %s has dead-letter queue %q, want %s", id, fn, got, dlq)
			}
		}
	}
	if rules != 2 {
		t.Errorf("%d rules target %s, want 2 (status changes and the sweep schedule)", rules, fn)
	}
	if len(findAlarms(tmpl, "AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]string{"QueueName": "${" + dlq + ".QueueName}"})) != 1 {
		t.Errorf("no alarm on the depth of %s", dlq)
	}
}

// findAlarms returns the alarms on namespace/metric with exactly dims (rendered as Render does), as a plain metric
// or as one metric of a metric-math alarm.
func findAlarms(tmpl *Template, namespace, metric string, dims map[string]string) []string {
	var ids []string
	for _, id := range tmpl.OfType("AWS::CloudWatch::Alarm") {
		p := tmpl.Resources[id].Properties
		candidates := []any{p}
		if ms, ok := p["Metrics"].([]any); ok {
			candidates = nil
			for _, m := range ms {
				candidates = append(candidates, dig(m, "MetricStat", "Metric"))
			}
		}
		for _, c := range candidates {
			cm, _ := c.(map[string]any)
			if Render(cm["Namespace"]) != namespace || cm["MetricName"] != metric || !sameDimensions(cm["Dimensions"], dims) {
				continue
			}
			ids = append(ids, id)
			break
		}
	}
	return ids
}

func sameDimensions(v any, want map[string]string) bool {
	list, _ := v.([]any)
	if len(list) != len(want) {
		return false
	}
	for _, d := range list {
		dm, _ := d.(map[string]any)
		name, _ := dm["Name"].(string)
		if w, ok := want[name]; !ok || Render(dm["Value"]) != w {
			return false
		}
	}
	return true
}

// workflowFunctions returns the functions of tmpl whose ARN (or an alias's or version's) a state machine's
// DefinitionSubstitutions name, sorted: the ones the workflow invokes.
func workflowFunctions(tmpl *Template) []string {
	var fns []string
	for _, sm := range tmpl.OfType("AWS::StepFunctions::StateMachine") {
		subs, _ := tmpl.Resources[sm].Properties["DefinitionSubstitutions"].(map[string]any)
		for _, v := range subs {
			id := ref(v)
			if r := tmpl.Resources[id]; r.Type == "AWS::Lambda::Alias" || r.Type == "AWS::Lambda::Version" {
				id = ref(r.Properties["FunctionName"])
			}
			if tmpl.Resources[id].Type == "AWS::Lambda::Function" && !slices.Contains(fns, id) {
				fns = append(fns, id)
			}
		}
	}
	slices.Sort(fns)
	return fns
}

// TestAlarms checks that every failure an operator must hear about has an alarm that notifies the alarm topic, and
// that no alarm pages on the errors of the functions the workflow invokes: it retries their transient errors and
// catches their outcomes, and one it does not absorb fails or times out the execution, which pages.
func TestAlarms(t *testing.T) {
	tmpl := TransformT(t)
	const ns = "TransferOrchestrator/${AWS::StackName}"
	machine := map[string]string{"StateMachineArn": "${TransferStateMachine}"}
	api := map[string]string{"ApiName": "${AWS::StackName}-transfers", "Stage": "v1"}
	want := []struct {
		name, namespace, metric string
		dims                    map[string]string
	}{
		{"executions failed", "AWS/States", "ExecutionsFailed", machine},
		{"executions timed out", "AWS/States", "ExecutionsTimedOut", machine},
		{"executions aborted", "AWS/States", "ExecutionsAborted", machine},
		{"API 5XX", "AWS/ApiGateway", "5XXError", api},
		{"API latency", "AWS/ApiGateway", "Latency", api},
		{"reconciler settlements", ns, "Settlements", map[string]string{"Service": "timeout-reconciler"}},
		{"reconciler sweep stopped", ns, "ReconcilerRuns", map[string]string{"Service": "timeout-reconciler", "Trigger": "sweep"}},
	}
	legs := workflowFunctions(tmpl)
	if len(legs) == 0 {
		t.Fatal("the state machine invokes no function of the template: the check of their alarms would see nothing")
	}
	streamed := streamFunctions(tmpl)
	if len(streamed) == 0 {
		t.Fatal("no function is mapped to a stream: the check of the outbox's alarms would see nothing")
	}
	for _, fn := range streamed {
		want = append(want, struct {
			name, namespace, metric string
			dims                    map[string]string
		}{fn + " iterator age", "AWS/Lambda", "IteratorAge", map[string]string{"FunctionName": "${" + fn + "}"}})
	}
	legs = append(legs, streamed...)
	// The errors and throttles of the functions the workflow invokes page no one: the workflow retries or catches
	// them, and the executions it fails or times out have their own alarms. The same holds for a function its
	// stream's event source mapping invokes: Lambda retries the batch in order, and records that wait page through
	// the mapping's IteratorAge alarm (below). An alarm on their errors may exist only as the rollback trigger of the
	// function's gradual deployment (TestFunctionsDeployGradually), one on their throttles for the dashboard, both
	// without actions.
	silent := map[string]bool{}
	for _, fn := range tmpl.OfType("AWS::Lambda::Function") {
		dims := map[string]string{"FunctionName": "${" + fn + "}"}
		if !slices.Contains(legs, fn) {
			want = append(want, struct {
				name, namespace, metric string
				dims                    map[string]string
			}{fn + " errors", "AWS/Lambda", "Errors", dims})
		} else {
			for _, metric := range []string{"Errors", "Throttles"} {
				for _, id := range findAlarms(tmpl, "AWS/Lambda", metric, dims) {
					silent[id] = true
					p := tmpl.Resources[id].Properties
					if p["AlarmActions"] != nil || p["OKActions"] != nil || p["InsufficientDataActions"] != nil {
						t.Errorf("%s: pages on the %s of %s, which the workflow retries or catches; the executions "+
							"it fails or times out have their own alarms", id, metric, fn)
					}
				}
			}
		}
		want = append(want,
			struct {
				name, namespace, metric string
				dims                    map[string]string
			}{fn + " throttles", "AWS/Lambda", "Throttles", dims})
	}
	for _, w := range want {
		ids := findAlarms(tmpl, w.namespace, w.metric, w.dims)
		if len(ids) != 1 {
			t.Errorf("%s: %d alarms on %s %s %v, want 1", w.name, len(ids), w.namespace, w.metric, w.dims)
		}
	}
	if ids := findAlarms(tmpl, "AWS/ApiGateway", "Latency", api); len(ids) == 1 {
		if s := tmpl.Resources[ids[0]].Properties["ExtendedStatistic"]; s != "p99" {
			t.Errorf("%s: statistic %v, want p99", ids[0], s)
		}
	}
	if ids := findAlarms(tmpl, ns, "ReconcilerRuns", map[string]string{"Service": "timeout-reconciler", "Trigger": "sweep"}); len(ids) == 1 {
		// The sweep reports each run; silence is the failure, so missing data must breach.
		if p := tmpl.Resources[ids[0]].Properties; p["TreatMissingData"] != "breaching" || p["ComparisonOperator"] != "LessThanThreshold" {
			t.Errorf("%s: TreatMissingData %v ComparisonOperator %v, want breaching and LessThanThreshold", ids[0], p["TreatMissingData"], p["ComparisonOperator"])
		}
	}
	for _, id := range tmpl.OfType("AWS::CloudWatch::Alarm") {
		p := tmpl.Resources[id].Properties
		if silent[id] {
			continue
		}
		if !slices.Equal(stringList(p["AlarmActions"]), []string{"${AlarmTopic}"}) {
			t.Errorf("%s: AlarmActions %v, want the alarm topic", id, p["AlarmActions"])
		}
	}
}

// streamFunctions returns the functions an event source mapping on a DynamoDB stream invokes.
func streamFunctions(tmpl *Template) []string {
	var out []string
	for _, id := range tmpl.OfType("AWS::Lambda::EventSourceMapping") {
		p := tmpl.Resources[id].Properties
		if strings.HasSuffix(Render(p["EventSourceArn"]), ".StreamArn}") {
			out = appendNew(out, tmpl.Function(ref(p["FunctionName"])))
		}
	}
	return out
}

// TestDashboardShowsEveryAlarm: the dashboard is valid JSON once CloudFormation substitutes it, and shows every
// alarm of the stack.
func TestDashboardShowsEveryAlarm(t *testing.T) {
	tmpl := TransformT(t)
	ids := tmpl.OfType("AWS::CloudWatch::Dashboard")
	if len(ids) != 1 {
		t.Fatalf("%d dashboards, want 1", len(ids))
	}
	body := Render(tmpl.Resources[ids[0]].Properties["DashboardBody"])
	substituted := regexp.MustCompile(`\$\{[^}]+\}`).ReplaceAllString(body, "x")
	var dash struct {
		Widgets []map[string]any `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(substituted), &dash); err != nil || len(dash.Widgets) == 0 {
		t.Fatalf("dashboard body is not a dashboard (%v): %.200s", err, substituted)
	}
	for _, alarm := range tmpl.OfType("AWS::CloudWatch::Alarm") {
		if !strings.Contains(body, `"${`+alarm+`.Arn}"`) {
			t.Errorf("the dashboard does not show %s", alarm)
		}
	}
}

// TestCheckovSkipsSayWhy: checkov runs in `make test` with 0 failed checks; every check it skips is skipped in
// the resource's Metadata, with the reason.
func TestCheckovSkipsSayWhy(t *testing.T) {
	path, err := ProjectTemplate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources map[string]struct {
			Metadata struct {
				Checkov struct {
					Skip []struct {
						ID      string `yaml:"id"`
						Comment string `yaml:"comment"`
					} `yaml:"skip"`
				} `yaml:"checkov"`
			} `yaml:"Metadata"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatal(err)
	}
	skips := 0
	for id, r := range tmpl.Resources {
		for _, s := range r.Metadata.Checkov.Skip {
			skips++
			if !regexp.MustCompile(`^CKV2?_AWS_\d+$`).MatchString(s.ID) || len(strings.Fields(s.Comment)) < 8 {
				t.Errorf("%s: checkov skip %q with reason %q: want a check id and a reason", id, s.ID, s.Comment)
			}
		}
	}
	if skips == 0 {
		t.Error("no checkov skips found: did the Metadata format change?")
	}
}

// dig follows keys through nested maps and returns the value, or nil.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// apiStages returns the template's API Gateway stages, and fails the test when it has none (a check of every stage
// would otherwise pass on a template without one).
func apiStages(t *testing.T, tmpl *Template) []string {
	t.Helper()
	stages := tmpl.OfType("AWS::ApiGateway::Stage")
	if len(stages) == 0 {
		t.Fatal("no API stage")
	}
	return stages
}
