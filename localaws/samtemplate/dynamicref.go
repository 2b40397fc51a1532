package samtemplate

import (
	"fmt"
	"strings"
)

const (
	secretRefPrefix = "{{resolve:secretsmanager:"
	secretRefSuffix = ":SecretString}}"
)

// ResolveSecretRefs replaces each CloudFormation dynamic reference to a whole secret's string in s,
// {{resolve:secretsmanager:SECRET-ID:SecretString}}, with secret(SECRET-ID); SECRET-ID is what the template wrote
// there once its !Sub was resolved (a name or an ARN). Other dynamic references (a JSON key, a version, ssm) are an
// error: they are not resolved locally. A string without dynamic references is returned as it is.
func ResolveSecretRefs(s string, secret func(id string) (string, error)) (string, error) {
	var out strings.Builder
	for {
		i := strings.Index(s, "{{resolve:")
		if i < 0 {
			out.WriteString(s)
			return out.String(), nil
		}
		end := strings.Index(s[i:], "}}")
		if end < 0 {
			return "", fmt.Errorf("dynamic reference %q: no closing }}", s[i:])
		}
		ref := s[i : i+end+2]
		id, ok := strings.CutPrefix(ref, secretRefPrefix)
		if ok {
			id, ok = strings.CutSuffix(id, secretRefSuffix)
		}
		if !ok || id == "" {
			return "", fmt.Errorf("dynamic reference %s: only {{resolve:secretsmanager:SECRET-ID:SecretString}} is resolved locally", ref)
		}
		v, err := secret(id)
		if err != nil {
			return "", fmt.Errorf("dynamic reference %s: %w", ref, err)
		}
		out.WriteString(s[:i])
		out.WriteString(v)
		s = s[i+end+2:]
	}
}
