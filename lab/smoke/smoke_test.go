package smoke

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/stack"
)

// root is the repository (lab/smoke's grandparent); binary the local stack built from it by TestMain.
var root, binary string

func TestMain(m *testing.M) {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "smoke:", err)
		os.Exit(1)
	}
	root = filepath.Dir(filepath.Dir(wd))
	// Kept between runs (stack.KeptBinary): an unchanged stack is not linked again.
	if binary, err = stack.KeptBinary(context.Background(), root, "./cmd/local", "smoke"); err != nil {
		fmt.Fprintln(os.Stderr, "smoke:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// needDynoxide skips the test when the stack could not start its Dynoxide (fails under CI), as ddbserver.StartT does.
func needDynoxide(t *testing.T) {
	t.Helper()
	if _, err := ddbserver.BinaryPath(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("local stack test skipped: %v; `make test` installs Dynoxide", err)
	}
}

// allChecks are the checks a run reports, in order.
var allChecks = []string{CheckOpenAccounts, CheckFundSource, CheckSubmit, CheckReplay, CheckCompleted,
	CheckReplayTerminal, CheckBalances, CheckHistory, CheckListing, CheckOtherCaller, CheckFundingRefused, CheckOutcomeEvent}

// TestSmokeAgainstLocalStack runs cmd/smoke's --start-local, as make smoke does: the stack starts on free ports,
// every check passes and prints its ok line, and the exit status is 0.
func TestSmokeAgainstLocalStack(t *testing.T) {
	needDynoxide(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"--start-local", "--local-bin", binary, "--dir", root, "--timeout", "30s"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	for _, c := range allChecks {
		if !strings.Contains(stdout.String(), "\nok "+c+"\n") {
			t.Errorf("no line %q in\n%s", "ok "+c, &stdout)
		}
	}
	if strings.Contains(stdout.String(), "FAIL") {
		t.Errorf("a FAIL line in\n%s", &stdout)
	}
}

// TestSmokeFailsOnBrokenDeployment points the smoke at a stack whose credits all fail for good: transfers end
// refunded, so the run must fail, and say so on the COMPLETED check's line, while the checks that do not depend on
// money moving still pass.
func TestSmokeFailsOnBrokenDeployment(t *testing.T) {
	res, out := runAgainst(t, ProcessArgs{Operator: true, Extra: []string{"--fault", "credit:error=CreditRejected:leg=CREDIT"}})
	if res.OK() {
		t.Fatalf("the smoke passed against a stack that refunds every transfer:\n%s", out)
	}
	if !slices.Contains(res.Failed, CheckCompleted) || !strings.Contains(out, "\nFAIL "+CheckCompleted+": ") {
		t.Errorf("no FAIL line for %q:\n%s", CheckCompleted, out)
	}
	for _, c := range []string{CheckOpenAccounts, CheckSubmit, CheckReplay, CheckOtherCaller, CheckFundingRefused} {
		if !slices.Contains(res.Passed, c) {
			t.Errorf("%q failed against the broken stack, want ok:\n%s", c, out)
		}
	}
	if got := len(res.Passed) + len(res.Failed); got != len(allChecks) {
		t.Errorf("%d checks reported, want %d:\n%s", got, len(allChecks), out)
	}
}

// TestSmokeFailsWithoutOperator: a stack that names no operator refuses the funding, so the transfer cannot complete;
// the funding check's failure says where operators are named.
func TestSmokeFailsWithoutOperator(t *testing.T) {
	res, out := runAgainst(t, ProcessArgs{})
	for _, c := range []string{CheckFundSource, CheckCompleted} {
		if !slices.Contains(res.Failed, c) {
			t.Errorf("%q did not fail without an operator:\n%s", c, out)
		}
	}
	if !strings.Contains(out, "name it in the stack's OperatorPrincipalArns") {
		t.Errorf("the funding check's failure does not say where operators are named:\n%s", out)
	}
}

// ProcessArgs are the flags of a local stack a test smokes: the operator make run names, or none, and more flags.
type ProcessArgs struct {
	Operator bool
	Extra    []string
}

// runAgainst starts a local stack with args (in parallel with the other tests), runs every check against it and
// returns the result and the checks' lines.
func runAgainst(t *testing.T, args ProcessArgs) (Result, string) {
	t.Helper()
	needDynoxide(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	flags := args.Extra
	if args.Operator {
		flags = append([]string{"--operator", LocalOperator}, flags...)
	}
	var out, log bytes.Buffer
	p, err := stack.StartProcess(ctx, stack.ProcessOptions{Binary: binary, Dir: root, Args: flags, Stderr: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, &log)
	}
	defer p.Close()
	cfg := LocalConfig(p.API(), p.Endpoints["events"], &out)
	cfg.Timeout = 30 * time.Second
	return Run(ctx, cfg), out.String()
}

// TestMainUsage: exactly one target, else exit 2 before anything is sent.
func TestMainUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"--local", "--stack", "x"}, {"--start-local", "--local"}, {"--local", "extra"},
		{"--local", "--timeout", "0s"}, {"--no-such-flag"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), args, &stdout, &stderr); code != exitUsage {
			t.Errorf("Main(%q) = %d, want %d; stderr %s", args, code, exitUsage, &stderr)
		}
		if stdout.Len() != 0 {
			t.Errorf("Main(%q) printed %q", args, &stdout)
		}
	}
}

// TestMainUnreachableLocal: a --local target with nothing listening fails its checks (exit 1), with FAIL lines.
func TestMainUnreachableLocal(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"--local", "--api", "http://127.0.0.1:1", "--events", "http://127.0.0.1:1",
		"--timeout", "1s"}, &stdout, &stderr)
	if code != exitFailed || !strings.Contains(stdout.String(), "FAIL "+CheckOpenAccounts+": ") {
		t.Errorf("exit %d, stdout:\n%s", code, &stdout)
	}
}

func TestNewRunIDMakesValidAccountIDs(t *testing.T) {
	id := NewRunID(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))
	if !strings.HasPrefix(id, "20261128t100000-") || len(AccountPrefix+id+"-funding") > 64 {
		t.Errorf("run id %q", id)
	}
	if NewRunID(time.Now()) == NewRunID(time.Now()) {
		t.Error("two run ids alike")
	}
}
