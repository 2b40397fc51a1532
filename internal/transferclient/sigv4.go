package transferclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// ExecuteAPIService is the SigV4 service name of API Gateway's invoke endpoints.
const ExecuteAPIService = "execute-api"

// SigV4Signer signs requests with AWS Signature Version 4 for API Gateway (service execute-api), using the
// aws-sdk-go-v2 signer and credentials from Credentials (for example aws.Config.Credentials from
// config.LoadDefaultConfig, which follows the standard credential chain).
type SigV4Signer struct {
	// Credentials provides the access key; it is asked on every request, so expiring credentials are refreshed.
	Credentials aws.CredentialsProvider
	// Region is the API's region, for example eu-west-1.
	Region string
	// Signer is the SigV4 implementation; nil means v4.NewSigner().
	Signer *v4.Signer
}

// Sign adds the Authorization, X-Amz-Date and (for temporary credentials) X-Amz-Security-Token headers to r.
func (s *SigV4Signer) Sign(ctx context.Context, r *http.Request, payloadHash string, now time.Time) error {
	if s.Credentials == nil {
		return errors.New("no AWS credentials provider")
	}
	if s.Region == "" {
		return errors.New("no region to sign for")
	}
	creds, err := s.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("retrieve AWS credentials: %w", err)
	}
	sg := s.Signer
	if sg == nil {
		sg = v4.NewSigner()
	}
	if err := sg.SignHTTP(ctx, creds, r, payloadHash, ExecuteAPIService, s.Region, now.UTC()); err != nil {
		return fmt.Errorf("sigv4: %w", err)
	}
	return nil
}

// RegionFromHost returns the region of an API Gateway invoke host, {api-id}.execute-api.{region}.amazonaws.com
// (or .amazonaws.com.cn), and false for any other host, such as a custom domain.
func RegionFromHost(host string) (string, bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, suffix := range []string{".amazonaws.com", ".amazonaws.com.cn"} {
		rest, ok := strings.CutSuffix(host, suffix)
		if !ok {
			continue
		}
		parts := strings.Split(rest, ".")
		// {api-id}.execute-api.{region}, or {api-id}-{vpce-id}.execute-api.{region} for private APIs.
		if len(parts) == 3 && parts[1] == "execute-api" && parts[0] != "" && parts[2] != "" {
			return parts[2], true
		}
	}
	return "", false
}
