package samtemplate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	const module = "example.com/transfers"
	tmp := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		path = filepath.Join(tmp, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// repo: the module, with bin/ and a nested folder that has a template.yaml of its own but no go.mod.
	write("repo/go.mod", "// the module\nmodule "+module+" // a comment\n\ngo 1.26\n")
	write("repo/template.yaml", "Resources: {}\n")
	write("repo/bin/.keep", "")
	write("repo/examples/template.yaml", "Resources: {}\n")
	write("repo/examples/deep/.keep", "")
	// other: another module's SAM application.
	write("other/go.mod", "module \"example.com/other\"\n")
	write("other/template.yaml", "Resources: {}\n")
	write("elsewhere/.keep", "")
	in := func(p string) string { return filepath.Join(tmp, p) }

	tests := []struct {
		name    string
		module  string
		starts  []string
		want    string
		wantErr []string // substrings of the error
	}{
		{"the start itself", module, []string{in("repo")}, in("repo/template.yaml"), nil},
		{"a parent; a template without go.mod is passed over", module, []string{in("repo/examples/deep")}, in("repo/template.yaml"), nil},
		{"another module's template is passed over for the next start", module, []string{in("other"), in("repo/bin")}, in("repo/template.yaml"), nil},
		{"empty starts are passed over", module, []string{"", in("repo/bin")}, in("repo/template.yaml"), nil},
		{"any module when none is named", "", []string{in("other")}, in("other/template.yaml"), nil},
		{"not found: the error names every start", module, []string{in("elsewhere"), in("other")},
			"", []string{"no template.yaml next to the go.mod of " + module, in("elsewhere"), in("other"), "or their parents"}},
		{"nowhere to look", module, []string{""}, "", []string{"nowhere to look"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.module, tt.starts...)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Find = %s, want an error", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Find = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestLocate: from a test binary, the current directory is the package's, inside the repository.
func TestLocate(t *testing.T) {
	got, err := Locate()
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Locate = %s, want %s", got, want)
	}
}

// TestLocateFromElsewhere: with the current directory outside the repository and the test binary in Go's temporary
// build directory, the source directory the binary was compiled from still leads to the repository.
func TestLocateFromElsewhere(t *testing.T) {
	want, err := filepath.Abs(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sourceDir() == "" {
		t.Skip("built with -trimpath: no source directory recorded to find the repository from")
	}
	t.Chdir(t.TempDir())
	got, err := Locate()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Locate = %s, want %s", got, want)
	}
}
