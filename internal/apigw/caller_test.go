package apigw

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestCallerScope(t *testing.T) {
	iam := func(arn string) events.APIGatewayProxyRequestContext {
		return events.APIGatewayProxyRequestContext{Identity: events.APIGatewayRequestIdentity{UserArn: arn}}
	}
	tests := []struct {
		name    string
		rc      events.APIGatewayProxyRequestContext
		want    string
		wantErr bool
	}{
		// Cognito identity pool: every end user shares the pool's role, so the identity id is the principal.
		{name: "cognito identity pool", rc: events.APIGatewayProxyRequestContext{Identity: events.APIGatewayRequestIdentity{
			CognitoIdentityID: "eu-west-1:db9476fd-de77-4977-839f-4f943ff5d68c",
			UserArn:           "arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials"}},
			want: "cognito-identity:eu-west-1:db9476fd-de77-4977-839f-4f943ff5d68c"},
		{name: "cognito identity id not REGION:GUID", rc: events.APIGatewayProxyRequestContext{Identity: events.APIGatewayRequestIdentity{
			CognitoIdentityID: "eu-west-1:NOT-HEX", UserArn: "arn:aws:iam::123456789012:user/alice"}}, wantErr: true},
		{name: "cognito identity id too long", rc: events.APIGatewayProxyRequestContext{Identity: events.APIGatewayRequestIdentity{
			CognitoIdentityID: "eu-west-1:" + strings.Repeat("a", 46)}}, wantErr: true},

		// IAM users: the ARN, unchanged from earlier versions.
		{name: "iam user", rc: iam("arn:aws:iam::123456789012:user/alice"), want: "iam:arn:aws:iam::123456789012:user/alice"},
		{name: "iam user with a path", rc: iam("arn:aws:iam::123456789012:user/division_abc/subdivision_xyz/Bob"),
			want: "iam:arn:aws:iam::123456789012:user/division_abc/subdivision_xyz/Bob"},
		{name: "iam user name with every allowed punctuation", rc: iam("arn:aws:iam::123456789012:user/a+b=c,d.e@f-g_h"),
			want: "iam:arn:aws:iam::123456789012:user/a+b=c,d.e@f-g_h"},
		{name: "iam user in aws-cn", rc: iam("arn:aws-cn:iam::123456789012:user/alice"), want: "iam:arn:aws-cn:iam::123456789012:user/alice"},
		{name: "iam user in aws-us-gov", rc: iam("arn:aws-us-gov:iam::123456789012:user/alice"), want: "iam:arn:aws-us-gov:iam::123456789012:user/alice"},
		{name: "iam user and an api key: the user wins", rc: events.APIGatewayProxyRequestContext{Identity: events.APIGatewayRequestIdentity{
			UserArn: "arn:aws:iam::123456789012:user/alice", APIKeyID: "k"}}, want: "iam:arn:aws:iam::123456789012:user/alice"},
		{name: "iam user without a name", rc: iam("arn:aws:iam::123456789012:user/"), wantErr: true},
		{name: "iam user path ends in a slash", rc: iam("arn:aws:iam::123456789012:user/team/"), wantErr: true},
		{name: "iam user empty path segment", rc: iam("arn:aws:iam::123456789012:user//alice"), wantErr: true},
		{name: "iam user name with a space", rc: iam("arn:aws:iam::123456789012:user/al ice"), wantErr: true},
		{name: "iam user name over 64", rc: iam("arn:aws:iam::123456789012:user/" + strings.Repeat("a", 65)), wantErr: true},
		{name: "iam user in sts", rc: iam("arn:aws:sts::123456789012:user/alice"), wantErr: true},

		// Assumed roles: the role, never the session.
		{name: "assumed role", rc: iam("arn:aws:sts::123456789012:assumed-role/payments-writer/session-1"),
			want: "iam:arn:aws:sts::123456789012:assumed-role/payments-writer"},
		{name: "assumed role, another session", rc: iam("arn:aws:sts::123456789012:assumed-role/payments-writer/i-0abc123def4567890"),
			want: "iam:arn:aws:sts::123456789012:assumed-role/payments-writer"},
		{name: "session name with @=,.-", rc: iam("arn:aws:sts::123456789012:assumed-role/R/mary@example.com=a,b.c-d"),
			want: "iam:arn:aws:sts::123456789012:assumed-role/R"},
		{name: "assumed role in aws-cn", rc: iam("arn:aws-cn:sts::123456789012:assumed-role/R/s1"), want: "iam:arn:aws-cn:sts::123456789012:assumed-role/R"},
		{name: "role name of 64", rc: iam("arn:aws:sts::123456789012:assumed-role/" + strings.Repeat("r", 64) + "/s1"),
			want: "iam:arn:aws:sts::123456789012:assumed-role/" + strings.Repeat("r", 64)},
		{name: "assumed role without a session", rc: iam("arn:aws:sts::123456789012:assumed-role/R"), wantErr: true},
		{name: "assumed role with an empty session", rc: iam("arn:aws:sts::123456789012:assumed-role/R/"), wantErr: true},
		{name: "assumed role with an extra segment", rc: iam("arn:aws:sts::123:assumed-role/R/S/extra"), wantErr: true},
		{name: "assumed role with an extra segment, valid account", rc: iam("arn:aws:sts::123456789012:assumed-role/R/S1/extra"), wantErr: true},
		{name: "assumed role with a path", rc: iam("arn:aws:sts::123456789012:assumed-role/team/R/S1"), wantErr: true},
		{name: "assumed role with an empty role", rc: iam("arn:aws:sts::123456789012:assumed-role//S1"), wantErr: true},
		{name: "session name of one character", rc: iam("arn:aws:sts::123456789012:assumed-role/R/s"), wantErr: true},
		{name: "session name over 64", rc: iam("arn:aws:sts::123456789012:assumed-role/R/" + strings.Repeat("s", 65)), wantErr: true},
		{name: "role name over 64", rc: iam("arn:aws:sts::123456789012:assumed-role/" + strings.Repeat("r", 65) + "/s1"), wantErr: true},
		{name: "session name with a space", rc: iam("arn:aws:sts::123456789012:assumed-role/R/a b"), wantErr: true},
		{name: "assumed role in iam", rc: iam("arn:aws:iam::123456789012:assumed-role/R/S1"), wantErr: true},

		// Federated users (GetFederationToken): the caller chooses the name, the same for every token.
		{name: "federated user", rc: iam("arn:aws:sts::123456789012:federated-user/Bob"), want: "iam:arn:aws:sts::123456789012:federated-user/Bob"},
		{name: "federated user name over 32", rc: iam("arn:aws:sts::123456789012:federated-user/" + strings.Repeat("b", 33)), wantErr: true},
		{name: "federated user with a slash", rc: iam("arn:aws:sts::123456789012:federated-user/a/b"), wantErr: true},

		// The account root.
		{name: "account root", rc: iam("arn:aws:iam::123456789012:root"), want: "iam:arn:aws:iam::123456789012:root"},
		{name: "root in sts", rc: iam("arn:aws:sts::123456789012:root"), wantErr: true},
		{name: "root with a suffix", rc: iam("arn:aws:iam::123456789012:root/x"), wantErr: true},

		// Everything else with a userArn fails closed.
		{name: "a role ARN", rc: iam("arn:aws:iam::123456789012:role/R"), wantErr: true},
		{name: "another service", rc: iam("arn:aws:s3:::bucket/alice"), wantErr: true},
		{name: "another service with an account", rc: iam("arn:aws:lambda:us-east-1:123456789012:function:f"), wantErr: true},
		{name: "a region", rc: iam("arn:aws:sts:us-east-1:123456789012:assumed-role/R/S1"), wantErr: true},
		{name: "short account", rc: iam("arn:aws:iam::123:user/alice"), wantErr: true},
		{name: "empty account", rc: iam("arn:aws:iam:::user/alice"), wantErr: true},
		{name: "unknown partition", rc: iam("arn:gcp:iam::123456789012:user/alice"), wantErr: true},
		{name: "empty partition", rc: iam("arn::iam::123456789012:user/alice"), wantErr: true},
		{name: "empty service", rc: iam("arn:aws:::123456789012:user/alice"), wantErr: true},
		{name: "empty resource", rc: iam("arn:aws:iam::123456789012:"), wantErr: true},
		{name: "too few parts", rc: iam("arn:aws:iam::123456789012"), wantErr: true},
		{name: "not an ARN", rc: iam("alice"), wantErr: true},
		{name: "upper-case prefix", rc: iam("ARN:aws:iam::123456789012:user/alice"), wantErr: true},

		// Without a userArn, as before.
		{name: "cognito user pool", rc: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"claims": map[string]any{"sub": "s-1"}}}, want: "cognito:s-1"},
		{name: "custom authorizer", rc: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"principalId": "p-1"}}, want: "authorizer:p-1"},
		{name: "api key", rc: events.APIGatewayProxyRequestContext{Identity: events.APIGatewayRequestIdentity{APIKeyID: "k-1"}}, want: "apikey:k-1"},
		{name: "anonymous", want: "anonymous"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CallerScope(events.APIGatewayProxyRequest{RequestContext: tt.rc})
			if tt.wantErr {
				if !errors.Is(err, ErrUnsupportedCaller) || got != "" {
					t.Fatalf("got %q, %v; want ErrUnsupportedCaller", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestCallerScopeErrorNamesTheIdentity(t *testing.T) {
	_, err := CallerScope(events.APIGatewayProxyRequest{RequestContext: events.APIGatewayProxyRequestContext{
		Identity: events.APIGatewayRequestIdentity{UserArn: "arn:aws:sts::123456789012:assumed-role/R"}}})
	want := `userArn "arn:aws:sts::123456789012:assumed-role/R": assumed role without a session: apigw: unsupported caller`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}
