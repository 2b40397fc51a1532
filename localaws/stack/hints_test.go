package stack

import (
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteHints(t *testing.T) {
	root := filepath.Join(string(filepath.Separator), "src", "repo")
	const machine = "arn:aws:states:us-east-1:000000000000:stateMachine:TransferStateMachine"
	tests := []struct {
		name         string
		ready, cwd   string
		want, absent []string
	}{
		{
			name:  "default ports, from the repository root",
			ready: "ready api=http://127.0.0.1:3000 sfn=http://127.0.0.1:8083 dynamodb=http://127.0.0.1:8000 events=http://127.0.0.1:8084",
			cwd:   root,
			want: []string{"curl -i -X POST http://127.0.0.1:3000/transfers ", "curl -s http://127.0.0.1:3000/transfers/<transferId>",
				"  bin/transferctl history <transferId>", "--endpoint-url http://127.0.0.1:8083 --state-machine-arn " + machine,
				"AWS_DEFAULT_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local",
				"  bin/local invoke OrchestratorFunction --event events/orchestrator-new-transfer.json --env-vars events/env.json",
				"  bin/transferctl events tail"},
			absent: []string{"TRANSFERCTL_ENDPOINT", "TRANSFERCTL_EVENTS_ENDPOINT"},
		},
		{
			name:  "ports chosen by the system, from elsewhere",
			ready: "ready api=http://127.0.0.1:41001 sfn=http://127.0.0.1:41002 dynamodb=http://127.0.0.1:41003 events=http://127.0.0.1:41004",
			cwd:   filepath.Join(string(filepath.Separator), "tmp"),
			want: []string{"curl -i -X POST http://127.0.0.1:41001/transfers ", "curl -s http://127.0.0.1:41001/transfers/<transferId>",
				"export TRANSFERCTL_ENDPOINT=http://127.0.0.1:41001", filepath.Join(root, "bin", "transferctl") + " history <transferId>",
				"--endpoint-url http://127.0.0.1:41002 ", "needs the default ports", "export TRANSFERCTL_EVENTS_ENDPOINT=http://127.0.0.1:41004"},
			absent: []string{":3000", ":8083", ":8084", "invoke OrchestratorFunction"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hintsFor(tt.ready, root, machine)
			h.cwd = tt.cwd
			var b strings.Builder
			writeHints(&b, h)
			out := b.String()
			for _, s := range tt.want {
				if !strings.Contains(out, s) {
					t.Errorf("hints lack %q:\n%s", s, out)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(out, s) {
					t.Errorf("hints contain %q:\n%s", s, out)
				}
			}
		})
	}
}

// TestHintsAWSCLI: the example runs the AWS CLI of .venv-awscli when make venv installed it, and otherwise aws from
// PATH, with a note saying where to get one when PATH has none.
func TestHintsAWSCLI(t *testing.T) {
	root := t.TempDir()
	const ready = "ready api=http://127.0.0.1:3000 sfn=http://127.0.0.1:8083 dynamodb=http://127.0.0.1:8000"
	onPath := false
	hintsAt := func(cwd string) string {
		h := hintsFor(ready, root, "arn:aws:states:us-east-1:000000000000:stateMachine:M")
		h.cwd = cwd
		h.lookPath = func(name string) (string, error) {
			if onPath {
				return "/usr/bin/" + name, nil
			}
			return "", exec.ErrNotFound
		}
		var b strings.Builder
		writeHints(&b, h)
		return b.String()
	}
	if out := hintsAt(root); !strings.Contains(out, "    aws stepfunctions list-executions ") || !strings.Contains(out, "make venv installs one in .venv-awscli") {
		t.Errorf("without .venv-awscli and with no aws on PATH, want aws and the note:\n%s", out)
	}
	onPath = true
	if out := hintsAt(root); !strings.Contains(out, "    aws stepfunctions list-executions ") || strings.Contains(out, "make venv installs") {
		t.Errorf("with aws on PATH, want aws and no note:\n%s", out)
	}
	onPath = false
	cli := filepath.Join(root, ".venv-awscli", "bin", "aws")
	if err := os.MkdirAll(filepath.Dir(cli), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cli, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	out := hintsAt(root)
	if !strings.Contains(out, "    "+filepath.Join(".venv-awscli", "bin", "aws")+" stepfunctions list-executions ") || strings.Contains(out, "make venv installs") {
		t.Errorf("with .venv-awscli, want its aws and no note:\n%s", out)
	}
	if out := hintsAt(t.TempDir()); !strings.Contains(out, "    "+cli+" stepfunctions") {
		t.Errorf("from outside the repository, want the CLI's absolute path %s:\n%s", cli, out)
	}
}

func TestParseFlagsTemplateSeedHelp(t *testing.T) {
	c, err := ParseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Template != "" || !c.SeedDefault || c.Hints {
		t.Errorf("defaults: --template %q (want \"\": found at start), seed next to the template %v, --hints %v", c.Template, c.SeedDefault, c.Hints)
	}
	c, err = ParseFlags([]string{"--seed", "", "--template", "x/template.yaml", "--hints"}, io.Discard)
	if err != nil || c.SeedDefault || c.Seed != "" || c.Template != "x/template.yaml" || !c.Hints {
		t.Errorf(`--seed "" --template x/template.yaml --hints: %+v, %v`, c, err)
	}
	var out strings.Builder
	if _, err := ParseFlags([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
	for _, s := range []string{"usage: local [flags]", "local invoke <LogicalId>", "-template", "-api-addr", "-hints", "-seed"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("usage lacks %q:\n%s", s, out.String())
		}
	}
}
