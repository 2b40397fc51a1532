package sfnapi

import (
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Tester is the part of testing.TB that StartT uses.
type Tester interface {
	Helper()
	Cleanup(func())
}

// TestServer is a Step Functions API served by an httptest.Server, for tests.
type TestServer struct {
	// URL is the endpoint to give the SDK (o.BaseEndpoint).
	URL string
	// Engine is the engine behind the API.
	Engine *sfnengine.Engine
}

// StartT starts an engine with opts behind an httptest server and registers their shutdown with t.Cleanup.
func StartT(t Tester, opts sfnengine.Options) *TestServer {
	t.Helper()
	eng := sfnengine.New(opts)
	hs := httptest.NewServer(New(eng, nil))
	t.Cleanup(func() {
		hs.Close()
		eng.Close()
	})
	return &TestServer{URL: hs.URL, Engine: eng}
}

// Client returns an aws-sdk-go-v2 Step Functions client pointed at the server (region us-east-1, static
// credentials), with WithoutHostPrefix and then optFns applied.
func (s *TestServer) Client(optFns ...func(*sfn.Options)) *sfn.Client {
	return sfn.New(sfn.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	}, append([]func(*sfn.Options){WithoutHostPrefix}, optFns...)...)
}
