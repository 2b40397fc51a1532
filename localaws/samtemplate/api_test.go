package samtemplate

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestGatewayResponses(t *testing.T) {
	const api = `Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      GatewayResponses:
        DEFAULT_4XX:
          StatusCode: "400"
          ResponseParameters:
            Headers:
              Content-Type: "'application/problem+json'"
          ResponseTemplates:
            application/json: '{"detail":$context.error.messageString}'
        THROTTLED:
          ResponseTemplates:
            application/json: '{}'
`
	tmpl, err := Parse([]byte(api))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.GatewayResponses()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]GatewayResponse{
		"DEFAULT_4XX": {StatusCode: "400", Headers: map[string]string{"Content-Type": "'application/problem+json'"},
			Templates: map[string]string{"application/json": `{"detail":$context.error.messageString}`}},
		"THROTTLED": {Headers: map[string]string{}, Templates: map[string]string{"application/json": "{}"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GatewayResponses = %+v\nwant %+v", got, want)
	}

	tests := []struct {
		name, template, want string
	}{
		{"intrinsic", `Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      GatewayResponses:
        DEFAULT_4XX:
          ResponseParameters:
            Headers:
              Access-Control-Allow-Origin: !Sub "'${Origin}'"
`, "Api.GatewayResponses.DEFAULT_4XX.ResponseParameters.Headers: Access-Control-Allow-Origin: line 9: want a plain string (no intrinsic function)"},
		{"two APIs", `Resources:
  A:
    Type: AWS::Serverless::Api
    Properties:
      GatewayResponses: {}
  B:
    Type: AWS::Serverless::Api
    Properties:
      GatewayResponses: {}
`, "APIs [A B] declare GatewayResponses: the local stack serves one API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse([]byte(tt.template))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tmpl.GatewayResponses(); err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestProjectTemplateGatewayResponses: the repository's template declares its gateway responses in plain strings.
func TestProjectTemplateGatewayResponses(t *testing.T) {
	tmpl, err := Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	grs, err := tmpl.GatewayResponses()
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"DEFAULT_4XX", "DEFAULT_5XX", "MISSING_AUTHENTICATION_TOKEN", "REQUEST_TOO_LARGE", "INTEGRATION_TIMEOUT"} {
		if gr, ok := grs[typ]; !ok || gr.StatusCode == "" || gr.Templates["application/json"] == "" {
			t.Errorf("%s: %+v", typ, gr)
		}
	}
}
