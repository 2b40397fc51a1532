package deploy

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Method is one operation of the OpenAPI body of an AWS::ApiGateway::RestApi.
type Method struct {
	// API is the logical id of the RestApi.
	API string
	// Path is the OpenAPI path, with its parameters: "/transfers/{transferId}".
	Path string
	// Verb is the HTTP method in upper case, "ANY" for x-amazon-apigateway-any-method.
	Verb string
	// Integration is the method's x-amazon-apigateway-integration object (nil when there is none).
	Integration map[string]any
	// Security names the security schemes of the method's security requirements ("AWS_IAM").
	Security []string
}

// String names the method for messages: "TransferApi GET /transfers/{transferId}".
func (m Method) String() string { return m.API + " " + m.Verb + " " + m.Path }

// verbs maps the operation keys of an OpenAPI path item to their HTTP methods.
var verbs = map[string]string{
	"get": "GET", "put": "PUT", "post": "POST", "delete": "DELETE", "options": "OPTIONS", "head": "HEAD",
	"patch": "PATCH", "x-amazon-apigateway-any-method": "ANY",
}

// APIMethods returns every method of every AWS::ApiGateway::RestApi whose Body is an inline OpenAPI document (as SAM
// generates it), sorted by API, path and verb. A RestApi defined elsewhere (BodyS3Location) contributes none.
func (t *Template) APIMethods() []Method {
	var methods []Method
	for _, api := range t.OfType("AWS::ApiGateway::RestApi") {
		body, _ := t.Resources[api].Properties["Body"].(map[string]any)
		paths, _ := body["paths"].(map[string]any)
		for _, path := range slices.Sorted(maps.Keys(paths)) {
			item, _ := paths[path].(map[string]any)
			for _, key := range slices.Sorted(maps.Keys(item)) {
				verb, ok := verbs[key]
				op, isObject := item[key].(map[string]any)
				if !ok || !isObject {
					continue
				}
				integration, _ := op["x-amazon-apigateway-integration"].(map[string]any)
				methods = append(methods, Method{API: api, Path: path, Verb: verb, Integration: integration,
					Security: securitySchemes(op["security"])})
			}
		}
	}
	return methods
}

// securitySchemes returns the scheme names of an OpenAPI security requirement list ([{"AWS_IAM": []}]).
func securitySchemes(v any) []string {
	reqs, _ := v.([]any)
	var names []string
	for _, r := range reqs {
		req, _ := r.(map[string]any)
		names = append(names, slices.Sorted(maps.Keys(req))...)
	}
	return names
}

// lambdaURI matches the uri of a Lambda integration as SAM writes it, capturing the function (or alias) it names:
// arn:aws:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${OrchestratorFunction.Arn}/invocations.
var lambdaURI = regexp.MustCompile(`:lambda:path/2015-03-31/functions/\$\{([A-Za-z0-9]+)(?:\.Arn)?\}/invocations$`)

// IntegratedFunction returns the logical id of the Lambda function (or alias) the method's integration invokes, or
// "" when the integration is not a Lambda integration with a Fn::Sub uri naming a resource of the template.
func (m Method) IntegratedFunction() string {
	uri, ok := subString(m.Integration["uri"])
	if !ok {
		return ""
	}
	if sm := lambdaURI.FindStringSubmatch(uri); sm != nil {
		return sm[1]
	}
	return ""
}

// ARN is the execute-api ARN API Gateway presents, as the source of the call, to the function it invokes for this
// method on stage: arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${TransferApi}/v1/GET/transfers/*. The API
// id is written as in Fn::Sub, "${<API>}". Each path parameter, and the verb of an ANY method, becomes a literal
// "*": a permission covers that ARN only if it allows every value there.
func (m Method) ARN(stage string) string {
	verb := m.Verb
	if verb == "ANY" {
		verb = "*"
	}
	var segs []string
	for _, s := range strings.Split(strings.TrimPrefix(m.Path, "/"), "/") {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			s = "*"
		}
		segs = append(segs, s)
	}
	return fmt.Sprintf("arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${%s}/%s/%s/%s",
		m.API, stage, verb, strings.Join(segs, "/"))
}

// Stages returns the StageName of every AWS::ApiGateway::Stage of the RestApi api, sorted.
func (t *Template) Stages(api string) []string {
	var names []string
	for _, id := range t.OfType("AWS::ApiGateway::Stage") {
		p := t.Resources[id].Properties
		if ref(p["RestApiId"]) != api {
			continue
		}
		if name, ok := p["StageName"].(string); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Permission is an AWS::Lambda::Permission: a statement of a function's resource-based policy.
type Permission struct {
	// ID is the permission's logical id.
	ID string
	// Function is the logical id in FunctionName (a Ref, or a Fn::GetAtt of Arn), or FunctionName itself when it
	// is a plain string.
	Function  string
	Action    string
	Principal string
	// SourceArn is the condition on the caller's ARN with Fn::Sub variables bound to Refs and GetAtts written back
	// in place ("${__ApiId__}" with __ApiId__ = {"Ref": "TransferApi"} becomes "${TransferApi}"); "" when absent
	// or not a string or Fn::Sub.
	SourceArn string
}

// LambdaPermissions returns the template's AWS::Lambda::Permission resources, sorted by logical id.
func (t *Template) LambdaPermissions() []Permission {
	var perms []Permission
	for _, id := range t.OfType("AWS::Lambda::Permission") {
		p := t.Resources[id].Properties
		fn := ref(p["FunctionName"])
		if s, ok := p["FunctionName"].(string); ok {
			fn = s
		}
		action, _ := p["Action"].(string)
		principal, _ := p["Principal"].(string)
		source, _ := subString(p["SourceArn"])
		perms = append(perms, Permission{ID: id, Function: fn, Action: action, Principal: principal, SourceArn: source})
	}
	return perms
}

// Covers reports whether the permission's SourceArn matches every ARN that arn stands for, with IAM's wildcards
// ("*" any run of characters, "?" any one character). A "*" in arn (see Method.ARN) is covered only by a "*".
func (p Permission) Covers(arn string) bool {
	if p.SourceArn == "" {
		return false
	}
	var re strings.Builder
	re.WriteString("^")
	for _, r := range p.SourceArn {
		switch r {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString("[^*]")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(arn)
}

// ref returns the logical id a {"Ref": id} or {"Fn::GetAtt": [id, "Arn"]} names, or "".
func ref(v any) string {
	m, _ := v.(map[string]any)
	if id, ok := m["Ref"].(string); ok {
		return id
	}
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) == 2 && ga[1] == "Arn" {
		id, _ := ga[0].(string)
		return id
	}
	return ""
}

// subString returns a string, or the template of a Fn::Sub with its variables that are Refs or GetAtts written back
// into it as ${Id} and ${Id.Attr} (which Fn::Sub reads the same way) and its string variables substituted.
func subString(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	m, _ := v.(map[string]any)
	switch sub := m["Fn::Sub"].(type) {
	case string:
		return sub, true
	case []any:
		if len(sub) != 2 {
			return "", false
		}
		tmpl, ok := sub[0].(string)
		vars, _ := sub[1].(map[string]any)
		if !ok {
			return "", false
		}
		for name, val := range vars {
			var repl string
			switch val := val.(type) {
			case string:
				repl = val
			case map[string]any:
				if id, ok := val["Ref"].(string); ok {
					repl = "${" + id + "}"
				} else if ga, ok := val["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
					repl = fmt.Sprintf("${%v.%v}", ga[0], ga[1])
				} else {
					return "", false
				}
			default:
				return "", false
			}
			tmpl = strings.ReplaceAll(tmpl, "${"+name+"}", repl)
		}
		return tmpl, true
	}
	return "", false
}

// ResourcePolicy returns the resource policy of the AWS::ApiGateway::RestApi api as SAM writes it into the API's
// OpenAPI body (x-amazon-apigateway-policy), intrinsics as CloudFormation will resolve them, or nil without one.
func (t *Template) ResourcePolicy(api string) map[string]any {
	body, _ := t.Resources[api].Properties["Body"].(map[string]any)
	policy, _ := body["x-amazon-apigateway-policy"].(map[string]any)
	return policy
}
