package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// transformLocked is transformJSON under transformed's lock, as the helpers call it; it skips the test without the
// translator (outside CI).
func transformLocked(t *testing.T, path string) ([]byte, error) {
	t.Helper()
	transformed.Lock()
	defer transformed.Unlock()
	out, err := transformJSON(context.Background(), path, nil)
	if errors.Is(err, ErrNoTranslator) && os.Getenv("CI") == "" {
		t.Skipf("template transform test skipped: %v", err)
	}
	return out, err
}

// TestTranslatorAnswersAfterARejection: a template the translator rejects gets its messages as the error, and the
// same translator then transforms the next template.
func TestTranslatorAnswersAfterARejection(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("Transform: AWS::Serverless-2016-10-31\nResources:\n  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        Api:\n          Type: Api\n          Properties: {Path: /x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := transformLocked(t, bad)
	if err == nil || !strings.Contains(err.Error(), "Fn") {
		t.Fatalf("a function without a method for its Api event: %v, want the translator's message naming Fn", err)
	}
	if err := errors.Unwrap(err); err != nil {
		t.Errorf("a rejection is the translator's answer, not a failure of the translator: %v", err)
	}
	out, err := transformLocked(t, "testdata/open-api.yaml")
	if err != nil {
		t.Fatalf("the next template: %v", err)
	}
	if _, err := decode("testdata/open-api.yaml", out); err != nil {
		t.Error(err)
	}
}

// TestTranslatorIsRestartedWhenItDies: a translator that has exited fails the transform it was asked for, and the next
// transform starts a new one.
func TestTranslatorIsRestartedWhenItDies(t *testing.T) {
	if _, err := transformLocked(t, "testdata/open-api.yaml"); err != nil {
		t.Fatal(err)
	}
	transformed.Lock()
	first := worker
	_ = first.cmd.Process.Kill()
	_ = first.cmd.Wait()
	transformed.Unlock()
	_, err := transformLocked(t, "testdata/open-api.yaml")
	var gone *translatorGone
	if !errors.As(err, &gone) {
		t.Fatalf("transform with the translator gone: %v, want a translatorGone", err)
	}
	if _, err := transformLocked(t, "testdata/open-api.yaml"); err != nil {
		t.Fatalf("the transform after: %v", err)
	}
	transformed.Lock()
	defer transformed.Unlock()
	if worker == nil || worker == first {
		t.Error("the transform after did not start a new translator")
	}
}
