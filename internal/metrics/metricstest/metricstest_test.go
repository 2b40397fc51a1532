package metricstest

import (
	"fmt"
	"strings"
	"testing"
)

// valid is AWS's example document from the specification, on one line.
const valid = `{"_aws":{"Timestamp":1574109732004,"CloudWatchMetrics":[{"Namespace":"lambda-function-metrics","Dimensions":[["functionVersion"]],"Metrics":[{"Name":"time","Unit":"Milliseconds","StorageResolution":60}]}]},"functionVersion":"$LATEST","time":100,"requestId":"989ffbf8-9ace-4817-a57c-e4dd734019ee"}`

func TestParseAcceptsTheSpecificationsExample(t *testing.T) {
	l, err := Parse([]byte(valid + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := l.Metrics["time"]
	if l.Namespace != "lambda-function-metrics" || l.Timestamp != 1574109732004 || m.Value != 100 || m.Unit != "Milliseconds" ||
		fmt.Sprint(m.DimensionSets) != "[[functionVersion]]" || l.Dimensions("time")[0]["functionVersion"] != "$LATEST" {
		t.Errorf("parsed %+v", l)
	}
}

// TestParseRefuses: each document breaks one rule of the specification, and the checker says so.
func TestParseRefuses(t *testing.T) {
	dims := make([]string, 31)
	for i := range dims {
		dims[i] = fmt.Sprintf(`"d%d"`, i)
	}
	metricDefs := make([]string, 101)
	for i := range metricDefs {
		metricDefs[i] = `{"Name":"time"}`
	}
	tests := []struct {
		name, doc, msg string
	}{
		{"no _aws", `{"time":1}`, "no _aws"},
		{"a member twice", strings.Replace(valid, `"time":100`, `"time":100,"time":101`, 1), "appears twice"},
		{"data after the object", valid + ` {}`, "data after"},
		{"two lines", valid + "\n" + valid, "more than one line"},
		{"Timestamp in seconds as a float", strings.Replace(valid, "1574109732004", "1574109732.004", 1), "not an integer"},
		{"Timestamp as a string", strings.Replace(valid, "1574109732004", `"1574109732004"`, 1), "not an integer"},
		{"an unknown _aws member", strings.Replace(valid, `"Timestamp"`, `"Extra":1,"Timestamp"`, 1), `"Extra"`},
		{"a lower-case directive member", strings.Replace(valid, `"Namespace"`, `"namespace"`, 1), `"namespace"`},
		{"no dimension sets", strings.Replace(valid, `[["functionVersion"]]`, `[]`, 1), "Dimensions is empty"},
		{"31 dimension keys", strings.Replace(valid, `[["functionVersion"]]`, "[["+strings.Join(dims, ",")+"]]", 1), "31 keys"},
		{"a dimension that is a number", strings.Replace(valid, `"$LATEST"`, `7`, 1), "not a root member with a string value"},
		{"a dimension that is missing", strings.Replace(valid, `[["functionVersion"]]`, `[["region"]]`, 1), `"region"`},
		{"101 metric definitions", strings.Replace(valid, `{"Name":"time","Unit":"Milliseconds","StorageResolution":60}`, strings.Join(metricDefs, ","), 1), "101 MetricDefinitions"},
		{"a metric value that is a string", strings.Replace(valid, `"time":100`, `"time":"100"`, 1), "not a number"},
		{"a metric value that is null", strings.Replace(valid, `"time":100`, `"time":null`, 1), "not a number"},
		{"a metric that is missing", strings.Replace(valid, `"time":100,`, ``, 1), "not a number"},
		{"an unknown unit", strings.Replace(valid, `"Milliseconds"`, `"Millis"`, 1), "not a CloudWatch unit"},
		{"StorageResolution 30", strings.Replace(valid, `"StorageResolution":60`, `"StorageResolution":30`, 1), "neither 1 nor 60"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want one saying %q", err, tt.msg)
			}
		})
	}
}
