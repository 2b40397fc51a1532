package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"
)

// TestOnlyTheLocalUserReadsTheOutcomeEvents: the stack's log group holds every caller's outcome events, references
// included. The stack's own user reads them (unsigned, as transferctl events tail does); an API caller who asks as
// itself, here the IAM user alice who made the transfer, is refused with AccessDeniedException, as on AWS, where
// the API's callers hold no IAM rights on the log group.
func TestOnlyTheLocalUserReadsTheOutcomeEvents(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	body, _ := json.Marshal(withReference(transferBody("acc-alice", "acc-bob", 75, "EUR"), "invoice 2026-7"))
	r := s.signed(aws.Credentials{AccessKeyID: "alice", SecretAccessKey: "anything"}, http.MethodPost, "/transfers", body,
		map[string]string{"Content-Type": "application/json", "Idempotency-Key": "e2e-event-readers"})
	if r.Status != http.StatusAccepted {
		t.Fatalf("submit as alice: %d %s", r.Status, r.RawBody)
	}
	id := r.Body["transferId"].(string)
	if ev := s.eventsFor(1, settle)[id]; len(ev) != 1 || ev[0].Detail["reference"] != "invoice 2026-7" {
		t.Fatalf("the local user reads %+v, want the transfer's event with its reference", ev)
	}
	logs := cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Events),
		Credentials: credentials.NewStaticCredentialsProvider("alice", "anything", ""), RetryMaxAttempts: 1})
	_, err := logs.FilterLogEvents(context.Background(), &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(eventsLogGroup)})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDeniedException" {
		t.Fatalf("FilterLogEvents as alice: %v, want AccessDeniedException", err)
	}
}
