package saminvoke

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// invocation is one run of Main.
type invocation struct {
	code           int
	stdout, stderr string
}

// invoke runs `local invoke` with args, the testdata template and, when they are not nil, an event and an env vars
// file written from the given values.
func invoke(t *testing.T, event any, envVars any, args ...string) invocation {
	t.Helper()
	dir := t.TempDir()
	args = append(args, "--template", filepath.Join("testdata", "template.yaml"))
	for flag, v := range map[string]any{"--event": event, "--env-vars": envVars} {
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, strings.TrimPrefix(flag, "--")+".json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, flag, path)
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return invocation{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

var reportRe = regexp.MustCompile(`(?m)^REPORT RequestId: ([0-9a-f-]{36})\tDuration: [0-9]+\.[0-9]{2} ms\tBilled Duration: [0-9]+ ms\t` +
	`Memory Size: 128 MB\tMax Memory Used: ([0-9]+) MB\tInit Duration: [0-9]+\.[0-9]{2} ms(?:\tStatus: (\w+)(?:\tError Type: (\S+))?)?$`)

// report is the REPORT line's request id, memory used, status and error type; the test fails without one.
func (inv invocation) report(t *testing.T) (requestID string, maxMemoryMB int, status, errorType string) {
	t.Helper()
	m := reportRe.FindStringSubmatch(inv.stderr)
	if m == nil {
		t.Fatalf("no REPORT line in:\n%s", inv.stderr)
	}
	if !strings.Contains(inv.stderr, "START RequestId: "+m[1]+" Version: $LATEST\n") || !strings.Contains(inv.stderr, "END RequestId: "+m[1]+"\n") {
		t.Errorf("no START or END line for %s in:\n%s", m[1], inv.stderr)
	}
	mem, _ := strconv.Atoi(m[2])
	return m[1], mem, m[3], m[4]
}

// errorDoc decodes an error document on standard output.
func (inv invocation) errorDoc(t *testing.T) (errorType, errorMessage string) {
	t.Helper()
	var doc struct{ ErrorType, ErrorMessage string }
	if err := json.Unmarshal([]byte(inv.stdout), &doc); err != nil || doc.ErrorType == "" {
		t.Fatalf("stdout is not an error document: %q (%v)\n%s", inv.stdout, err, inv.stderr)
	}
	return doc.ErrorType, doc.ErrorMessage
}

// clearAWSEnv gives the test an environment without AWS settings, as a machine without an AWS configuration.
func clearAWSEnv(t *testing.T) {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(k, "")
	}
}

// TestInvokeEnvironment: the function gets the environment sam local invoke gives it, and the Lambda context of
// the Runtime API's headers.
func TestInvokeEnvironment(t *testing.T) {
	clearAWSEnv(t)
	t.Setenv("PROBE_HOST_ONLY", "set in the shell")
	names := []string{"TABLE_NAME", "ENDPOINT", "PROBE_INIT", "QUEUE_ARN", "QUEUE_URL", "STACK", "UNDECLARED", "NOT_DECLARED",
		"PROBE_HOST_ONLY", "AWS_SAM_LOCAL", "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_TIMEOUT",
		"AWS_LAMBDA_FUNCTION_VERSION", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AWS_ACCOUNT_ID", "_HANDLER", "AWS_LAMBDA_LOG_FORMAT", "AWS_LAMBDA_RUNTIME_API"}
	inv := invoke(t, map[string]any{"env": names}, map[string]any{
		"Parameters": map[string]any{"ENDPOINT": "http://host.docker.internal:8000", "TABLE_NAME": "from-parameters", "UNDECLARED": "x"},
		"Probe":      map[string]any{"TABLE_NAME": "from-function-entry", "NOT_DECLARED": 1, "PROBE_INIT": nil},
	}, "Probe")
	if inv.code != ExitOK {
		t.Fatalf("exit %d\n%s", inv.code, inv.stderr)
	}
	requestID, _, status, _ := inv.report(t)
	var got struct {
		RequestID, FunctionArn, DeadlineLeft string
		TraceID                              string
		Env                                  map[string]*string
	}
	if err := json.Unmarshal([]byte(inv.stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, inv.stdout)
	}
	left, err := time.ParseDuration(got.DeadlineLeft)
	if got.RequestID != requestID || got.FunctionArn != "arn:aws:lambda:us-east-1:123456789012:function:Probe" ||
		!strings.HasPrefix(got.TraceID, "Root=1-") || status != "" || err != nil || left <= 0 || left > time.Second {
		t.Errorf("context = %+v, REPORT %s %q (the deadline is the template's Timeout, 1s, away)", got, requestID, status)
	}
	want := map[string]string{
		"TABLE_NAME":                      "from-function-entry", // the function's entry wins over Parameters
		"ENDPOINT":                        "http://127.0.0.1:8000",
		"PROBE_INIT":                      "", // null
		"QUEUE_ARN":                       "arn:aws:lambda:us-east-1:123456789012:function:Queue",
		"QUEUE_URL":                       "",
		"STACK":                           "probe/local/us-east-1",
		"AWS_SAM_LOCAL":                   "true",
		"AWS_LAMBDA_FUNCTION_NAME":        "Probe",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     "1",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"AWS_ACCESS_KEY_ID":               "defaultkey",
		"AWS_SECRET_ACCESS_KEY":           "defaultsecret",
		"AWS_ACCOUNT_ID":                  "123456789012",
		"_HANDLER":                        "bootstrap",
		"AWS_LAMBDA_LOG_FORMAT":           "JSON",
	}
	for name, v := range got.Env {
		switch w, ok := want[name]; {
		case ok && (v == nil || *v != w):
			t.Errorf("%s = %v, want %q", name, deref(v), w)
		case !ok && name == "AWS_LAMBDA_RUNTIME_API":
			if v == nil || !strings.HasPrefix(*v, "127.0.0.1:") {
				t.Errorf("%s = %v", name, deref(v))
			}
		case !ok && v != nil: // not declared by the template, or the shell's own
			t.Errorf("%s = %q, want it unset", name, *v)
		}
	}
	if !strings.Contains(inv.stderr, `"variables":["NOT_DECLARED"]`) {
		t.Errorf("no warning that NOT_DECLARED is ignored:\n%s", inv.stderr)
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// TestInvokeOutcomes: what standard output and the REPORT line say for each way an invocation can end.
func TestInvokeOutcomes(t *testing.T) {
	clearAWSEnv(t)
	type outcome struct {
		name    string
		event   any
		envVars any
		// the error document; wantType "" means a response, compared with wantOutput
		wantType, wantMessage string
		wantOutput            string
		// the REPORT line's Status and Error Type (by default the document's type)
		wantStatus, wantReportType string
	}
	tests := []outcome{
		{name: "response", event: map[string]any{"respond": map[string]any{"statusCode": 202}}, wantOutput: `{"statusCode":202}`},
		{name: "function error", event: map[string]any{"error": "no such account"}, wantType: "ProbeError", wantMessage: "no such account"},
		{name: "panic", event: map[string]any{"panic": "lost"}, wantType: "string", wantMessage: "lost"},
		{name: "timeout", event: map[string]any{"sleep": "1m"}, wantType: "Sandbox.Timedout",
			wantMessage: "Error: Task timed out after 1.00 seconds", wantStatus: "timeout"},
		{name: "exit during the invocation", event: map[string]any{"exit": 3}, wantType: "Runtime.ExitError",
			wantMessage: "Error: Runtime exited with error: exit status 3", wantStatus: "error"},
		{name: "exit at start", event: map[string]any{}, envVars: map[string]any{"Probe": map[string]any{"PROBE_INIT": "exit"}},
			wantType: "Runtime.ExitError", wantMessage: "Error: Runtime exited with error: exit status 7", wantStatus: "error"},
		// The invoker gets the document the runtime posted; the platform reports the header's type.
		{name: "initialization error", event: map[string]any{}, envVars: map[string]any{"Probe": map[string]any{"PROBE_INIT": "init-error"}},
			wantType: "ProbeInitError", wantMessage: "probe cannot start", wantStatus: "error", wantReportType: "Runtime.ProbeInitError"},
	}
	if runtime.GOOS == "linux" { // MemorySize is enforced where the process's memory can be read
		tests = append(tests, outcome{name: "over MemorySize", event: map[string]any{"allocate": 256}, wantType: "Runtime.OutOfMemory",
			wantMessage: "Error: Runtime exited with error: signal: killed", wantStatus: "error"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := invoke(t, tt.event, tt.envVars, "Probe")
			if inv.code != ExitOK {
				t.Fatalf("exit %d (a function that ran exits 0)\n%s", inv.code, inv.stderr)
			}
			requestID, maxMemory, status, errorType := inv.report(t)
			if status != tt.wantStatus {
				t.Errorf("REPORT Status %q, want %q", status, tt.wantStatus)
			}
			if tt.wantType == "" {
				if strings.TrimSpace(inv.stdout) != tt.wantOutput {
					t.Errorf("stdout %q, want %q", inv.stdout, tt.wantOutput)
				}
				return
			}
			typ, msg := inv.errorDoc(t)
			if typ != tt.wantType || !strings.Contains(msg, tt.wantMessage) {
				t.Errorf("error %s %q, want %s %q", typ, msg, tt.wantType, tt.wantMessage)
			}
			if tt.wantStatus != "" && tt.wantReportType == "" && !strings.HasPrefix(msg, "RequestId: "+requestID+" ") {
				t.Errorf("message %q does not start with the request id %s", msg, requestID)
			}
			wantReportType := cmp.Or(tt.wantReportType, tt.wantType)
			if status == "error" && errorType != wantReportType {
				t.Errorf("REPORT Error Type %q, want %q", errorType, wantReportType)
			}
			if tt.wantType == "Runtime.OutOfMemory" && maxMemory < 128 {
				t.Errorf("Max Memory Used %d MB, want at least the 128 MB it was killed over", maxMemory)
			}
		})
	}
}

func TestInvokeUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{name: "no function", args: nil, code: ExitUsage, want: "want one function logical id"},
		{name: "two functions", args: []string{"Probe", "Script"}, code: ExitUsage, want: "want one function logical id"},
		{name: "unknown flag", args: []string{"Probe", "--docker-network", "x"}, code: ExitUsage, want: "flag provided but not defined"},
		{name: "help", args: []string{"--help"}, code: ExitOK, want: "usage: local invoke"},
		{name: "no such function", args: []string{"Nope"}, code: ExitError, want: "the template has no function Nope (it has Probe, Script)"},
		{name: "not a Go function", args: []string{"Script"}, code: ExitError, want: "only Go functions"},
		{name: "no event file", args: []string{"Probe", "--event", "testdata/none.json"}, code: ExitError, want: "event: open testdata/none.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := invoke(t, nil, nil, tt.args...)
			if inv.code != tt.code || !strings.Contains(inv.stderr, tt.want) || inv.stdout != "" {
				t.Errorf("exit %d stdout %q stderr:\n%s\nwant exit %d and %q", inv.code, inv.stdout, inv.stderr, tt.code, tt.want)
			}
		})
	}
}
