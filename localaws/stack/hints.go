package stack

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The addresses make run's examples assume: the spec's defaults, which transferctl (TRANSFERCTL_ENDPOINT unset) and
// events/env.json use.
const (
	defaultAPIURL      = "http://127.0.0.1:3000"
	defaultSFNURL      = "http://127.0.0.1:8083"
	defaultDynamoDBURL = "http://127.0.0.1:8000"
	defaultEventsURL   = "http://" + DefaultEventsAddr
)

// hints are the addresses and paths the examples printed after the ready line use.
type hints struct {
	endpoints map[string]string // the ready line's name=url pairs
	machine   string            // the ARN of the state machine the examples list executions of
	root      string            // the template's directory: bin/ and events/ are there
	cwd       string            // paths under it are printed relative to it
	lookPath  func(string) (string, error)
}

// hintsFor reads the endpoints from the ready line the stack printed, so that the examples name exactly what it
// serves.
func hintsFor(ready, root, machine string) hints {
	h := hints{endpoints: map[string]string{}, root: root, machine: machine, lookPath: exec.LookPath}
	for _, f := range strings.Fields(ready)[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			h.endpoints[k] = v
		}
	}
	h.cwd, _ = os.Getwd()
	return h
}

// path is rel, a path under the template's directory, as the user types it from the current directory.
func (h hints) path(rel string) string {
	p := filepath.Join(h.root, rel)
	if h.cwd != "" {
		if r, err := filepath.Rel(h.cwd, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	return p
}

// writeHints prints example commands against the stack's real addresses: a transfer with curl, transferctl (its
// history and accounts, and the outcome events when the stack serves them), the Step Functions API with the AWS CLI,
// and local invoke when events/env.json's addresses are the ones served.
func writeHints(w io.Writer, h hints) {
	api, sfn, ddb := h.endpoints["api"], h.endpoints["sfn"], h.endpoints["dynamodb"]
	ctl, local := h.path("bin/transferctl"), h.path("bin/local")
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("")
	p("The local stack is up (Ctrl-C stops it).")
	if c, ok := h.endpoints["console"]; ok {
		p("")
		p("  Audit console: %s/transfers", c)
	}
	p("")
	p("In another terminal:")
	p("")
	p("  curl -i -X POST %s/transfers -H 'Content-Type: application/json' -H 'Idempotency-Key: demo-1' \\", api)
	p(`    -d '{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR"}'`)
	p("  curl -s %s/transfers/<transferId>        # the transfer", api)
	if api != defaultAPIURL {
		p("  export TRANSFERCTL_ENDPOINT=%s", api)
	}
	p("  %s history <transferId>        # its audit trail", ctl)
	p("  %s accounts get acc-alice acc-bob", ctl)
	if events, ok := h.endpoints["events"]; ok {
		if events != defaultEventsURL {
			p("  export TRANSFERCTL_EVENTS_ENDPOINT=%s", events)
		}
		p("  %s events tail        # Transfer Completed / Transfer Failed", ctl)
	}
	awsCLI, note := h.awsCLI()
	p("  AWS_DEFAULT_REGION=%s AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \\", Region)
	p("    %s stepfunctions list-executions --endpoint-url %s --state-machine-arn %s%s", awsCLI, sfn, h.machine, note)
	if sfn == defaultSFNURL && ddb == defaultDynamoDBURL {
		p("  %s invoke OrchestratorFunction --event %s --env-vars %s", local,
			h.path("events/orchestrator-new-transfer.json"), h.path("events/env.json"))
	} else {
		p("  (%s invoke with --env-vars %s needs the default ports: the file names ports 8083 and 8000)", local,
			h.path("events/env.json"))
	}
	p("")
	_, _ = io.WriteString(w, b.String())
}

// awsCLI is the AWS CLI the examples run: the one `make venv` installs in .venv-awscli when it is there, else aws from
// PATH, with a note saying where to get one when PATH has none.
func (h hints) awsCLI() (cmd, note string) {
	rel := filepath.Join(".venv-awscli", "bin", "aws")
	if _, err := os.Stat(filepath.Join(h.root, rel)); err == nil {
		return h.path(rel), ""
	}
	if _, err := h.lookPath("aws"); err == nil {
		return "aws", ""
	}
	return "aws", "        # the AWS CLI: make venv installs one in .venv-awscli"
}
