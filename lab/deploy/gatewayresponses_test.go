package deploy

import (
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// TestGatewayResponsesReachAPIGateway: the GatewayResponses the local gateway reads from template.yaml
// (samtemplate) are exactly what SAM gives API Gateway, the x-amazon-apigateway-gateway-responses of the RestApi's
// OpenAPI body: the same types, status codes, headers and templates, so both answer the same problem documents.
func TestGatewayResponsesReachAPIGateway(t *testing.T) {
	path, err := ProjectTemplate()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := samtemplate.Load(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	local, err := tmpl.GatewayResponses()
	if err != nil {
		t.Fatal(err)
	}
	if len(local) == 0 {
		t.Fatal("template.yaml declares no GatewayResponses")
	}
	cfn := TransformT(t)
	apis := cfn.OfType("AWS::ApiGateway::RestApi")
	if len(apis) != 1 {
		t.Fatalf("RestApis = %v, want one", apis)
	}
	body, _ := cfn.Resources[apis[0]].Properties["Body"].(map[string]any)
	deployed, _ := body["x-amazon-apigateway-gateway-responses"].(map[string]any)
	if got, want := slices.Sorted(maps.Keys(deployed)), slices.Sorted(maps.Keys(local)); !slices.Equal(got, want) {
		t.Fatalf("gateway responses on AWS %v, locally %v", got, want)
	}
	for typ, l := range local {
		d, _ := deployed[typ].(map[string]any)
		headers := map[string]any{}
		for k, v := range l.Headers {
			headers["gatewayresponse.header."+k] = v
		}
		templates := map[string]any{}
		for k, v := range l.Templates {
			templates[k] = v
		}
		if d["statusCode"] != l.StatusCode || !reflect.DeepEqual(d["responseParameters"], headers) ||
			!reflect.DeepEqual(d["responseTemplates"], templates) {
			t.Errorf("%s on AWS: %v\nlocally: %+v", typ, d, l)
		}
	}
}
