package deploy

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// productPackages are the module's packages the product is made of: what the deployed functions and the CLI for
// people may import. The local AWS (the Step Functions engine, the gateway, the stack, the DynamoDB server runner,
// …) and the lab (bench, chaos, the DynamoDB proxy, …) stand beside the product and serve it; the product never
// imports them, so nothing of them can reach a Lambda deployment package or change what runs on AWS.
var productPackages = []string{
	"cmd/transferctl",
	"functions/credit", "functions/debit", "functions/orchestrator", "functions/timeout-reconciler",
	"internal/apigw", "internal/fnconfig", "internal/ledger", "internal/metrics", "internal/transfer", "internal/transferclient",
}

// TestProductImportsOnlyTheProduct: every module package the product's binaries import, directly or not, is a
// product package. A new dependency of a function on the local stack or the lab fails here.
func TestProductImportsOnlyTheProduct(t *testing.T) {
	const module = "github.com/transferflow/orchestrator/"
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	for _, p := range []string{"cmd/transferctl", "functions/credit", "functions/debit", "functions/orchestrator", "functions/timeout-reconciler"} {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, dep := range strings.Fields(string(out)) {
		pkg, ok := strings.CutPrefix(dep, module)
		if !ok {
			continue
		}
		seen++
		if !slices.Contains(productPackages, pkg) {
			t.Errorf("the product imports %s, which is not a product package (local AWS or lab)", pkg)
		}
	}
	if seen < len(productPackages) {
		t.Errorf("go list named %d module packages, want at least the %d product packages: %s", seen, len(productPackages), out)
	}
}
