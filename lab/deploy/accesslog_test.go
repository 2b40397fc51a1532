package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// accessLogValue is what API Gateway writes in an access log line in place of one $context variable.
type accessLogValue struct {
	// quoted is true for the variables API Gateway writes as a JSON string, quotes included: of those its access
	// logging reference lists, only $context.error.messageString ("the quoted value of $context.error.message").
	// Every other value is written as it is, with no quoting or escaping.
	quoted bool
	// values are values API Gateway documents for the variable, "-" standing for one it does not have. For a quoted
	// variable they are the text before quoting. Variables whose values can hold quotes, backslashes or spaces (a
	// user agent, an error message, a time) have such values, so that a format that quotes one itself fails.
	values []string
}

// accessLogVariables are the $context variables of API Gateway's access logging reference that a REST API's access
// log format may use here, with their values. A format with a variable not listed fails the test: add it, with
// the values the reference gives it.
var accessLogVariables = map[string]accessLogValue{
	"$context.requestId":          {values: []string{"c6af9ac6-7b61-11e6-9a41-93e8deadbeef", "-"}},
	"$context.extendedRequestId":  {values: []string{"DhJ2bF1ZoAMEbVg=", "-"}},
	"$context.requestTime":        {values: []string{"28/Nov/2026:09:00:00 +0000"}},
	"$context.requestTimeEpoch":   {values: []string{"1795856400000"}},
	"$context.httpMethod":         {values: []string{"POST", "GET", "PUT"}},
	"$context.resourcePath":       {values: []string{"/transfers", "/operator/accounts/{accountId}/owner", "-"}},
	"$context.path":               {values: []string{"/v1/transfers/t-1", "/v1/transfers/a b"}},
	"$context.protocol":           {values: []string{"HTTP/1.1", "HTTP/2.0"}},
	"$context.stage":              {values: []string{"v1"}},
	"$context.status":             {values: []string{"200", "403", "502"}},
	"$context.responseLength":     {values: []string{"0", "1834", "-"}},
	"$context.responseLatency":    {values: []string{"12", "29001"}},
	"$context.integrationLatency": {values: []string{"-", "45"}},
	"$context.integrationStatus":  {values: []string{"-", "200", "500"}},
	"$context.error.responseType": {values: []string{"-", "MISSING_AUTHENTICATION_TOKEN", "ACCESS_DENIED"}},
	"$context.error.message": {values: []string{"-", "Missing Authentication Token",
		`Invalid request body: "amount" \ expected`}},
	"$context.error.messageString": {quoted: true, values: []string{"", "-", "Missing Authentication Token",
		"User: arn:aws:iam::123456789012:user/alice is not authorized to perform: execute-api:Invoke on resource: " +
			"arn:aws:execute-api:us-east-1:123456789012:abc123/v1/POST/transfers with an explicit deny",
		`Invalid request body: "amount" \ expected`}},
	"$context.identity.userArn": {values: []string{"arn:aws:iam::123456789012:user/alice",
		"arn:aws:sts::123456789012:assumed-role/payments-service/session-1", "-"}},
	"$context.identity.caller":    {values: []string{"AIDAJQABLZS4A3QDU576Q", "AROAEXAMPLE:session-1", "-"}},
	"$context.identity.accountId": {values: []string{"123456789012", "-"}},
	"$context.identity.sourceIp":  {values: []string{"203.0.113.7", "2001:db8::1"}},
	"$context.identity.userAgent": {values: []string{`aws-sdk-go-v2/1.36.3 os/linux lang/go#1.26 md/"x" \`, "-"}},
	"$context.xrayTraceId": {values: []string{"Root=1-5f84c7a1-6c0a3fb8d4a2e7c1b9e0f123;Parent=1a2b3c4d5e6f7a8b;Sampled=1",
		"-"}},
}

var (
	// contextVariable matches a $context variable of an access log format.
	contextVariable = regexp.MustCompile(`\$context\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*`)
	// accessLogField matches one "field":value pair of a format whose value is one $context variable, quoted by the
	// format or not.
	accessLogField = regexp.MustCompile(`"([^"]+)"\s*:\s*"?(\$context\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)"?`)
)

// jsonString is s as a JSON string, as API Gateway quotes $context.error.messageString.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// accessLogProblems renders format, an access log format, as API Gateway would for each combination of the values
// of accessLogVariables (round i takes each variable's value i, cycling), and returns what is wrong: a variable not
// listed, a line that is not one JSON object, or a field whose decoded value is not the one API Gateway put in.
func accessLogProblems(format string) []string {
	var problems []string
	vars := contextVariable.FindAllString(format, -1)
	if len(vars) == 0 {
		return []string{"the format has no $context variable"}
	}
	rounds := 0
	for _, v := range vars {
		val, ok := accessLogVariables[v]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not in accessLogVariables; add it with its documented values", v))
			continue
		}
		rounds = max(rounds, len(val.values))
	}
	if len(problems) > 0 {
		return problems
	}
	fields := accessLogField.FindAllStringSubmatch(format, -1)
	if len(fields) != len(vars) {
		problems = append(problems, fmt.Sprintf("%d $context variables but %d \"field\":value pairs: each variable "+
			"should be a field's whole value", len(vars), len(fields)))
	}
	for i := range rounds {
		pick := func(v string) string {
			val := accessLogVariables[v]
			return val.values[i%len(val.values)]
		}
		line := contextVariable.ReplaceAllStringFunc(format, func(v string) string {
			if accessLogVariables[v].quoted {
				return jsonString(pick(v))
			}
			return pick(v)
		})
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			problems = append(problems, fmt.Sprintf("not one JSON object (%v): %s", err, line))
			continue
		}
		for _, f := range fields {
			if want := pick(f[2]); got[f[1]] != want {
				problems = append(problems, fmt.Sprintf("field %q is %#v, want %q (%s): %s", f[1], got[f[1]], want, f[2], line))
			}
		}
	}
	return problems
}

// TestAccessLogFormatIsJSONForEveryValue: every access log line is one JSON object whose fields hold the values
// API Gateway put in, whatever they are: the format quotes every raw value and leaves $context.error.messageString,
// which API Gateway quotes itself, unquoted.
func TestAccessLogFormatIsJSONForEveryValue(t *testing.T) {
	tmpl := TransformT(t)
	stages := apiStages(t, tmpl)
	for _, id := range stages {
		format := Render(dig(tmpl.Resources[id].Properties, "AccessLogSetting", "Format"))
		if got := accessLogProblems(format); len(got) != 0 {
			t.Errorf("%s: access log format %s:\n%s", id, format, lines(got))
		}
	}
}

// TestAccessLogProblems: the check fails a format that quotes a value API Gateway quotes, one that leaves a raw
// value unquoted, and one that quotes a value that can hold a quote.
func TestAccessLogProblems(t *testing.T) {
	tests := []struct {
		name, format string
		ok           bool
	}{
		{"raw values quoted, messageString not", `{"id":"$context.requestId","error":$context.error.messageString}`, true},
		{"messageString quoted twice", `{"id":"$context.requestId","error":"$context.error.messageString"}`, false},
		{"raw value unquoted", `{"status":$context.status,"latency":"$context.integrationLatency"}`, false},
		{"a value with quotes", `{"agent":"$context.identity.userAgent"}`, false},
		{"an undocumented variable", `{"x":"$context.noSuchThing"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := accessLogProblems(tt.format)
			if (len(got) == 0) != tt.ok {
				t.Errorf("problems:\n%s\nwant ok=%v", lines(got), tt.ok)
			}
		})
	}
}
