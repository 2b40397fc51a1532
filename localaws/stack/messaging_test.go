package stack

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// TestMessagingClientsOnlyWithAnEndpoint: the engine gets an SQS or SNS client only when the environment names an
// endpoint for that service (or for every service), so a local run never reaches a real account by accident.
func TestMessagingClientsOnlyWithAnEndpoint(t *testing.T) {
	for _, tc := range []struct {
		env              map[string]string
		wantSQS, wantSNS bool
	}{
		{map[string]string{}, false, false},
		{map[string]string{"AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:9324"}, true, false},
		{map[string]string{"AWS_ENDPOINT_URL_SNS": "http://127.0.0.1:9911"}, false, true},
		{map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566"}, true, true},
	} {
		q, p := messagingClients(aws.Config{Region: "us-east-1"}, func(k string) string { return tc.env[k] })
		if (q != nil) != tc.wantSQS || (p != nil) != tc.wantSNS {
			t.Errorf("env %v: sqs %v, sns %v; want sqs %v, sns %v", tc.env, q != nil, p != nil, tc.wantSQS, tc.wantSNS)
		}
	}
}
