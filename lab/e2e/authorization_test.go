package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/transferflow/orchestrator/internal/metrics/metricstest"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// apiRoute is one Api event of template.yaml: a method and a resource path.
type apiRoute struct{ method, resource string }

// templateRoutes reads the API's routes from the template at path (template.yaml), as the stack does.
func templateRoutes(t *testing.T, path string) []apiRoute {
	t.Helper()
	tmpl, err := samtemplate.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions(samtemplate.Env{Region: "us-east-1", AccountID: "000000000000"}, nullResolver{})
	if err != nil {
		t.Fatal(err)
	}
	var routes []apiRoute
	for _, f := range fns {
		for _, ev := range f.Events {
			if ev.Type == samtemplate.EventAPI {
				routes = append(routes, apiRoute{strings.ToUpper(ev.Method), ev.Path})
			}
		}
	}
	return routes
}

// nullResolver resolves every resource to its logical id: the routes need no resource's name.
type nullResolver struct{}

func (nullResolver) Ref(id string) (string, error)          { return id, nil }
func (nullResolver) GetAtt(id, attr string) (string, error) { return id + "." + attr, nil }

// path is the route's resource with its parameters given values.
func (r apiRoute) path() string {
	return strings.NewReplacer("{transferId}", "tr_e2eauthorization", "{accountId}", "acc-alice").Replace(r.resource)
}

// TestAuthorizationThroughTheStack: the stack's gateway evaluates template.yaml's TransferClientPolicy,
// TransferOperatorPolicy (for the --operator principals) and the API's resource policy before any function runs. An
// unsigned caller reaches the client routes and is refused the operator routes with API Gateway's ACCESS_DENIED, an
// explicit deny: the resource policy denies them to every principal OperatorPrincipalArns (the --operator patterns)
// does not name, whatever its IAM policies; an --operator caller reaches an operator route; another account's role
// is refused every route with an explicit deny, and the orchestrator never runs for it (its one metrics record per
// request counts the requests that reached it).
func TestAuthorizationThroughTheStack(t *testing.T) {
	t.Parallel()
	s := startStack(t, "--operator", "arn:aws:iam::000000000000:user/operator", "--metrics")
	routes := templateRoutes(t, filepath.Join(root, "template.yaml"))
	if len(routes) != 13 {
		t.Fatalf("routes %v: want the six client routes and the seven operator routes", routes)
	}
	const prefix = "arn:aws:execute-api:us-east-1:********0000:local/v1/"
	body := func(r apiRoute) []byte {
		if r.method == http.MethodGet {
			return nil
		}
		b, _ := json.Marshal(map[string]any{"accountId": "acc-e2e-authorization", "currency": "EUR"})
		return b
	}
	headers := func(r apiRoute) map[string]string {
		h := map[string]string{"Idempotency-Key": "e2e-authorization-" + r.method + r.resource}
		if r.method != http.MethodGet {
			h["Content-Type"] = "application/json"
		}
		return h
	}
	refused := func(r response) bool { return r.Status == http.StatusForbidden && r.Body["code"] == "ACCESS_DENIED" }
	reached := 0

	for _, r := range routes {
		resp := s.raw(r.method, r.path(), body(r), headers(r))
		operatorRoute := strings.HasPrefix(r.resource, "/operator/")
		switch {
		case !operatorRoute && refused(resp):
			t.Errorf("unsigned %s %s: %d %s, want the function's answer", r.method, r.resource, resp.Status, resp.RawBody)
		case !operatorRoute:
			reached++
		case !refused(resp):
			t.Errorf("unsigned %s %s: %d %s, want 403 ACCESS_DENIED", r.method, r.resource, resp.Status, resp.RawBody)
		default:
			want := "User: arn:aws:iam::000000000000:user/local is not authorized to perform: execute-api:Invoke on resource: " +
				prefix + r.method + r.path() + " with an explicit deny"
			if resp.Body["detail"] != want {
				t.Errorf("unsigned %s %s: detail %q, want %q", r.method, r.resource, resp.Body["detail"], want)
			}
		}
	}

	operator := aws.Credentials{AccessKeyID: "operator", SecretAccessKey: "anything"}
	get := apiRoute{http.MethodGet, "/operator/accounts/{accountId}"}
	if resp := s.signed(operator, get.method, get.path(), nil, nil); refused(resp) {
		t.Errorf("the operator: %s %s: %d %s, want the function's answer", get.method, get.resource, resp.Status, resp.RawBody)
	}
	reached++

	// A session of another account's role: locally, temporary credentials whose token is the role's ARN.
	intruder := aws.Credentials{AccessKeyID: "ASIAE2EINTRUDER00001", SecretAccessKey: "anything", SessionToken: "arn:aws:iam::111122223333:role/intruder"}
	for _, r := range routes {
		resp := s.signed(intruder, r.method, r.path(), body(r), headers(r))
		want := "User: arn:aws:sts::111122223333:assumed-role/intruder/ASIAE2EINTRUDER00001 is not authorized to perform: " +
			"execute-api:Invoke on resource: " + prefix + r.method + r.path() + " with an explicit deny"
		if !refused(resp) || resp.Body["detail"] != want {
			t.Errorf("another account's role: %s %s: %d %s, want 403 ACCESS_DENIED with detail %q", r.method, r.resource, resp.Status, resp.RawBody, want)
		}
	}

	s.stop(syscall.SIGTERM) // every record the stack wrote is in the buffers once it has exited
	lines, err := metricstest.ParseAll([]byte(s.stderr.String()), true)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, l := range lines {
		if _, ok := l.Metrics["RequestLatency"]; ok && l.Root["Service"] == "orchestrator" {
			ran++
		}
	}
	if ran != reached {
		t.Errorf("the orchestrator ran for %d requests, want %d: the ones the policies allowed, no refused one", ran, reached)
	}
}
