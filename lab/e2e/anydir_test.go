package e2e

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStackFromAnotherDirectory starts the stack as a user would from outside the repository: no --template, no
// --seed, the current directory a temporary one (before, it failed there: it read template.yaml from the current
// directory). It finds the repository's template.yaml, says so on stderr, reads the state machine and the default
// seed next to it, and with --hints prints example commands naming the addresses it really serves (ports :0), not
// make run's defaults.
func TestStackFromAnotherDirectory(t *testing.T) {
	t.Parallel()
	args := append(dynamoDBArgs(t), "--api-addr", "127.0.0.1:0", "--sfn-addr", "127.0.0.1:0", "--dynamodb-addr", "127.0.0.1:0",
		"--events-addr", "127.0.0.1:0", "--hints")
	s := runStack(t, t.TempDir(), args)

	template := filepath.Join(root, "template.yaml")
	if !logged(s.stderr.String(), "template", "path", template) {
		t.Errorf("no log line {\"msg\":\"template\",\"path\":%q} on stderr:\n%s", template, tail(s.stderr.String(), 4000))
	}
	// The default seed, events/local-accounts.json next to the template, was read.
	if b := s.balance("acc-alice"); b <= 0 {
		t.Errorf("acc-alice's balance %d: the default seed was not read", b)
	}
	// The workflow runs: statemachine/ was read next to the template too.
	id := s.submitAccepted("POST /transfers", "anydir-1", transferBody("acc-alice", "acc-bob", 100, "EUR"))
	if got := s.waitTerminal(id, 30*time.Second); got["status"] != "COMPLETED" {
		t.Errorf("transfer %v", got)
	}

	hints := s.stderr.String()
	for _, want := range []string{
		"curl -i -X POST " + s.API + "/transfers ",
		"curl -s " + s.API + "/transfers/<transferId>",
		"export TRANSFERCTL_ENDPOINT=" + s.API,
		filepath.Join(root, "bin", "transferctl") + " history <transferId>",
		"--endpoint-url " + s.SFN + " ",
		"export TRANSFERCTL_EVENTS_ENDPOINT=" + s.Events,
	} {
		if !strings.Contains(hints, want) {
			t.Errorf("the hints lack %q:\n%s", want, tail(hints, 4000))
		}
	}
	for _, stale := range []string{"127.0.0.1:3000", "127.0.0.1:8083", "127.0.0.1:8084"} {
		if strings.Contains(hints, stale) {
			t.Errorf("the hints name %s, which the stack does not serve:\n%s", stale, tail(hints, 4000))
		}
	}
	if lines := strings.Split(strings.TrimSpace(s.stdout.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ready ") {
		t.Errorf("stdout holds more than the ready line (docs/local-stack.md):\n%s", s.stdout.String())
	}
}

// TestStackTemplateMissing: a --template that does not exist stops the stack at once, naming the file.
func TestStackTemplateMissing(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nowhere", "template.yaml")
	cmd := exec.Command(binary, "--template", missing, "--api-addr", "127.0.0.1:0", "--sfn-addr", "127.0.0.1:0",
		"--dynamodb-addr", "127.0.0.1:0", "--events-addr", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "local: read template: open "+missing) {
		t.Errorf("the error does not name %s:\n%s", missing, out)
	}
}

// logged reports whether a JSON log line of logs has message msg and key equal to value.
func logged(logs, msg, key, value string) bool {
	for _, line := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg && rec[key] == value {
			return true
		}
	}
	return false
}
