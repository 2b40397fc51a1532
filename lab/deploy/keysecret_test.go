package deploy

import (
	"strconv"
	"testing"
)

// TestIdempotencyKeySecret: the secret that keys the record keys' hashes is generated long and without punctuation,
// outlives the stack like the table, is never rotated (a new value would orphan every key), and reaches only the
// orchestrator, as a dynamic reference CloudFormation resolves; LEGACY_KEY_HASH_UNTIL is empty unless set.
func TestIdempotencyKeySecret(t *testing.T) {
	tmpl := TransformT(t)
	r, ok := tmpl.Resources["IdempotencyKeySecret"]
	if !ok || r.Type != "AWS::SecretsManager::Secret" {
		t.Fatalf("IdempotencyKeySecret = %+v, want an AWS::SecretsManager::Secret", r)
	}
	if r.DeletionPolicy != "Retain" || r.UpdateReplacePolicy != "Retain" {
		t.Errorf("DeletionPolicy %q UpdateReplacePolicy %q, want Retain", r.DeletionPolicy, r.UpdateReplacePolicy)
	}
	if n, _ := strconv.Atoi(Render(dig(r.Properties, "GenerateSecretString", "PasswordLength"))); n < 32 {
		t.Errorf("PasswordLength = %d, want at least 32 (IDEMPOTENCY_KEY_SECRET's shortest)", n)
	}
	if got := Render(dig(r.Properties, "GenerateSecretString", "ExcludePunctuation")); got != "true" {
		t.Errorf("ExcludePunctuation = %s, want true", got)
	}
	if ids := tmpl.OfType("AWS::SecretsManager::RotationSchedule"); len(ids) > 0 {
		t.Errorf("rotation schedules %v: a rotated secret changes every record key", ids)
	}
	if got := Render(dig(tmpl.Parameters["LegacyKeyHashUntil"], "Default")); got != "" {
		t.Errorf("LegacyKeyHashUntil default = %q, want empty (a new stack has no legacy records)", got)
	}
	for _, id := range tmpl.OfType("AWS::Lambda::Function") {
		vars, _ := dig(tmpl.Resources[id].Properties, "Environment", "Variables").(map[string]any)
		tests := []struct {
			name, want string
		}{
			{name: "IDEMPOTENCY_KEY_SECRET", want: "{{resolve:secretsmanager:${IdempotencyKeySecret}:SecretString}}"},
			{name: "LEGACY_KEY_HASH_UNTIL", want: "${LegacyKeyHashUntil}"},
		}
		for _, tt := range tests {
			v, has := vars[tt.name]
			switch {
			case id != "OrchestratorFunction" && has:
				t.Errorf("%s has %s: only the orchestrator hashes keys", id, tt.name)
			case id == "OrchestratorFunction" && Render(v) != tt.want:
				t.Errorf("%s %s = %s, want %s", id, tt.name, Render(v), tt.want)
			}
		}
	}
}
