package deploy

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The module is one house of three wings, told apart by the top-level folder:
//   - the product: what is deployed to AWS and the CLI people use (functions/, internal/, cmd/transferctl);
//   - the local AWS: the emulators the product runs on without an AWS account (localaws/, cmd/local);
//   - the lab: what measures and checks the other two (lab/, cmd/bench, cmd/chaos, cmd/aslcheck, cmd/archcheck,
//     cmd/smoke).
const module = "github.com/transferflow/orchestrator"

// wing names the wing of a module package (its import path without the module's).
func wing(pkg string) string {
	switch {
	case strings.HasPrefix(pkg, "localaws/"), pkg == "cmd/local":
		return "local AWS"
	case strings.HasPrefix(pkg, "lab/"), pkg == "cmd/bench", pkg == "cmd/chaos", pkg == "cmd/aslcheck", pkg == "cmd/archcheck",
		pkg == "cmd/smoke":
		return "lab"
	}
	return "product"
}

// mayImport says which wings a wing's code (not its tests) may import. The product imports neither of the others,
// so nothing of them can reach a Lambda deployment package or change what runs on AWS; the local AWS runs the
// product (the stack calls its handlers in-process) but never the lab; the lab may use everything.
var mayImport = map[string][]string{
	"product":   {"product"},
	"local AWS": {"local AWS", "product"},
	"lab":       {"lab", "local AWS", "product"},
}

// TestWingsImportOnlyWhatTheyMay lists every package of the module with its imports (go list, so build tags and
// files are read as the compiler reads them) and fails on an import across wings that mayImport does not allow.
func TestWingsImportOnlyWhatTheyMay(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	counts := map[string]int{}
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		from, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		counts[wing(from)]++
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if !allowed(wing(from), wing(to)) {
				t.Errorf("%s (%s) imports %s (%s)", from, wing(from), to, wing(to))
			}
		}
	}
	// The rule is only worth something if the layout it reads is there.
	for _, w := range []string{"product", "local AWS", "lab"} {
		if counts[w] < 3 {
			t.Errorf("%d packages in the %s wing; the layout this test reads has changed", counts[w], w)
		}
	}
}

func allowed(from, to string) bool {
	for _, w := range mayImport[from] {
		if w == to {
			return true
		}
	}
	return false
}

// TestWingOfEachFolder pins the rule on the folders a newcomer sees.
func TestWingOfEachFolder(t *testing.T) {
	for pkg, want := range map[string]string{
		"functions/debit": "product", "internal/ledger": "product", "cmd/transferctl": "product",
		"localaws/sfnengine": "local AWS", "localaws/stack": "local AWS", "cmd/local": "local AWS",
		"lab/e2e": "lab", "lab/loadbench": "lab", "cmd/bench": "lab", "cmd/chaos": "lab", "cmd/aslcheck": "lab", "cmd/smoke": "lab",
	} {
		if got := wing(pkg); got != want {
			t.Errorf("wing(%q) = %q, want %q", pkg, got, want)
		}
	}
}

// TestREADMENamesEveryPackage: the README's table of the wings names every package of the module, so that a newcomer
// who reads it has seen the whole house. A package is named by its path below its wing's folder (`ledger` for
// internal/ledger, `asl/jsonata` for localaws/asl/jsonata, `cmd/local` for a command; `functions/*` names the four
// functions).
func TestREADMENamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := strings.CutPrefix(string(readme)[strings.Index(string(readme), "## Where things are"):], "## Where things are")
	if !ok {
		t.Fatal("README has no section \"Where things are\"")
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, path := range strings.Fields(string(out)) {
		pkg := strings.TrimPrefix(path, module+"/")
		name := pkg
		for _, folder := range []string{"internal/", "localaws/", "lab/"} {
			if rest, ok := strings.CutPrefix(pkg, folder); ok {
				name = rest
				break
			}
		}
		if strings.HasPrefix(pkg, "functions/") {
			name = "functions/*"
		}
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("README's \"Where things are\" does not name %s (as `%s`)", pkg, name)
		}
	}
}
