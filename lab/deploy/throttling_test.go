package deploy

import (
	"strconv"
	"strings"
	"testing"
)

// Step Functions' GetExecutionHistory quota for Standard workflows, per account and region, in every region (AWS
// Step Functions developer guide, "Step Functions service quotas", quotas related to API action throttling): a
// token bucket of 400 calls that refills at 20 a second.
const (
	getExecutionHistoryBucket = 400
	getExecutionHistoryRefill = 20
)

// encodeResourcePath writes an API path as a stage's MethodSetting names it: every "/" as "~1", after a leading
// "/" ("/a/b" is "/~1a~1b").
func encodeResourcePath(path string) string {
	return "/" + strings.ReplaceAll(path, "/", "~1")
}

// number reads a template number (a JSON number, or a string holding one).
func number(t *testing.T, what string, v any) float64 {
	t.Helper()
	n, err := strconv.ParseFloat(strings.Trim(Render(v), `"`), 64)
	if err != nil {
		t.Fatalf("%s: %v is not a number", what, v)
	}
	return n
}

// TestHistoryRoutesStayWithinTheQuota: every route that reads an execution's history (GET …/history, one
// GetExecutionHistory call per uncached read) has its own throttling on every stage, from the HistoryThrottle
// parameters, and those parameters cannot let the routes together reach the account's GetExecutionHistory quota,
// whatever values a deployment gives them. Each such setting keeps data tracing off and metrics on, as the
// stage-wide one does, and names a method the API has.
func TestHistoryRoutesStayWithinTheQuota(t *testing.T) {
	tmpl := TransformT(t)
	var history []Method
	paths := map[string]bool{}
	for _, m := range tmpl.APIMethods() {
		paths[m.Verb+" "+encodeResourcePath(m.Path)] = true
		if m.Verb == "GET" && strings.HasSuffix(m.Path, "/history") {
			history = append(history, m)
		}
	}
	if len(history) < 2 {
		t.Fatalf("history routes %v, want the client's and the operator's", history)
	}

	rate, burst := tmpl.Parameters["HistoryThrottleRateLimit"], tmpl.Parameters["HistoryThrottleBurstLimit"]
	if rate == nil || burst == nil {
		t.Fatal("no HistoryThrottleRateLimit or HistoryThrottleBurstLimit parameter")
	}
	n := float64(len(history))
	for _, p := range []struct {
		name  string
		param map[string]any
		quota float64
	}{{"HistoryThrottleRateLimit", rate, getExecutionHistoryRefill}, {"HistoryThrottleBurstLimit", burst, getExecutionHistoryBucket}} {
		if p.param["MaxValue"] == nil || p.param["MinValue"] == nil {
			t.Errorf("%s has no MinValue or MaxValue: a deployment could set any limit", p.name)
			continue
		}
		maxV, def := number(t, p.name+" MaxValue", p.param["MaxValue"]), number(t, p.name+" Default", p.param["Default"])
		if n*maxV >= p.quota {
			t.Errorf("%s MaxValue %v: %v history routes at that limit reach the quota of %v", p.name, maxV, n, p.quota)
		}
		if def < number(t, p.name+" MinValue", p.param["MinValue"]) || def > maxV {
			t.Errorf("%s Default %v is outside its MinValue and MaxValue", p.name, def)
		}
	}

	stages := apiStages(t, tmpl)
	for _, id := range stages {
		settings, _ := tmpl.Resources[id].Properties["MethodSettings"].([]any)
		byMethod := map[string]map[string]any{}
		for _, s := range settings {
			m, _ := s.(map[string]any)
			key := Render(m["HttpMethod"]) + " " + Render(m["ResourcePath"])
			if key != "* /*" && !paths[key] {
				t.Errorf("%s: MethodSettings for %s, which is no method of the API", id, key)
			}
			byMethod[key] = m
		}
		for _, h := range history {
			key := h.Verb + " " + encodeResourcePath(h.Path)
			s := byMethod[key]
			if s == nil {
				t.Errorf("%s: no MethodSettings for %s (%s): it is throttled only by the stage's limit", id, h, key)
				continue
			}
			if Render(s["ThrottlingRateLimit"]) != "${HistoryThrottleRateLimit}" || Render(s["ThrottlingBurstLimit"]) != "${HistoryThrottleBurstLimit}" {
				t.Errorf("%s: %s throttling %v/%v, want the HistoryThrottleRateLimit and HistoryThrottleBurstLimit parameters",
					id, h, s["ThrottlingRateLimit"], s["ThrottlingBurstLimit"])
			}
			if s["DataTraceEnabled"] != false || s["MetricsEnabled"] != true || s["LoggingLevel"] != "ERROR" {
				t.Errorf("%s: %s DataTraceEnabled %v MetricsEnabled %v LoggingLevel %v, want false, true and ERROR as the stage's",
					id, h, s["DataTraceEnabled"], s["MetricsEnabled"], s["LoggingLevel"])
			}
		}
	}
}
