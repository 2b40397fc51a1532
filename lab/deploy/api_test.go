package deploy

import (
	"slices"
	"testing"
)

func TestMethodARN(t *testing.T) {
	tests := []struct {
		name   string
		method Method
		want   string
	}{
		{
			name:   "fixed path",
			method: Method{API: "TransferApi", Path: "/transfers", Verb: "POST"},
			want:   "arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${TransferApi}/v1/POST/transfers",
		},
		{
			name:   "path parameters stand for any value",
			method: Method{API: "TransferApi", Path: "/transfers/{transferId}/history", Verb: "GET"},
			want:   "arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${TransferApi}/v1/GET/transfers/*/history",
		},
		{
			name:   "ANY stands for any verb",
			method: Method{API: "Api", Path: "/{proxy+}", Verb: "ANY"},
			want:   "arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${Api}/v1/*/*",
		},
		{
			name:   "root",
			method: Method{API: "Api", Path: "/", Verb: "GET"},
			want:   "arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${Api}/v1/GET/",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.method.ARN("v1"); got != tt.want {
				t.Errorf("ARN = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPermissionCovers(t *testing.T) {
	const prefix = "arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${TransferApi}/"
	getTransfer := Method{API: "TransferApi", Path: "/transfers/{transferId}", Verb: "GET"}.ARN("v1")
	tests := []struct {
		name      string
		sourceArn string
		want      bool
	}{
		{name: "as SAM writes it", sourceArn: prefix + "*/GET/transfers/*", want: true},
		{name: "any method of the API", sourceArn: prefix + "*", want: true},
		{name: "exact stage", sourceArn: prefix + "v1/GET/transfers/*", want: true},
		{name: "other stage", sourceArn: prefix + "v2/GET/transfers/*", want: false},
		{name: "other verb", sourceArn: prefix + "*/POST/transfers/*", want: false},
		{name: "one transfer only", sourceArn: prefix + "*/GET/transfers/tr_1", want: false},
		{name: "one character only", sourceArn: prefix + "*/GET/transfers/?", want: false},
		{name: "other API", sourceArn: "arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${OtherApi}/*", want: false},
		{name: "no SourceArn", sourceArn: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Permission{SourceArn: tt.sourceArn}).Covers(getTransfer); got != tt.want {
				t.Errorf("%q covers %s = %v, want %v", tt.sourceArn, getTransfer, got, tt.want)
			}
		})
	}
}

// TestLambdaPermissionsResolvesSub reads a permission in the form the translator writes it: the SourceArn a Fn::Sub
// whose variables are a Ref to the API and the stage.
func TestLambdaPermissionsResolvesSub(t *testing.T) {
	tmpl := &Template{Resources: map[string]Resource{
		"FnGetPermission": {Type: "AWS::Lambda::Permission", Properties: map[string]any{
			"Action":       "lambda:InvokeFunction",
			"FunctionName": map[string]any{"Ref": "Fn"},
			"Principal":    "apigateway.amazonaws.com",
			"SourceArn": map[string]any{"Fn::Sub": []any{
				"arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${__ApiId__}/${__Stage__}/GET/items",
				map[string]any{"__ApiId__": map[string]any{"Ref": "Api"}, "__Stage__": "*"},
			}},
		}},
	}}
	want := []Permission{{
		ID: "FnGetPermission", Function: "Fn", Action: "lambda:InvokeFunction", Principal: "apigateway.amazonaws.com",
		SourceArn: "arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${Api}/*/GET/items",
	}}
	if got := tmpl.LambdaPermissions(); !slices.Equal(got, want) {
		t.Errorf("LambdaPermissions = %+v, want %+v", got, want)
	}
}
