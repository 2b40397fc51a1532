package apigw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// FuzzProxyEvent reads any API Gateway proxy event, as the Lambda runtime decodes it, through the helpers the
// orchestrator uses: header lookup is case-insensitive and the same on every call; a body within the limit is
// returned as sent (decoded when base64) and one over it is ErrBodyTooLarge; the caller scope is the same on every
// call, one of the documented kinds, without an assumed role's session, or an error wrapping ErrUnsupportedCaller.
func FuzzProxyEvent(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "..", "events", "orchestrator-*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("seed corpus: events/orchestrator-*.json: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, ev := range []string{
		`{"headers":{"idempotency-key":"a"},"multiValueHeaders":{"Idempotency-Key":["a","b"]},"body":"aGk=","isBase64Encoded":true}`,
		`{"requestContext":{"identity":{"userArn":"arn:aws:sts::123456789012:assumed-role/payments/session-1"}}}`,
		`{"requestContext":{"identity":{"userArn":"arn:aws:iam::123456789012:user/division/team/alice"}}}`,
		`{"requestContext":{"identity":{"userArn":"arn:aws-cn:iam::123456789012:root"}}}`,
		`{"requestContext":{"identity":{"userArn":"arn:aws:sts::123456789012:federated-user/bob"}}}`,
		`{"requestContext":{"identity":{"cognitoIdentityId":"us-east-1:0e1d2c3b-4a59-6877-8695-a4b3c2d1e0f9"}}}`,
		`{"requestContext":{"authorizer":{"claims":{"sub":"7f3c"}}}}`,
		`{"requestContext":{"authorizer":{"principalId":"user|42"}}}`,
		`{"requestContext":{"identity":{"apiKeyId":"key-1"}}}`,
		`{"requestContext":{"identity":{"userArn":"arn:aws:lambda:us-east-1:123456789012:function:f"}}}`,
		`{"body":"not base64!","isBase64Encoded":true}`,
		`{"body":"aGVs\nbG8=","isBase64Encoded":true}`,
	} {
		f.Add([]byte(ev))
	}
	const limit = 64
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 32<<10 {
			return
		}
		var req events.APIGatewayProxyRequest
		if err := json.Unmarshal(data, &req); err != nil {
			return
		}

		for _, name := range headerNames(req) {
			got := HeaderValues(req, name)
			for _, variant := range []string{name, strings.ToLower(name), strings.ToUpper(name)} {
				if again := HeaderValues(req, variant); !slices.Equal(again, got) {
					t.Fatalf("header %q: %q, then as %q: %q", name, got, variant, again)
				}
			}
		}

		body, err := Body(req, limit)
		want, decodeErr := []byte(req.Body), error(nil)
		if req.IsBase64Encoded {
			want, decodeErr = base64.StdEncoding.DecodeString(req.Body)
		}
		switch {
		case err == nil:
			if decodeErr != nil || !bytes.Equal(body, want) || len(body) > limit {
				t.Fatalf("body %q (base64 %v): got %q, want %q (%v)", req.Body, req.IsBase64Encoded, body, want, decodeErr)
			}
		case errors.Is(err, ErrBodyTooLarge):
			// A well-formed body within the limit is never refused as too large.
			wellFormed := !req.IsBase64Encoded || !strings.ContainsAny(req.Body, "\r\n")
			if decodeErr == nil && len(want) <= limit && wellFormed {
				t.Fatalf("body %q (base64 %v) of %d bytes refused as over %d", req.Body, req.IsBase64Encoded, len(want), limit)
			}
		default:
			if !req.IsBase64Encoded || decodeErr == nil {
				t.Fatalf("body %q (base64 %v): %v", req.Body, req.IsBase64Encoded, err)
			}
		}

		scope, err := CallerScope(req)
		if again, err2 := CallerScope(req); again != scope || (err == nil) != (err2 == nil) {
			t.Fatalf("caller scope %q, %v, then %q, %v", scope, err, again, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrUnsupportedCaller) || scope != "" {
				t.Fatalf("caller scope error %v (scope %q) does not wrap ErrUnsupportedCaller", err, scope)
			}
			return
		}
		kind, rest, _ := strings.Cut(scope, ":")
		kinds := []string{"cognito-identity", "iam", "cognito", "authorizer", "apikey"}
		if scope != "anonymous" && (!slices.Contains(kinds, kind) || rest == "") {
			t.Fatalf("scope %q is not one of the documented kinds", scope)
		}
		// An assumed role's scope is the role, whatever the session: fresh credentials keep the caller's scope.
		arn := req.RequestContext.Identity.UserArn
		parts := strings.SplitN(arn, ":", 6)
		if kind == "iam" && len(parts) == 6 && parts[2] == "sts" && strings.HasPrefix(parts[5], "assumed-role/") {
			session := strings.LastIndex(arn, "/")
			if scope != "iam:"+arn[:session] {
				t.Fatalf("assumed role %q has the scope %q", arn, scope)
			}
			other := req
			other.RequestContext.Identity.UserArn = arn[:session+1] + "another-session"
			if s, err := CallerScope(other); err != nil || s != scope {
				t.Fatalf("assumed role %q: scope %q, with another session %q, %v", arn, scope, s, err)
			}
		}
	})
}

// headerNames returns the header names of req, from both maps.
func headerNames(req events.APIGatewayProxyRequest) []string {
	var names []string
	for k := range req.MultiValueHeaders {
		names = append(names, k)
	}
	for k := range req.Headers {
		names = append(names, k)
	}
	return names
}
