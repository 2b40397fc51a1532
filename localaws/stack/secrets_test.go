package stack

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// TestSecretRefsResolvedFromLocalSecrets: the orchestrator's IDEMPOTENCY_KEY_SECRET, a dynamic reference to the
// template's secret, gets a random value; with a data dir the same value at every start (kept in secrets.json, 0600),
// in memory a new one each time.
func TestSecretRefsResolvedFromLocalSecrets(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secret := func(dataDir string) string {
		t.Helper()
		fns, err := tmpl.Functions(samtemplate.Env{Region: Region, AccountID: AccountID}, namesWithStreams(t, tmpl))
		if err != nil {
			t.Fatal(err)
		}
		if err := resolveSecretRefs(fns, tmpl, dataDir); err != nil {
			t.Fatal(err)
		}
		for _, f := range fns {
			if f.LogicalID == "OrchestratorFunction" {
				return f.Environment["IDEMPOTENCY_KEY_SECRET"]
			}
		}
		t.Fatal("no OrchestratorFunction")
		return ""
	}
	tests := []struct {
		name     string
		a, b     string
		wantSame bool
	}{
		{name: "data dir keeps the secret across starts", a: secret(dir), b: secret(dir), wantSame: true},
		{name: "in memory each start has its own", a: secret(""), b: secret("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.a) < 32 || len(tt.b) < 32 {
				t.Fatalf("secrets %q %q: want at least 32 bytes", tt.a, tt.b)
			}
			if (tt.a == tt.b) != tt.wantSame {
				t.Errorf("secrets %q and %q: same = %v, want %v", tt.a, tt.b, tt.a == tt.b, tt.wantSame)
			}
		})
	}
	fi, err := os.Stat(filepath.Join(dir, secretsFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode = %v, want 0600", secretsFile, fi.Mode().Perm())
	}
}
