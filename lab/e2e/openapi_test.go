package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// openAPIPath is the API's description.
const openAPIPath = "docs/openapi.yaml"

// gatewayStatuses are the answers API Gateway itself can give on any route (docs/api.md, "API Gateway's own
// errors"): every operation of the description lists them.
var gatewayStatuses = []string{"403", "413", "429", "502", "504"}

// openAPI is what the route tests read of docs/openapi.yaml.
type openAPI struct {
	Security []map[string][]string           `yaml:"security"`
	Paths    map[string]map[string]openAPIOp `yaml:"paths"`
}

type openAPIOp struct {
	OperationID string                    `yaml:"operationId"`
	Security    *[]map[string][]string    `yaml:"security"`
	Responses   map[string]map[string]any `yaml:"responses"`
}

// httpMethods are the keys of a path item that are operations.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func loadOpenAPI(t *testing.T) openAPI {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, openAPIPath))
	if err != nil {
		t.Fatal(err)
	}
	// Path items also hold parameters, summaries and the like: read each as a node, keep the operations.
	var raw struct {
		Security []map[string][]string           `yaml:"security"`
		Paths    map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", openAPIPath, err)
	}
	doc := openAPI{Security: raw.Security, Paths: map[string]map[string]openAPIOp{}}
	for path, item := range raw.Paths {
		doc.Paths[path] = map[string]openAPIOp{}
		for key, node := range item {
			if !slices.Contains(httpMethods, key) {
				continue
			}
			var op openAPIOp
			if err := node.Decode(&op); err != nil {
				t.Fatalf("%s: %s %s: %v", openAPIPath, key, path, err)
			}
			doc.Paths[path][key] = op
		}
	}
	return doc
}

// templateRouteNames are the Api events of template, as "METHOD /path", sorted.
func templateRouteNames(t *testing.T, template string) []string {
	t.Helper()
	var routes []string
	for _, r := range templateRoutes(t, template) {
		routes = append(routes, r.method+" "+r.resource)
	}
	if len(routes) == 0 {
		t.Fatalf("%s: no Api events", template)
	}
	slices.Sort(routes)
	return routes
}

// TestOpenAPIRoutesAreTheTemplates checks that docs/openapi.yaml describes exactly the routes template.yaml gives
// API Gateway (the Api events of OrchestratorFunction), no more and no fewer, and that each operation has its own
// operationId (the links name them), is signed with SigV4 and nothing else, and lists API Gateway's own answers.
// OPENAPI_TEMPLATE names another template to compare with (a draft of template.yaml, say).
func TestOpenAPIRoutesAreTheTemplates(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	template := os.Getenv("OPENAPI_TEMPLATE")
	if template == "" {
		template = filepath.Join(root, "template.yaml")
	}
	want := templateRouteNames(t, template)

	var have []string
	operationIDs := map[string]string{}
	for _, path := range slices.Sorted(maps.Keys(doc.Paths)) {
		ops := doc.Paths[path]
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			op := ops[method]
			route := strings.ToUpper(method) + " " + path
			have = append(have, route)
			switch other, seen := operationIDs[op.OperationID]; {
			case op.OperationID == "":
				t.Errorf("%s: no operationId", route)
			case seen:
				t.Errorf("%s: operationId %q is also %s's", route, op.OperationID, other)
			}
			operationIDs[op.OperationID] = route
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			if _, sigv4 := firstOrNil(security)["sigv4"]; len(security) != 1 || len(security[0]) != 1 || !sigv4 {
				t.Errorf("%s: security is %v, want sigv4 alone", route, security)
			}
			for _, status := range gatewayStatuses {
				if _, ok := op.Responses[status]; !ok {
					t.Errorf("%s: no %s response, which API Gateway can answer on any route", route, status)
				}
			}
		}
	}
	slices.Sort(have)
	for _, r := range want {
		if !slices.Contains(have, r) {
			t.Errorf("%s routes %s; %s does not describe it", filepath.Base(template), r, openAPIPath)
		}
	}
	for _, r := range have {
		if !slices.Contains(want, r) {
			t.Errorf("%s describes %s; %s does not route it", openAPIPath, r, filepath.Base(template))
		}
	}
}

// firstOrNil is the first security requirement, or nil.
func firstOrNil(security []map[string][]string) map[string][]string {
	if len(security) == 0 {
		return nil
	}
	return security[0]
}
