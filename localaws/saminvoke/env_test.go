package saminvoke

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

func TestStringify(t *testing.T) {
	tests := []struct {
		value string
		want  string
	}{
		{`"10s"`, "10s"},
		{`""`, ""},
		{`42`, "42"},
		{`-1.5`, "-1.5"},
		{`true`, "true"},
		{`false`, "false"},
		{`null`, ""},
		{`{"Ref": "Table"}`, ""},
		{`["a"]`, ""},
	}
	for _, tt := range tests {
		if got := stringify(json.RawMessage(tt.value)); got != tt.want {
			t.Errorf("stringify(%s) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// TestProjectEnvVarsFile: events/env.json gives every function of template.yaml exactly the variables the template
// declares for it (SAM ignores any other), pointed at `make run`'s default ports as SAM's container sees them.
func TestProjectEnvVarsFile(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions(samtemplate.Env{Region: "us-east-1", AccountID: samAccountID}, samResolver{region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	file, err := readEnvFile(filepath.Join("..", "..", "events", "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, fn := range fns {
		ids = append(ids, fn.LogicalID)
		entry, ok := file[fn.LogicalID]
		if !ok {
			t.Errorf("env.json has no entry for %s", fn.LogicalID)
			continue
		}
		declared, given := keys(fn.Environment), keys(entry)
		if !slices.Equal(declared, given) {
			t.Errorf("%s: env.json gives %v, the template declares %v", fn.LogicalID, given, declared)
		}
		env, ignored := environment(fn, file, credentials{region: "us-east-1"}, "/var/task")
		if len(ignored) > 0 {
			t.Errorf("%s: ignored %v", fn.LogicalID, ignored)
		}
		for name, want := range map[string]string{
			"TABLE_NAME":                "TransfersTable",
			"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000",
			"AWS_ENDPOINT_URL_SFN":      "http://127.0.0.1:8083",
		} {
			if env[name] != want {
				t.Errorf("%s: %s = %q, want %q", fn.LogicalID, name, env[name], want)
			}
		}
		// The orchestrator starts executions through the alias the stack publishes; the reconciler matches status
		// changes by the state machine's own ARN.
		wantMachine := "arn:aws:states:us-east-1:000000000000:stateMachine:TransferStateMachine"
		if fn.LogicalID == "OrchestratorFunction" {
			wantMachine += ":live"
		}
		if _, ok := fn.Environment["STATE_MACHINE_ARN"]; ok && env["STATE_MACHINE_ARN"] != wantMachine {
			t.Errorf("%s: STATE_MACHINE_ARN = %q", fn.LogicalID, env["STATE_MACHINE_ARN"])
		}
	}
	for id := range file {
		if id != "Parameters" && !slices.Contains(ids, id) {
			t.Errorf("env.json has an entry for %s, which the template does not define", id)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
