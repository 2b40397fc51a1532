package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// hostileMap loops over a Map of 1,000 iterations whose items each carry the input's 200 KB of padding, until the
// history quota (25,000 events) fails it: without a bound its history would hold over two gigabytes.
const hostileMap = `{"StartAt":"Init","States":{
  "Init":{"Type":"Pass","Parameters":{"items.$":"States.ArrayRange(1, 1000, 1)","pad.$":"$.pad"},"Next":"Fan"},
  "Fan":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":40,"ItemSelector":{"pad.$":"$.pad","i.$":"$$.Map.Item.Value"},
    "ItemProcessor":{"StartAt":"Echo","States":{"Echo":{"Type":"Pass","End":true}}},"ResultPath":null,"Next":"Init"}}}`

// vmRSS returns the resident set size of a process, from /proc/<pid>/status.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read the stack's memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/<pid>/status")
	return 0
}

// TestMemoryReturnsAfterAHostileExecution: a Map-in-a-loop execution (a hostile one the chaos work found) runs in a separate bin/local
// until AWS's history quota fails it; within a minute of its end the stack's resident memory is back within twice
// what it was idle before (after one transfer). The wait polls the memory, the minute is the requirement.
func TestMemoryReturnsAfterAHostileExecution(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the stack's resident memory")
	}
	s := startStack(t)
	r := s.submit("e2e-memory", transferBody("acc-alice", "acc-bob", 5, "EUR"))
	s.waitTerminal(r.Body["transferId"].(string), settle)
	pid := s.cmd.Process.Pid
	baseline := vmRSS(t, pid)

	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.SFN),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	ctx := context.Background()
	sm, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("hostile"),
		Definition: aws.String(hostileMap), RoleArn: aws.String("arn:aws:iam::123456789012:role/hostile")})
	if err != nil {
		t.Fatal(err)
	}
	input := fmt.Sprintf(`{"pad":%q}`, strings.Repeat("p", 200_000))
	exec, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(input)})
	if err != nil {
		t.Fatal(err)
	}
	var peak int64
	deadline := time.Now().Add(3 * time.Minute)
	for {
		peak = max(peak, vmRSS(t, pid))
		d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: exec.ExecutionArn})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != "RUNNING" {
			if d.Status != "FAILED" || aws.ToString(d.Error) != "States.Runtime" {
				t.Fatalf("hostile execution ended %s %s: %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hostile execution is still running after 3 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ended := time.Now()
	var rss int64
	for {
		if rss = vmRSS(t, pid); rss <= 2*baseline {
			break
		}
		if time.Since(ended) > time.Minute {
			t.Fatalf("resident memory %d MiB a minute after the hostile execution ended, want at most 2 × %d MiB (peak %d MiB)",
				rss>>20, baseline>>20, peak>>20)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("resident memory: %d MiB idle, %d MiB at the peak, %d MiB %.1fs after the end", baseline>>20, peak>>20, rss>>20,
		time.Since(ended).Seconds())
}
