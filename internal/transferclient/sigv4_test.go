package transferclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

func staticCredentials(token string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", SessionToken: token, Source: "test"}, nil
	})
}

// verifySigV4 checks a received request as API Gateway would: it rebuilds the request from what arrived (the body
// as received, only the signed headers), signs it again with the same credentials and time, and compares.
func verifySigV4(t *testing.T, r *http.Request, body []byte, creds aws.Credentials, region string) {
	t.Helper()
	auth := r.Header.Get("Authorization")
	const prefix = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, prefix) {
		t.Fatalf("Authorization = %q", auth)
	}
	parts := map[string]string{}
	for _, p := range strings.Split(strings.TrimPrefix(auth, prefix), ", ") {
		k, v, _ := strings.Cut(p, "=")
		parts[k] = v
	}
	signingTime, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date %q: %v", r.Header.Get("X-Amz-Date"), err)
	}
	wantScope := creds.AccessKeyID + "/" + signingTime.Format("20060102") + "/" + region + "/execute-api/aws4_request"
	if parts["Credential"] != wantScope {
		t.Errorf("Credential = %q, want %q", parts["Credential"], wantScope)
	}
	re, _ := http.NewRequest(r.Method, "https://"+r.Host+r.URL.RequestURI(), nil)
	for _, h := range strings.Split(parts["SignedHeaders"], ";") {
		if h != "host" {
			re.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	re.Header.Del("Authorization")
	re.ContentLength = r.ContentLength
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, re, hex.EncodeToString(sum[:]), "execute-api", region, signingTime); err != nil {
		t.Fatal(err)
	}
	if got, want := auth, re.Header.Get("Authorization"); got != want {
		t.Errorf("signature does not verify:\n got  %s\n want %s", got, want)
	}
}

func TestSigV4SignsEveryAttempt(t *testing.T) {
	for _, token := range []string{"", "FwoGZXIvYXdzEXAMPLETOKEN"} {
		t.Run("session token "+map[bool]string{true: "present", false: "absent"}[token != ""], func(t *testing.T) {
			creds, _ := staticCredentials(token).Retrieve(context.Background())
			var attempts int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				attempts++
				verifySigV4(t, r, body, creds, "eu-west-1")
				if got := r.Header.Get("X-Amz-Security-Token"); got != token {
					t.Errorf("X-Amz-Security-Token = %q, want %q", got, token)
				}
				// Each attempt is signed afresh at the injected clock's time; the clock moved 1 s (Retry-After).
				if got, want := r.Header.Get("X-Amz-Date"), []string{"", "20261121T100000Z", "20261121T100001Z"}[min(attempts, 2)]; got != want {
					t.Errorf("attempt %d: X-Amz-Date = %q, want %q", attempts, got, want)
				}
				if !strings.Contains(strings.ToLower(r.Header.Get("Authorization")), "idempotency-key") {
					t.Errorf("the Idempotency-Key header is not signed: %s", r.Header.Get("Authorization"))
				}
				w.Header().Set("Content-Type", "application/json")
				if attempts == 1 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(503)
					io.WriteString(w, problemJSON(503, CodeServiceUnavailable, "x"))
					return
				}
				w.WriteHeader(202)
				io.WriteString(w, transferJSON("tr_1", StatusInProgress))
			}))
			t.Cleanup(srv.Close)
			clk := newFakeClock()
			c := &Client{
				Endpoint: srv.URL, HTTP: srv.Client(), Now: clk.Now, Sleep: clk.Sleep,
				Signer: &SigV4Signer{Credentials: staticCredentials(token), Region: "eu-west-1"},
			}
			if _, err := c.Submit(context.Background(), "k-1", aliceToBob); err != nil {
				t.Fatal(err)
			}
			if attempts != 2 {
				t.Errorf("attempts = %d, want 2", attempts)
			}
		})
	}
}

func TestSigningFailureIsNotRetried(t *testing.T) {
	f := startFake(t, step{status: 202, body: transferJSON("tr_1", StatusInProgress)})
	c := newTestClient(f, newFakeClock())
	c.Signer = &SigV4Signer{Region: "eu-west-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("no credentials in the chain")
	})}
	if _, err := c.Get(context.Background(), "tr_1"); err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent unsigned", n)
	}
}

func TestRegionFromHost(t *testing.T) {
	tests := []struct {
		host, want string
		ok         bool
	}{
		{"abc123.execute-api.eu-west-1.amazonaws.com", "eu-west-1", true},
		{"ABC123.EXECUTE-API.US-EAST-1.AMAZONAWS.COM.", "us-east-1", true},
		{"abc123-vpce-0a1b.execute-api.ap-southeast-2.amazonaws.com", "ap-southeast-2", true},
		{"abc123.execute-api.cn-north-1.amazonaws.com.cn", "cn-north-1", true},
		{"api.example.com", "", false},
		{"execute-api.eu-west-1.amazonaws.com", "", false},
		{"abc.lambda-url.eu-west-1.on.aws", "", false},
		{"127.0.0.1", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			got, ok := RegionFromHost(tc.host)
			if got != tc.want || ok != tc.ok {
				t.Errorf("RegionFromHost(%q) = %q, %v; want %q, %v", tc.host, got, ok, tc.want, tc.ok)
			}
		})
	}
}
