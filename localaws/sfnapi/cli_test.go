package sfnapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// awsCLI returns the path of the AWS CLI of the repository's .venv-awscli (made by `make venv`, which `make test`
// runs). Without it the test is skipped with a message naming `make test`, except under CI=true, where that is a
// failure.
func awsCLI(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
	aws := filepath.Join(dir, ".venv-awscli", "bin", "aws")
	if _, err := os.Stat(aws); errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: `make venv` (part of `make test`) installs the AWS CLI", aws)
		}
		t.Skipf("AWS CLI test skipped: %s is missing; `make test` (or `make venv`) installs it", aws)
	}
	return aws
}

// runCLI runs `aws <args> --endpoint-url url --output json` with local credentials and none of the caller's AWS
// configuration, plus env, and returns its standard output and standard error.
func runCLI(t *testing.T, aws, url string, env []string, args ...string) ([]byte, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, aws, append(args, "--endpoint-url", url, "--output", "json")...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AWS_") }),
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=", "AWS_MAX_ATTEMPTS=1")
	cmd.Env = append(cmd.Env, env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.String(), err
}

func decodeCLI(t *testing.T, out []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("the CLI's output is not JSON: %v\n%s", err, out)
	}
	return v
}

// TestAWSCLI runs the real AWS CLI (tools/requirements.txt) against the local API: create-state-machine,
// start-sync-execution and test-state, with AWS_DISABLE_HOST_PREFIX_INJECTION=true, the setting the local endpoint
// needs for the last two (their host prefix "sync-" would make the CLI call sync-127.0.0.1, which does not resolve,
// as the last call shows).
func TestAWSCLI(t *testing.T) {
	aws := awsCLI(t)
	srv := stepfunctions.RunT(t)
	noPrefix := []string{"AWS_DISABLE_HOST_PREFIX_INJECTION=true"}

	out, stderr, err := runCLI(t, aws, srv.URL(), noPrefix, "stepfunctions", "create-state-machine", "--name", "cli",
		"--definition", passChoice, "--role-arn", role, "--type", "EXPRESS")
	if err != nil {
		t.Fatalf("create-state-machine: %v\n%s", err, stderr)
	}
	smArn, _ := decodeCLI(t, out)["stateMachineArn"].(string)
	if smArn != "arn:aws:states:us-east-1:123456789012:stateMachine:cli" {
		t.Fatalf("stateMachineArn = %q", smArn)
	}

	out, stderr, err = runCLI(t, aws, srv.URL(), noPrefix, "stepfunctions", "start-sync-execution",
		"--state-machine-arn", smArn, "--name", "n1", "--input", `{"a":1}`)
	if err != nil {
		t.Fatalf("start-sync-execution: %v\n%s", err, stderr)
	}
	run := decodeCLI(t, out)
	if !regexp.MustCompile(`^arn:aws:states:us-east-1:123456789012:express:cli:n1:[0-9a-f-]{36}$`).MatchString(run["executionArn"].(string)) ||
		run["status"] != "SUCCEEDED" || run["output"] != `{"a":1,"r":{"n":1}}` || run["name"] != "n1" || run["input"] != `{"a":1}` {
		t.Fatalf("start-sync-execution = %s", out)
	}
	billing, _ := run["billingDetails"].(map[string]any)
	if billing["billedDurationInMilliseconds"] != float64(100) || billing["billedMemoryUsedInMB"] != float64(64) {
		t.Fatalf("billingDetails = %v", billing)
	}
	start, _ := run["startDate"].(float64) // AWS CLI v1 writes timestamps as epoch seconds
	stop, _ := run["stopDate"].(float64)
	if now := float64(time.Now().Unix()); start < now-60 || start > now+60 || stop < start {
		t.Fatalf("startDate %v, stopDate %v: want epoch seconds of now", run["startDate"], run["stopDate"])
	}

	out, stderr, err = runCLI(t, aws, srv.URL(), noPrefix, "stepfunctions", "test-state",
		"--definition", `{"Type":"Pass","InputPath":"$.a","Parameters":{"x.$":"$.b"},"ResultPath":"$.out","Next":"N"}`,
		"--input", `{"a":{"b":2}}`, "--inspection-level", "DEBUG")
	if err != nil {
		t.Fatalf("test-state: %v\n%s", err, stderr)
	}
	ts := decodeCLI(t, out)
	insp, _ := ts["inspectionData"].(map[string]any)
	if ts["status"] != "SUCCEEDED" || ts["nextState"] != "N" || ts["output"] != `{"a":{"b":2},"out":{"x":2}}` ||
		insp["afterInputPath"] != `{"b":2}` || insp["afterParameters"] != `{"x":2}` || insp["input"] != `{"a":{"b":2}}` {
		t.Fatalf("test-state = %s", out)
	}

	out, stderr, err = runCLI(t, aws, srv.URL(), noPrefix, "stepfunctions", "start-sync-execution", "--state-machine-arn", smArn+"-missing")
	if err == nil || !strings.Contains(stderr, "StateMachineDoesNotExist") {
		t.Fatalf("start-sync-execution of a missing state machine: %v, %s%s", err, out, stderr)
	}

	// Without the setting the CLI prefixes the host.
	_, stderr, err = runCLI(t, aws, srv.URL(), nil, "stepfunctions", "start-sync-execution", "--state-machine-arn", smArn)
	if err == nil || !strings.Contains(stderr, "sync-127.0.0.1") {
		t.Fatalf("start-sync-execution without AWS_DISABLE_HOST_PREFIX_INJECTION: %v, %s", err, stderr)
	}
}
