package apigw

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// ErrUnsupportedCaller reports a caller identity CallerScope does not recognise: a userArn that is malformed or names a
// kind of principal it has no rule for, or a malformed Cognito identity id. Such a caller gets no scope at all, so it
// can neither create nor read anything (fail closed).
var ErrUnsupportedCaller = errors.New("apigw: unsupported caller")

var (
	// partitionRe matches aws, aws-cn, aws-us-gov, aws-iso-b and the other partitions.
	partitionRe = regexp.MustCompile(`^aws(-[a-z]+)*$`)
	accountRe   = regexp.MustCompile(`^[0-9]{12}$`)
	// iamNameRe is the character set IAM and STS allow in user, role, role session and federated user names
	// (`[\w+=,.@-]`); the lengths are checked separately. None of them can contain a slash.
	iamNameRe = regexp.MustCompile(`^[\w+=,.@-]+$`)
	// userPathRe is IAM's pattern for a path: "/" alone, or printable ASCII between two slashes.
	userPathRe = regexp.MustCompile(`^(/|/[\x21-\x7E]+/)$`)
	// cognitoIdentityRe is Amazon Cognito's pattern for an identity id, REGION:GUID.
	cognitoIdentityRe = regexp.MustCompile(`^[\w-]+:[0-9a-f-]+$`)
)

// CallerScope names the stable principal API Gateway authenticated, the scope of the caller's Idempotency-Keys and
// transfers. It is chosen so that one client keeps one scope across fresh credentials:
//
//   - identity.cognitoIdentityId (IAM auth with credentials from a Cognito identity pool, whose end users all share
//     the pool's role): "cognito-identity:" + the identity id;
//   - identity.userArn of an IAM user (arn:P:iam::A:user/[path/]name), a federated user (arn:P:sts::A:federated-user/name)
//     or the account root (arn:P:iam::A:root): "iam:" + the ARN;
//   - identity.userArn of an assumed role (arn:P:sts::A:assumed-role/role/session): "iam:arn:P:sts::A:assumed-role/role",
//     without the session, which changes each time the client gets new credentials;
//   - a Cognito user pool authorizer's claims.sub: "cognito:" + sub;
//   - a Lambda authorizer's principalId: "authorizer:" + principalId;
//   - identity.apiKeyId: "apikey:" + id;
//   - none of these: "anonymous".
//
// Any other non-empty userArn, and a malformed cognitoIdentityId, is an error wrapping ErrUnsupportedCaller.
func CallerScope(req events.APIGatewayProxyRequest) (string, error) {
	rc := req.RequestContext
	if id := rc.Identity.CognitoIdentityID; id != "" {
		if len(id) > 55 || !cognitoIdentityRe.MatchString(id) {
			return "", fmt.Errorf("cognitoIdentityId %q: not REGION:GUID: %w", id, ErrUnsupportedCaller)
		}
		return "cognito-identity:" + id, nil
	}
	if arn := rc.Identity.UserArn; arn != "" {
		principal, err := stablePrincipal(arn)
		if err != nil {
			return "", fmt.Errorf("userArn %q: %w", arn, err)
		}
		return "iam:" + principal, nil
	}
	if claims, ok := rc.Authorizer["claims"].(map[string]any); ok {
		if sub, ok := claims["sub"].(string); ok && sub != "" {
			return "cognito:" + sub, nil
		}
	}
	if p, ok := rc.Authorizer["principalId"].(string); ok && p != "" {
		return "authorizer:" + p, nil
	}
	if rc.Identity.APIKeyID != "" {
		return "apikey:" + rc.Identity.APIKeyID, nil
	}
	return "anonymous", nil
}

// PrincipalScope is the scope CallerScope gives a caller API Gateway reports with userArn arn: "iam:" and the stable
// principal (an assumed role's session dropped). Seed files and operators name owners this way. An ARN CallerScope
// would refuse is an error wrapping ErrUnsupportedCaller.
func PrincipalScope(arn string) (string, error) {
	principal, err := stablePrincipal(arn)
	if err != nil {
		return "", fmt.Errorf("principal %q: %w", arn, err)
	}
	return "iam:" + principal, nil
}

// stablePrincipal returns the part of an IAM or STS principal ARN that stays the same for one client: the ARN itself,
// except for an assumed role, whose session is dropped.
func stablePrincipal(arn string) (string, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return "", unsupported("not an ARN")
	}
	partition, service, region, account, resource := parts[1], parts[2], parts[3], parts[4], parts[5]
	switch {
	case !partitionRe.MatchString(partition):
		return "", unsupported("unknown partition %q", partition)
	case region != "":
		return "", unsupported("IAM and STS principals have no region")
	case !accountRe.MatchString(account):
		return "", unsupported("account %q is not 12 digits", account)
	}
	kind, rest, _ := strings.Cut(resource, "/")
	switch {
	case service == "iam" && resource == "root":
		return arn, nil
	case service == "iam" && kind == "user":
		// rest is [path/]name, where the path may itself contain slashes.
		path, name := "/", rest
		if i := strings.LastIndex(rest, "/"); i >= 0 {
			path, name = "/"+rest[:i+1], rest[i+1:]
		}
		if len(path) > 512 || !userPathRe.MatchString(path) {
			return "", unsupported("malformed user path %q", path)
		}
		if err := checkName("user", name, 1, 64); err != nil {
			return "", err
		}
		return arn, nil
	case service == "sts" && kind == "assumed-role":
		role, session, ok := strings.Cut(rest, "/")
		if !ok {
			return "", unsupported("assumed role without a session")
		}
		if err := checkName("role", role, 1, 64); err != nil {
			return "", err
		}
		if err := checkName("role session", session, 2, 64); err != nil {
			return "", err
		}
		return strings.Join(parts[:5], ":") + ":assumed-role/" + role, nil
	case service == "sts" && kind == "federated-user":
		if err := checkName("federated user", rest, 2, 32); err != nil {
			return "", err
		}
		return arn, nil
	default:
		return "", unsupported("no rule for %s principal %q", service, kind)
	}
}

// checkName checks an IAM or STS name: min to max characters of [\w+=,.@-].
func checkName(what, name string, min, max int) error {
	if len(name) < min || len(name) > max || !iamNameRe.MatchString(name) {
		return unsupported("%s name %q is not %d to %d characters of [\\w+=,.@-]", what, name, min, max)
	}
	return nil
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrUnsupportedCaller)
}
