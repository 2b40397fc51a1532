package samtemplate

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// GatewayResponse is one entry of an AWS::Serverless::Api's GatewayResponses: how API Gateway answers one type of
// its own errors. Values are as written in the template: StatusCode a string ("" keeps the type's own status),
// Headers the ResponseParameters.Headers mapping expressions (a static value is single-quoted, '…'), Templates the
// ResponseTemplates by content type.
type GatewayResponse struct {
	StatusCode string
	Headers    map[string]string
	Templates  map[string]string
}

// GatewayResponses returns the GatewayResponses of the template's AWS::Serverless::Api, by response type (e.g.
// DEFAULT_4XX), or none when no API declares any. The values must be plain strings: a response is the same
// document locally and on AWS only if it needs no intrinsic function. More than one API declaring them is an
// error: the local stack serves one API.
func (t *Template) GatewayResponses() (map[string]GatewayResponse, error) {
	api, n, err := t.apiProperty("GatewayResponses")
	if n == nil || err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s.GatewayResponses: line %d: want a mapping", api, n.Line)
	}
	out := map[string]GatewayResponse{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		typ, body := n.Content[i].Value, n.Content[i+1]
		where := api + ".GatewayResponses." + typ
		var gr GatewayResponse
		var err error
		if sc := mapping(body, "StatusCode"); sc != nil {
			if gr.StatusCode, err = plain(sc); err != nil {
				return nil, fmt.Errorf("%s.StatusCode: %w", where, err)
			}
		}
		if gr.Headers, err = plainMap(mapping(mapping(body, "ResponseParameters"), "Headers")); err != nil {
			return nil, fmt.Errorf("%s.ResponseParameters.Headers: %w", where, err)
		}
		if gr.Templates, err = plainMap(mapping(body, "ResponseTemplates")); err != nil {
			return nil, fmt.Errorf("%s.ResponseTemplates: %w", where, err)
		}
		out[typ] = gr
	}
	return out, nil
}

// apiProperty returns the one AWS::Serverless::Api that declares the property at path (mapping keys from
// Properties: "Auth", "ResourcePolicy"), its logical id and the property's node; a nil node when no API declares
// it. More than one API declaring it is an error: the local stack serves one API.
func (t *Template) apiProperty(path ...string) (string, *yaml.Node, error) {
	property := func(r Resource) *yaml.Node {
		n := &r.Properties
		for _, key := range path {
			n = mapping(n, key)
		}
		return n
	}
	var ids []string
	for id, r := range t.Resources {
		if r.Type == "AWS::Serverless::Api" && property(r) != nil {
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 0:
		return "", nil, nil
	case 1:
		return ids[0], property(t.Resources[ids[0]]), nil
	}
	sort.Strings(ids)
	return "", nil, fmt.Errorf("APIs %v declare %s: the local stack serves one API", ids, strings.Join(path, "."))
}

// plain returns the value of a scalar without an intrinsic function.
func plain(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return "", fmt.Errorf("line %d: want a plain string (no intrinsic function)", n.Line)
	}
	return n.Value, nil
}

// plainMap returns the plain string values of a mapping node (an empty map for nil).
func plainMap(n *yaml.Node) (map[string]string, error) {
	return mapValues(n, plain)
}
