package saminvoke

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBuildSettings builds a program and reads back the settings Go recorded in the binary: they are sam build's
// (CGO_ENABLED=0, the target) plus the project's flags.
func TestBuildSettings(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bootstrap")
	if err := Build(context.Background(), BuildOptions{Dir: filepath.Join("testdata", "hello"), Out: out, GOOS: "linux", GOARCH: runtime.GOARCH}); err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Key] = s.Value
	}
	for k, want := range map[string]string{
		"CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": runtime.GOARCH,
		"-trimpath": "true", "-tags": "lambda.norpc",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q (settings %v)", k, got[k], want, info.Settings)
		}
	}
	// Go does not record -ldflags under -trimpath; -s shows as a binary without a symbol table.
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
		t.Errorf("symbol table: %v, want none (-ldflags=-s)", err)
	}
}

// TestMakefileUsesTheSameFlags: make sam-build passes sam build the flags of the goflags file, not a copy of them.
func TestMakefileUsesTheSameFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	mk := strings.Join(lines, "\n")
	if !strings.Contains(mk, "localaws/saminvoke/goflags") || strings.Contains(mk, "lambda.norpc") {
		t.Error("the Makefile must read localaws/saminvoke/goflags and not repeat its flags")
	}
	for _, target := range []string{"sam-build:", "$(CHECK_LAMBDAS_STAMP):"} {
		i := strings.Index(mk, "\n"+target)
		if i < 0 {
			t.Fatalf("no %s target", target)
		}
		recipe, _, _ := strings.Cut(mk[i+1:], "\n\n")
		if !strings.Contains(recipe, "$(LAMBDA_GOFLAGS)") {
			t.Errorf("%s does not build with $(LAMBDA_GOFLAGS):\n%s", target, recipe)
		}
	}
}
