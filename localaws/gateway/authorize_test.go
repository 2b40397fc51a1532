package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/localaws/iampolicy"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

const (
	localAccount   = "000000000000"
	foreignAccount = "111122223333"
	methodPrefix   = "arn:aws:execute-api:us-east-1:" + localAccount + ":local/v1/"
)

// mustPolicy parses a policy document for a test.
func mustPolicy(t *testing.T, doc string) *iampolicy.Policy {
	t.Helper()
	p, err := iampolicy.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuthorizerDecides: API Gateway's authorization flow for AWS_IAM methods with a resource policy. An explicit
// deny in either policy refuses, saying so; a principal of the API's account needs an allow in either; another
// account's needs both.
func TestAuthorizerDecides(t *testing.T) {
	const method = methodPrefix + "GET/transfers/tr_1"
	allowAll := `{"Statement":[{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"*"}]}`
	denyAll := `{"Statement":[{"Effect":"Deny","Action":"execute-api:Invoke","Resource":"*"}]}`
	nothing := `{"Statement":[{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"` + methodPrefix + `POST/transfers"}]}`
	resourceAllowsForeign := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + foreignAccount + `"},"Action":"execute-api:Invoke","Resource":"*"}]}`
	local := Principal{UserARN: "arn:aws:iam::" + localAccount + ":user/local", ARN: "arn:aws:iam::" + localAccount + ":user/local", Account: localAccount}
	foreign := Principal{UserARN: "arn:aws:sts::" + foreignAccount + ":assumed-role/intruder/ASIA1",
		ARN: "arn:aws:iam::" + foreignAccount + ":role/intruder", Account: foreignAccount}
	refused := func(p Principal, explicit bool) string {
		msg := "User: " + p.UserARN + " is not authorized to perform: execute-api:Invoke on resource: " +
			"arn:aws:execute-api:us-east-1:********0000:local/v1/GET/transfers/tr_1"
		if explicit {
			msg += " with an explicit deny"
		}
		return msg
	}
	tests := []struct {
		name               string
		identity, resource string // policy documents; "" for none
		principal          Principal
		want               string // the refusal's message; "" when allowed
	}{
		{name: "no policies at all: allowed", principal: local},
		{name: "the identity policy allows", identity: allowAll, principal: local},
		{name: "the identity policy allows another route: implicitly denied", identity: nothing, principal: local, want: refused(local, false)},
		{name: "the identity policy denies", identity: denyAll, principal: local, want: refused(local, true)},
		{name: "the resource policy denies whatever IAM allows", identity: allowAll, resource: denyAll, principal: local, want: refused(local, true)},
		{name: "the same account: a resource policy allowing another account gives it nothing", identity: nothing,
			resource: resourceAllowsForeign, principal: local, want: refused(local, false)},
		{name: "the same account: the resource policy's allow is enough", identity: nothing,
			resource: `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"execute-api:Invoke","Resource":"*"}]}`, principal: local},
		{name: "another account: IAM alone is not enough", identity: allowAll, principal: foreign, want: refused(foreign, false)},
		{name: "another account: both allow", identity: allowAll, resource: resourceAllowsForeign, principal: foreign},
		{name: "another account: the resource policy alone is not enough", identity: nothing, resource: resourceAllowsForeign,
			principal: foreign, want: refused(foreign, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := authorizer{account: localAccount}
			if tt.identity != "" {
				p := mustPolicy(t, tt.identity)
				a.identity = func(Principal) []*iampolicy.Policy { return []*iampolicy.Policy{p} }
			}
			if tt.resource != "" {
				a.resource = mustPolicy(t, tt.resource)
			}
			got := a.decide(tt.principal, method)
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %+v", got)
			case tt.want != "" && got == nil:
				t.Errorf("allowed, want %q", tt.want)
			case got != nil && (got.message != tt.want || got.typ != ResponseAccessDenied || got.status != http.StatusForbidden):
				t.Errorf("refused %+v\nwant ACCESS_DENIED 403 %q", got, tt.want)
			}
		})
	}
}

func TestMaskAccount(t *testing.T) {
	tests := []struct{ name, arn, want string }{
		{name: "the local account", arn: methodPrefix + "GET/transfers", want: "arn:aws:execute-api:us-east-1:********0000:local/v1/GET/transfers"},
		{name: "a path with colons", arn: "arn:aws:execute-api:eu-west-1:123456789012:abc/v1/GET/a:b", want: "arn:aws:execute-api:eu-west-1:********9012:abc/v1/GET/a:b"},
		{name: "not an ARN", arn: "execute-api:/v1/GET/", want: "execute-api:/v1/GET/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := maskAccount(tt.arn); got != tt.want {
				t.Errorf("maskAccount(%s) = %s, want %s", tt.arn, got, tt.want)
			}
		})
	}
}

// templateResolver resolves template.yaml's intrinsics as the local stack does for the gateway: the API is the
// gateway's, DefaultAPIID.
type templateResolver struct{}

func (templateResolver) Ref(id string) (string, error) {
	if id == "TransferApi" {
		return DefaultAPIID, nil
	}
	return "", fmt.Errorf("Ref %s: not needed by the API's policies", id)
}

func (templateResolver) GetAtt(id, attr string) (string, error) {
	return "", fmt.Errorf("GetAtt %s.%s: not needed by the API's policies", id, attr)
}

// templatePolicies reads template.yaml's two managed policies and the API's resource policy, as the local stack
// does: the operator user is the one principal OperatorPrincipalArns names.
func templatePolicies(t *testing.T) (client, operator *iampolicy.Policy, resource map[string]any) {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env := samtemplate.Env{Region: "us-east-1", AccountID: localAccount,
		Parameters: map[string]string{"OperatorPrincipalArns": "arn:aws:iam::" + localAccount + ":user/operator"}}
	policy := func(id string) *iampolicy.Policy {
		doc, err := tmpl.ManagedPolicy(id, env, templateResolver{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := iampolicy.FromValue(doc)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if resource, err = tmpl.APIResourcePolicy(env, templateResolver{}); err != nil || resource == nil {
		t.Fatalf("the API's resource policy: %v, %v", resource, err)
	}
	return policy("TransferClientPolicy"), policy("TransferOperatorPolicy"), resource
}

// TestGatewayAuthorizesWithTheTemplatePolicies: with template.yaml's policies (the operator user has
// TransferOperatorPolicy, every other caller TransferClientPolicy) and its resource policy (which names the operator
// user in OperatorPrincipalArns), a refused request is answered with the template's ACCESS_DENIED document carrying
// API Gateway's message, and never reaches the function. The resource policy's deny of the operator routes is
// explicit; a client route the identity policy does not grant is refused implicitly.
func TestGatewayAuthorizesWithTheTemplatePolicies(t *testing.T) {
	client, operator, resource := templatePolicies(t)
	responses, _ := templateResponses(t)
	const (
		operatorArn = "arn:aws:iam::" + localAccount + ":user/operator"
		granted     = "arn:aws:iam::" + localAccount + ":user/reporting" // both policies, not named an operator
	)
	fn := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200, Body: "{}"}}
	g, err := New([]Route{
		{Method: "POST", Resource: "/transfers", Function: "Orchestrator"},
		{Method: "GET", Resource: "/transfers/{transferId}", Function: "Orchestrator"},
		{Method: "GET", Resource: "/operator/accounts/{accountId}", Function: "Orchestrator"},
		{Method: "PUT", Resource: "/operator/accounts/{accountId}/owner", Function: "Orchestrator"},
	}, fn, Options{Stage: "v1", NewID: func() string { return "req-1" }, Responses: responses, ResourcePolicy: resource,
		IdentityPolicies: func(p Principal) []*iampolicy.Policy {
			switch p.ARN {
			case operatorArn:
				return []*iampolicy.Policy{operator}
			case granted: // as a principal with a broad grant of execute-api:Invoke would be
				return []*iampolicy.Policy{client, operator}
			}
			return []*iampolicy.Policy{client}
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)

	signed := func(key, token string) map[string]string {
		h := map[string]string{"Authorization": sigv4(key), "X-Amz-Date": "20261121T100000Z"}
		if token != "" {
			h["X-Amz-Security-Token"] = token
		}
		return h
	}
	denied := func(user, method, path string) string {
		return "User: " + user + " is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:us-east-1:********0000:local/v1/" +
			method + path
	}
	const intruder = "arn:aws:sts::" + foreignAccount + ":assumed-role/intruder/ASIAQNZGKIQY56JQ7WML"
	tests := []struct {
		name, method, path string
		headers            map[string]string
		wantCode           string // "" when the function answers
		wantDetail         string
	}{
		{name: "unsigned: a client route", method: "POST", path: "/transfers"},
		{name: "unsigned: an operator route", method: "GET", path: "/operator/accounts/acc-1", wantCode: ResponseAccessDenied,
			wantDetail: denied("arn:aws:iam::"+localAccount+":user/local", "GET", "/operator/accounts/acc-1") + " with an explicit deny"},
		{name: "a signed client: an operator route", method: "PUT", path: "/operator/accounts/acc-1/owner", headers: signed("alice", ""),
			wantCode: ResponseAccessDenied, wantDetail: denied("arn:aws:iam::"+localAccount+":user/alice", "PUT", "/operator/accounts/acc-1/owner") + " with an explicit deny"},
		{name: "the operator: an operator route", method: "GET", path: "/operator/accounts/acc-1", headers: signed("operator", "")},
		{name: "granted every route but not named an operator: a client route", method: "POST", path: "/transfers", headers: signed("reporting", "")},
		{name: "granted every route but not named an operator: an operator route", method: "GET", path: "/operator/accounts/acc-1",
			headers: signed("reporting", ""), wantCode: ResponseAccessDenied, wantDetail: denied(granted, "GET", "/operator/accounts/acc-1") + " with an explicit deny"},
		{name: "the operator: a client route, which its policy does not grant", method: "GET", path: "/transfers/tr_1", headers: signed("operator", ""),
			wantCode: ResponseAccessDenied, wantDetail: denied(operatorArn, "GET", "/transfers/tr_1")},
		{name: "another account's role: a client route", method: "POST", path: "/transfers",
			headers:  signed("ASIAQNZGKIQY56JQ7WML", "arn:aws:iam::"+foreignAccount+":role/intruder"),
			wantCode: ResponseAccessDenied, wantDetail: denied(intruder, "POST", "/transfers") + " with an explicit deny"},
		{name: "another account's role: an operator route", method: "GET", path: "/operator/accounts/acc-1",
			headers:  signed("ASIAQNZGKIQY56JQ7WML", "arn:aws:iam::"+foreignAccount+":role/intruder"),
			wantCode: ResponseAccessDenied, wantDetail: denied(intruder, "GET", "/operator/accounts/acc-1") + " with an explicit deny"},
		{name: "an unknown route is still an unknown route", method: "GET", path: "/operator", headers: signed("alice", ""),
			wantCode: ResponseMissingAuthenticationToken, wantDetail: msgMissingAuthenticationToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn.function = ""
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(`{"accountId":"acc-1"}`))
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.wantCode == "" {
				if resp.StatusCode != 200 || fn.function != "Orchestrator" {
					t.Fatalf("status %d, function %q: %s", resp.StatusCode, fn.function, body)
				}
				return
			}
			var p struct{ Code, Detail string }
			if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != http.StatusForbidden || p.Code != tt.wantCode ||
				p.Detail != tt.wantDetail || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("status %d %s body %s\nwant 403 application/problem+json with code %s and detail %q",
					resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.wantCode, tt.wantDetail)
			}
			if fn.function != "" {
				t.Errorf("function %s invoked for a refused request", fn.function)
			}
		})
	}
}
