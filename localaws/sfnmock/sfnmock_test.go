package sfnmock_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnmock"
)

const awsExample = "testdata/aws-example/MockConfigFile.json"

// TestAWSDocumentationExample reads the example of AWS's documentation: its test cases name their mocked
// responses, and MockedLambdaRetry gives invocation 0, the range 1-2 and 3, and nothing after.
func TestAWSDocumentationExample(t *testing.T) {
	c, err := sfnmock.Load(awsExample)
	if err != nil {
		t.Fatal(err)
	}
	if c.File() != awsExample || !c.HasStateMachine("LambdaSQSIntegration") || c.HasStateMachine("HappyPath") {
		t.Fatalf("file %q, LambdaSQSIntegration %v", c.File(), c.HasStateMachine("LambdaSQSIntegration"))
	}
	if got := strings.Join(c.TestCases("LambdaSQSIntegration"), ","); got != "HappyPath,HybridPath,RetryPath" {
		t.Errorf("test cases %s", got)
	}
	hybrid := c.TestCase("LambdaSQSIntegration", "HybridPath")
	if hybrid == nil || hybrid.Name() != "HybridPath" || hybrid.Response("LambdaState").Name() != "MockedLambdaSuccess" ||
		hybrid.Response("SQSState") != nil {
		t.Fatalf("HybridPath: %+v", hybrid)
	}
	if c.TestCase("LambdaSQSIntegration", "SadPath") != nil || c.TestCase("Other", "HappyPath") != nil {
		t.Error("a test case that is not in the file was found")
	}
	retry := c.TestCase("LambdaSQSIntegration", "RetryPath").Response("LambdaState")
	if retry.Name() != "MockedLambdaRetry" || retry.Invocations() != 4 {
		t.Fatalf("RetryPath's LambdaState: %s with %d invocations", retry.Name(), retry.Invocations())
	}
	for i, want := range []string{"Lambda.ResourceNotReadyException", "Lambda.TimeoutException", "Lambda.TimeoutException", ""} {
		o, ok := retry.At(i)
		if !ok || o.Throw != (want != "") || o.Error != want {
			t.Errorf("invocation %d: %+v, %v; want the error %q", i, o, ok, want)
		}
	}
	o, _ := retry.At(3)
	var compact bytes.Buffer
	if err := json.Compact(&compact, o.Return); err != nil || compact.String() != `{"StatusCode":200,"Payload":{"StatusCode":200,"body":"Hello from Lambda!"}}` {
		t.Errorf("invocation 3 returns %s (%v)", o.Return, err)
	}
	if o, ok := retry.At(1); o.Cause != "Lambda timed out." || !ok {
		t.Errorf("invocation 1: cause %q", o.Cause)
	}
	if _, ok := retry.At(4); ok {
		t.Error("invocation 4 has an outcome; the file gives 0 to 3")
	}
}

// TestRefusesMalformedFiles: every problem is refused with the file's name, the JSON path of the member at fault
// and what is wrong.
func TestRefusesMalformedFiles(t *testing.T) {
	const lambdaOK = `"MockedLambdaSuccess": {"0": {"Return": {"StatusCode": 200}}}`
	machine := func(tc string) string {
		return `"StateMachines": {"Sm": {"TestCases": {"Happy": ` + tc + `}}}`
	}
	cases := []struct {
		name, file, path, problem string
	}{
		{"not JSON", `{"StateMachines": `, "", "is not JSON: unexpected end of JSON input"},
		{"not an object", `[]`, "", "must be a JSON object, not an array"},
		{"unknown top-level member", `{"MockedResponse": {}}`, "MockedResponse", "is not a member of a mock configuration (StateMachines, MockedResponses)"},
		{"StateMachines not an object", `{"StateMachines": []}`, "StateMachines", "must be a JSON object, not an array"},
		{"state machine without TestCases", `{"StateMachines": {"Sm": {}}}`, "StateMachines.Sm", "has no TestCases"},
		{"state machine with another member", `{"StateMachines": {"Sm": {"TestCases": {}, "Cases": {}}}}`,
			"StateMachines.Sm.Cases", "is not a member of a state machine's mock configuration (TestCases)"},
		{"test case not an object", `{` + machine(`"MockedLambdaSuccess"`) + `}`, "StateMachines.Sm.TestCases.Happy",
			`must be a JSON object, not a string ("MockedLambdaSuccess")`},
		{"state naming a response that is not there", `{` + machine(`{"Debit": "MockedLambdaSucces"}`) + `, "MockedResponses": {` + lambdaOK + `}}`,
			"StateMachines.Sm.TestCases.Happy.Debit", `names the mocked response "MockedLambdaSucces", which MockedResponses does not define`},
		{"state naming no string", `{` + machine(`{"Debit": {"0": {}}}`) + `}`,
			"StateMachines.Sm.TestCases.Happy.Debit", "must be the name of a mocked response (a string), not an object"},
		{"descending range", `{"MockedResponses": {"R": {"2-1": {"Return": 1}}}}`, `MockedResponses.R."2-1"`,
			"is not an inclusive range: 1 is less than 2"},
		{"index not a number", `{"MockedResponses": {"R": {"x": {"Return": 1}}}}`, `MockedResponses.R.x`,
			`is not an invocation index ("0", "1", …) or an inclusive range of them ("1-2")`},
		{"negative index", `{"MockedResponses": {"R": {"-1": {"Return": 1}}}}`, `MockedResponses.R."-1"`, "is not an invocation index"},
		{"index too large", `{"MockedResponses": {"R": {"0-99999999999999999999": {"Return": 1}}}}`,
			`MockedResponses.R."0-99999999999999999999"`, "is not an invocation index: the number is too large"},
		{"no invocation", `{"MockedResponses": {"R": {}}}`, "MockedResponses.R", `gives no invocation`},
		{"gap", `{"MockedResponses": {"R": {"0": {"Return": 1}, "2-3": {"Return": 2}}}}`, "MockedResponses.R",
			"gives no outcome for invocation 1: the invocations must be numbered from 0 without gaps"},
		{"not from 0", `{"MockedResponses": {"R": {"1": {"Return": 1}}}}`, "MockedResponses.R", "gives no outcome for invocation 0"},
		{"overlap", `{"MockedResponses": {"R": {"0-1": {"Return": 1}, "1": {"Return": 2}}}}`, `MockedResponses.R."1"`,
			"gives invocation 1 again"},
		{"both Return and Throw", `{"MockedResponses": {"MockedLambdaSuccess": {"0-1": {"Return": 1, "Throw": {"Error": "E"}}}}}`,
			`MockedResponses.MockedLambdaSuccess."0-1"`, "has both Return and Throw"},
		{"neither Return nor Throw", `{"MockedResponses": {"R": {"0": {}}}}`, `MockedResponses.R."0"`, "has neither Return nor Throw"},
		{"another member than Return", `{"MockedResponses": {"R": {"0": {"Returns": 1}}}}`, `MockedResponses.R."0".Returns`,
			"is not a member of a mocked invocation (Return, Throw)"},
		{"invocation not an object", `{"MockedResponses": {"R": {"0": 7}}}`, `MockedResponses.R."0"`, "must be a JSON object, not a number (7)"},
		{"Throw without Error", `{"MockedResponses": {"R": {"0": {"Throw": {"Cause": "c"}}}}}`, `MockedResponses.R."0".Throw`,
			"has no Error"},
		{"Throw with an empty Error", `{"MockedResponses": {"R": {"0": {"Throw": {"Error": ""}}}}}`, `MockedResponses.R."0".Throw.Error`,
			`must be a non-empty string, not a string ("")`},
		{"Throw's Cause not a string", `{"MockedResponses": {"R": {"0": {"Throw": {"Error": "E", "Cause": {"a": 1}}}}}}`,
			`MockedResponses.R."0".Throw.Cause`, "must be a string, not an object"},
		{"Throw with another member", `{"MockedResponses": {"R": {"0": {"Throw": {"Error": "E", "Message": "m"}}}}}`,
			`MockedResponses.R."0".Throw.Message`, "is not a member of Throw (Error, Cause)"},
		{"Throw not an object", `{"MockedResponses": {"R": {"0": {"Throw": "States.TaskFailed"}}}}`, `MockedResponses.R."0".Throw`,
			"must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "MockConfigFile.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := sfnmock.Load(path)
			var me *sfnmock.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load = %v, %v; want an *sfnmock.Error", c, err)
			}
			if me.File != path || me.Path != tc.path || !strings.HasPrefix(me.Problem, tc.problem) {
				t.Errorf("file %q, path %q, problem %q; want %q, %q, %q…", me.File, me.Path, me.Problem, path, tc.path, tc.problem)
			}
			if want := "mock configuration " + path + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q: want it to start with %q and name %s", err, want, tc.path)
			}
		})
	}
}

// TestAcceptsWhatTheDocumentationAllows: Return may be any JSON value, Cause may be left out, a file may name no
// state machine, and a test case may mock no state.
func TestAcceptsWhatTheDocumentationAllows(t *testing.T) {
	c, err := sfnmock.Parse("inline", []byte(`{"StateMachines": {"Sm": {"TestCases": {"Empty": {}}}},
		"MockedResponses": {"R": {"0": {"Return": null}, "1-1": {"Return": "text"}, "2": {"Throw": {"Error": "E"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if tc := c.TestCase("Sm", "Empty"); tc == nil || tc.Response("Debit") != nil {
		t.Errorf("Empty: %+v", tc)
	}
	if _, err := sfnmock.Parse("empty", []byte(`{}`)); err != nil {
		t.Errorf("an empty configuration: %v", err)
	}
}

// TestLoadNamesAMissingFile: a file that cannot be read is refused with its name.
func TestLoadNamesAMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.json")
	_, err := sfnmock.Load(path)
	var me *sfnmock.Error
	if !errors.As(err, &me) || me.File != path || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("Load = %v", err)
	}
}
