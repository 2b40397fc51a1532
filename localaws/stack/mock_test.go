package stack

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnmock"
)

// TestMockConfigFlagAndEnv: --mock-config names the mock configuration file; without it, the file
// SFN_MOCK_CONFIG names, as for Step Functions Local; with neither, none.
func TestMockConfigFlagAndEnv(t *testing.T) {
	c, err := ParseFlags([]string{"--mock-config", "flag.json"}, io.Discard)
	if err != nil || c.MockConfig != "flag.json" {
		t.Fatalf("ParseFlags: %q, %v", c.MockConfig, err)
	}
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == "SFN_MOCK_CONFIG" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name, flag, env, want string
	}{
		{"the flag", "flag.json", "", "flag.json"},
		{"the flag over the environment", "flag.json", "env.json", "flag.json"},
		{"the environment", "", "env.json", "env.json"},
		{"neither", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MockConfigPath(tc.flag, env(tc.env)); got != tc.want {
				t.Errorf("MockConfigPath = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRunRefusesABadMockConfig: the stack does not start with a mock configuration file it cannot use, and says
// which file, where in it and what is wrong.
func TestRunRefusesABadMockConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "MockConfigFile.json")
	if err := os.WriteFile(path, []byte(`{"MockedResponses": {"R": {"2-1": {"Return": 1}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := ParseFlags([]string{"--template", filepath.Join("..", "..", "template.yaml"), "--mock-config", path,
		"--api-addr", "127.0.0.1:0", "--sfn-addr", "127.0.0.1:0", "--events-addr", "127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(t.Context(), c, io.Discard, io.Discard)
	var me *sfnmock.Error
	if !errors.As(err, &me) || me.File != path || me.Path != `MockedResponses.R."2-1"` {
		t.Fatalf("Run = %v; want the mock configuration's error at MockedResponses.R.\"2-1\"", err)
	}
}
