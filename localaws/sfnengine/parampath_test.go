package sfnengine_test

import (
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestParameterPathCauses: every Path field that supplies a parameter fails in the two families of causes AWS
// records (for ErrorPath/CausePath and Parameters, and for SecondsPath/TimestampPath): a path matching nothing is
// "The JSONPath … specified for the field … could not be found in the input …", a value of the wrong type or range
// is "The <field> parameter <problem>: <path> == <value>", whichever the field.
func TestParameterPathCauses(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	wait := func(field string) string {
		return `{"StartAt":"W","States":{"W":{"Type":"Wait","` + field + `":"$.v","End":true}}}`
	}
	task := func(field string) string {
		return `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
  "Parameters":{"FunctionName":"f","Payload":{"t.$":"$$.Task.Token"}},"` + field + `":"$.v","End":true}}}`
	}
	mapState := `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrencyPath":"$.v","ItemsPath":"$.items",
  "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
	fail := `{"StartAt":"F","States":{"F":{"Type":"Fail","ErrorPath":"$.v","Cause":"c"}}}`
	for _, tc := range []struct {
		name, definition, input, wantCause string
	}{
		{"SecondsPath missing", wait("SecondsPath"), `{}`,
			`The JSONPath '$.v' specified for the field 'SecondsPath' could not be found in the input '{}'`},
		{"SecondsPath not a long", wait("SecondsPath"), `{"v":1.5}`, `The SecondsPath parameter cannot be parsed as a long value: $.v == 1.5`},
		{"SecondsPath negative", wait("SecondsPath"), `{"v":-3}`, `The SecondsPath parameter references a negative value: $.v == -3`},
		{"TimestampPath missing", wait("TimestampPath"), `{}`,
			`The JSONPath '$.v' specified for the field 'TimestampPath' could not be found in the input '{}'`},
		{"TimestampPath not a timestamp", wait("TimestampPath"), `{"v":"soon"}`,
			`The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.v == soon`},
		{"TimeoutSecondsPath missing", task("TimeoutSecondsPath"), `{}`,
			`The JSONPath '$.v' specified for the field 'TimeoutSecondsPath' could not be found in the input '{}'`},
		{"TimeoutSecondsPath not a long", task("TimeoutSecondsPath"), `{"v":"ten"}`,
			`The TimeoutSecondsPath parameter cannot be parsed as a long value: $.v == ten`},
		{"TimeoutSecondsPath zero", task("TimeoutSecondsPath"), `{"v":0}`,
			`The TimeoutSecondsPath parameter references a value that is not positive: $.v == 0`},
		{"HeartbeatSecondsPath negative", task("HeartbeatSecondsPath"), `{"v":-1}`,
			`The HeartbeatSecondsPath parameter references a negative value: $.v == -1`},
		{"MaxConcurrencyPath negative", mapState, `{"v":-1,"items":[1]}`,
			`The MaxConcurrencyPath parameter references a negative value: $.v == -1`},
		{"ErrorPath missing", fail, `{"x":1}`,
			`The JSONPath '$.v' specified for the field 'ErrorPath' could not be found in the input '{"x":1}'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := run(t, eng, tc.definition, tc.input)
			if rec.Status != sfnengine.StatusFailed || *rec.Error != sfnengine.ErrNameRuntime || !strings.HasSuffix(*rec.Cause, tc.wantCause) {
				t.Fatalf("%s %s: %s\nwant FAILED States.Runtime ending %q", rec.Status, *rec.Error, *rec.Cause, tc.wantCause)
			}
		})
	}
}
