package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	testSignature = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
	testScope     = "/20261121/us-east-1/execute-api/aws4_request"
	// paymentsWriterID is roleID("payments-writer").
	paymentsWriterID = "AROACO7RYJFSQJSMVECIK"
)

// sigv4 is a well-formed Authorization header for the access key id key.
func sigv4(key string) string {
	return "AWS4-HMAC-SHA256 Credential=" + key + testScope + ", SignedHeaders=host;x-amz-date, Signature=" + testSignature
}

func TestCallerIdentity(t *testing.T) {
	const account = "000000000000"
	user := func(name string) events.APIGatewayRequestIdentity {
		return events.APIGatewayRequestIdentity{UserArn: "arn:aws:iam::" + account + ":user/" + name, User: name, Caller: name}
	}
	withKey := func(id events.APIGatewayRequestIdentity, key string) events.APIGatewayRequestIdentity {
		id.AccessKey = key
		return id
	}
	role := func(name, roleID, session string) events.APIGatewayRequestIdentity {
		return events.APIGatewayRequestIdentity{UserArn: "arn:aws:sts::" + account + ":assumed-role/" + name + "/" + session,
			User: roleID + ":" + session, Caller: roleID + ":" + session, AccessKey: session}
	}
	foreignRole := func(account, name, roleID, session string) events.APIGatewayRequestIdentity {
		return events.APIGatewayRequestIdentity{UserArn: "arn:aws:sts::" + account + ":assumed-role/" + name + "/" + session,
			User: roleID + ":" + session, Caller: roleID + ":" + session, AccessKey: session, AccountID: account}
	}
	date := map[string]string{"X-Amz-Date": "20261121T100000Z"}
	with := func(auth string, extra ...string) map[string]string {
		h := map[string]string{"Authorization": auth, "X-Amz-Date": "20261121T100000Z"}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	tests := []struct {
		name        string
		headers     map[string]string
		authHeaders []string // several Authorization headers
		want        events.APIGatewayRequestIdentity
		wantMessage string // the 403 message when the request is refused
	}{
		{name: "unsigned: the local user", headers: date, want: user("local")},
		{name: "long-term key: the user named by it", headers: with(sigv4("AKIAIOSFODNN7EXAMPLE")),
			want: withKey(user("AKIAIOSFODNN7EXAMPLE"), "AKIAIOSFODNN7EXAMPLE")},
		{name: "any other key: a user", headers: with(sigv4("alice")), want: withKey(user("alice"), "alice")},
		{name: "long-term key with a token: still the user", headers: with(sigv4("AKIAIOSFODNN7EXAMPLE"), "X-Amz-Security-Token", "payments-writer"),
			want: withKey(user("AKIAIOSFODNN7EXAMPLE"), "AKIAIOSFODNN7EXAMPLE")},
		{name: "temporary key and a role name token: an assumed role", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", "payments-writer"),
			want: role("payments-writer", paymentsWriterID, "ASIAQNZGKIQY56JQ7WML")},
		{name: "fresh temporary key: a new session of the same role", headers: with(sigv4("ASIAXH3LE2TPIW5RX7QA"), "X-Amz-Security-Token", "payments-writer"),
			want: role("payments-writer", paymentsWriterID, "ASIAXH3LE2TPIW5RX7QA")},
		{name: "role name with IAM punctuation", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", "ops+ci=a,b.c@d-e_f"),
			want: role("ops+ci=a,b.c@d-e_f", roleID("ops+ci=a,b.c@d-e_f"), "ASIAQNZGKIQY56JQ7WML")},
		{name: "a real-looking session token: local-role", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ=="),
			want: role("local-role", roleID("local-role"), "ASIAQNZGKIQY56JQ7WML")},
		{name: "a token over 64 characters: local-role", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", strings.Repeat("r", 65)),
			want: role("local-role", roleID("local-role"), "ASIAQNZGKIQY56JQ7WML")},
		{name: "a role ARN token: a role of another account", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", "arn:aws:iam::111122223333:role/intruder"),
			want: foreignRole("111122223333", "intruder", roleID("arn:aws:iam::111122223333:role/intruder"), "ASIAQNZGKIQY56JQ7WML")},
		{name: "a role ARN with a path: the session's ARN has none", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", "arn:aws:iam::111122223333:role/ops/batch/intruder"),
			want: foreignRole("111122223333", "intruder", roleID("arn:aws:iam::111122223333:role/ops/batch/intruder"), "ASIAQNZGKIQY56JQ7WML")},
		{name: "the local account's role by its ARN: the same role as by its name", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", "arn:aws:iam::000000000000:role/payments-writer"),
			want: role("payments-writer", paymentsWriterID, "ASIAQNZGKIQY56JQ7WML")},
		{name: "a role ARN of another partition: local-role", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", "arn:aws-cn:iam::111122223333:role/intruder"),
			want: role("local-role", roleID("local-role"), "ASIAQNZGKIQY56JQ7WML")},
		{name: "Date instead of X-Amz-Date", headers: map[string]string{"Authorization": sigv4("alice"), "Date": "Sat, 21 Nov 2026 10:00:00 GMT"},
			want: withKey(user("alice"), "alice")},
		{name: "no space after the commas", headers: with("AWS4-HMAC-SHA256 Credential=alice" + testScope + ",SignedHeaders=host,Signature=" + testSignature),
			want: withKey(user("alice"), "alice")},

		{name: "temporary key without a token", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML")), wantMessage: msgInvalidToken},
		{name: "temporary key with an empty token", headers: with(sigv4("ASIAQNZGKIQY56JQ7WML"), "X-Amz-Security-Token", ""), wantMessage: msgInvalidToken},
		{name: "a bearer token", headers: with("Bearer sometoken"),
			wantMessage: "'sometoken' not a valid key=value pair (missing equal-sign) in Authorization header: 'Bearer sometoken'."},
		{name: "a trailing comma", headers: with(sigv4("alice") + ","),
			wantMessage: "'' not a valid key=value pair (missing equal-sign) in Authorization header: '" + sigv4("alice") + ",'."},
		{name: "a bare token", headers: with("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.sig"),
			wantMessage: "Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter. " +
				"Authorization header requires 'SignedHeaders' parameter. Authorization=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.sig"},
		{name: "an empty header", headers: map[string]string{"Authorization": ""},
			wantMessage: "Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter. " +
				"Authorization header requires 'SignedHeaders' parameter. Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization="},
		{name: "text merely containing Credential=", headers: with("token Credential=alice" + testScope),
			wantMessage: "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. " +
				"Authorization=token Credential=alice" + testScope},
		{name: "no signature", headers: with("AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=host"),
			wantMessage: "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=host"},
		{name: "an empty signature", headers: with("AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=host, Signature="),
			wantMessage: "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=host, Signature="},
		{name: "no date header", headers: map[string]string{"Authorization": sigv4("alice")},
			wantMessage: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=" + sigv4("alice")},
		{name: "a credential of four elements", headers: with("AWS4-HMAC-SHA256 Credential=alice/20261121/us-east-1/execute-api, SignedHeaders=host, Signature=" + testSignature),
			wantMessage: "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got 'alice/20261121/us-east-1/execute-api'"},
		{name: "a slash in the key", headers: with(sigv4("al/ice")),
			wantMessage: "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got 'al/ice" + testScope + "'"},
		{name: "another service", headers: with("AWS4-HMAC-SHA256 Credential=alice/20261121/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=" + testSignature),
			wantMessage: "Credential should be scoped to correct service: 'execute-api'. "},
		{name: "no region and another terminator", headers: with("AWS4-HMAC-SHA256 Credential=alice/20261121//execute-api/aws5_request, SignedHeaders=host, Signature=" + testSignature),
			wantMessage: "Credential should be scoped to a valid region, not ''. Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'. "},
		{name: "a key with a hyphen", headers: with(sigv4("al-ice")), wantMessage: msgInvalidToken},
		{name: "a key over 64 characters", headers: with(sigv4("ASIA" + strings.Repeat("A", 61))), wantMessage: msgInvalidToken},
		{name: "a short signature", headers: with("AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=host, Signature=abc"), wantMessage: msgSignatureMismatch},
		{name: "an upper-case signature", headers: with("AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=host, Signature=" + strings.ToUpper(testSignature)),
			wantMessage: msgSignatureMismatch},
		{name: "upper-case signed headers", headers: with("AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=Host;X-Amz-Date, Signature=" + testSignature),
			wantMessage: msgSignatureMismatch},
		{name: "an empty signed header", headers: with("AWS4-HMAC-SHA256 Credential=alice" + testScope + ", SignedHeaders=host;;x-amz-date, Signature=" + testSignature),
			wantMessage: msgSignatureMismatch},
		{name: "a scope date that is no date", headers: with("AWS4-HMAC-SHA256 Credential=alice/20261321/us-east-1/execute-api/aws4_request, SignedHeaders=host, Signature=" + testSignature),
			wantMessage: msgSignatureMismatch},
		{name: "another algorithm", headers: with(strings.Replace(sigv4("alice"), "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1", 1)), wantMessage: msgSignatureMismatch},
		{name: "a parameter twice", headers: with(sigv4("alice") + ", Signature=" + testSignature), wantMessage: msgSignatureMismatch},
		{name: "another parameter", headers: with(sigv4("alice") + ", Foo=bar"), wantMessage: msgSignatureMismatch},
		{name: "two Authorization headers", headers: date, authHeaders: []string{sigv4("alice"), sigv4("bob")}, wantMessage: msgSignatureMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200}}
			srv := newTestGateway(t, fn)
			req, _ := http.NewRequest("GET", srv.URL+"/transfers/t1", nil)
			req.Header.Set("User-Agent", "test-agent")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			for _, v := range tt.authHeaders {
				req.Header.Add("Authorization", v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.wantMessage != "" {
				var got struct{ Message string }
				if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusForbidden || got.Message != tt.wantMessage {
					t.Fatalf("status %d body %s\nwant 403 message %q", resp.StatusCode, body, tt.wantMessage)
				}
				if fn.function != "" {
					t.Errorf("function %s invoked for a refused request", fn.function)
				}
				return
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d body %s", resp.StatusCode, body)
			}
			want := tt.want
			want.SourceIP, want.UserAgent = "127.0.0.1", "test-agent"
			if want.AccountID == "" {
				want.AccountID = account
			}
			if got := fn.got.RequestContext.Identity; got != want {
				t.Errorf("identity\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestSignedWithTheSDK signs requests with the AWS SDK's own SigV4 signer, as transferctl and any SDK client do.
func TestSignedWithTheSDK(t *testing.T) {
	tests := []struct {
		name        string
		creds       aws.Credentials
		wantArn     string
		wantID      string
		wantMessage string
	}{
		{name: "IAM user", creds: aws.Credentials{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "secret"},
			wantArn: "arn:aws:iam::000000000000:user/AKIAIOSFODNN7EXAMPLE", wantID: "AKIAIOSFODNN7EXAMPLE"},
		{name: "assumed role", creds: aws.Credentials{AccessKeyID: "ASIAQNZGKIQY56JQ7WML", SecretAccessKey: "secret", SessionToken: "payments-writer"},
			wantArn: "arn:aws:sts::000000000000:assumed-role/payments-writer/ASIAQNZGKIQY56JQ7WML", wantID: paymentsWriterID + ":ASIAQNZGKIQY56JQ7WML"},
		{name: "the same role with fresh credentials", creds: aws.Credentials{AccessKeyID: "ASIAXH3LE2TPIW5RX7QA", SecretAccessKey: "other", SessionToken: "payments-writer"},
			wantArn: "arn:aws:sts::000000000000:assumed-role/payments-writer/ASIAXH3LE2TPIW5RX7QA", wantID: paymentsWriterID + ":ASIAXH3LE2TPIW5RX7QA"},
		{name: "temporary credentials without their token", creds: aws.Credentials{AccessKeyID: "ASIAQNZGKIQY56JQ7WML", SecretAccessKey: "secret"},
			wantMessage: msgInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 202, Body: "{}"}}
			srv := newTestGateway(t, fn)
			body := `{"amount":1250}`
			req, _ := http.NewRequest("POST", srv.URL+"/transfers", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			err := v4.NewSigner().SignHTTP(context.Background(), tt.creds, req, sha256Hex(body), "execute-api", "us-east-1", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.wantMessage != "" {
				if resp.StatusCode != http.StatusForbidden || string(out) != `{"message":"`+tt.wantMessage+`"}` || fn.function != "" {
					t.Errorf("status %d body %s, function %q invoked; want 403 %q", resp.StatusCode, out, fn.function, tt.wantMessage)
				}
				return
			}
			id := fn.got.RequestContext.Identity
			if resp.StatusCode != 202 || id.UserArn != tt.wantArn || id.User != tt.wantID || id.Caller != tt.wantID || id.AccessKey != tt.creds.AccessKeyID {
				t.Errorf("status %d, identity %+v; want userArn %s, user and caller %s", resp.StatusCode, id, tt.wantArn, tt.wantID)
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestRoleIDLooksLikeAnIAMRoleID(t *testing.T) {
	id := roleID("payments-writer")
	if len(id) != 21 || !strings.HasPrefix(id, "AROA") || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		t.Errorf("roleID = %q, want AROA and 17 base32 characters", id)
	}
	if roleID("payments-writer") != id || roleID("reporting") == id {
		t.Error("roleID must be stable per role and differ between roles")
	}
}
