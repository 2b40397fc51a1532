package eventbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
)

// TestOnlyTheLocalUserReadsTheLogGroups: the log groups hold every caller's outcome events, references included, and
// on AWS only a principal with IAM rights on the log group reads them, never an API caller. Locally that is the
// stack's own user (unsigned, as transferctl reads, or signed with the access key id local: the IAM user local the
// gateway names an unsigned caller); any other principal a request is signed as (an API caller such as the user
// alice or a role's session) is refused with CloudWatch Logs' AccessDeniedException naming it. PutEvents stays open
// to every signer: the functions run by `local invoke` sign with the shell's or SAM's default credentials.
func TestOnlyTheLocalUserReadsTheLogGroups(t *testing.T) {
	srv, eb, _ := newServer(t, "", 0)
	if _, err := eb.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		entry("transferflow.transfers", `{"transferId":"tr_1","reference":"invoice 2026-118"}`)}}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	url := hs.URL
	static := func(key, token string) aws.CredentialsProvider {
		return credentials.NewStaticCredentialsProvider(key, "anything", token)
	}
	tests := []struct {
		name   string
		creds  aws.CredentialsProvider
		denied string // the principal AccessDeniedException names; "" reads the events
	}{
		{name: "unsigned: the local user", creds: aws.AnonymousCredentials{}},
		{name: "signed as the local user", creds: static("local", "")},
		{name: "signed as the IAM user alice", creds: static("alice", ""), denied: "arn:aws:iam::000000000000:user/alice"},
		{name: "signed as a role's session", creds: static("ASIAEXAMPLE00000001", "payments-writer"),
			denied: "arn:aws:sts::000000000000:assumed-role/payments-writer/ASIAEXAMPLE00000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: tt.creds, RetryMaxAttempts: 1})
			out, err := logs.FilterLogEvents(context.Background(), &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(group)})
			read := 0
			if err == nil {
				read = len(out.Events)
			}
			if tt.denied == "" {
				if err != nil || read != 1 {
					t.Fatalf("FilterLogEvents: %d events, %v; want the one event", read, err)
				}
				return
			}
			want := "User: " + tt.denied + " is not authorized to perform: logs:FilterLogEvents on resource: " +
				"arn:aws:logs:us-east-1:000000000000:log-group:" + group + ":log-stream: because no identity-based policy allows the logs:FilterLogEvents action"
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDeniedException" || ae.ErrorMessage() != want {
				t.Fatalf("FilterLogEvents: %d events, %v; want AccessDeniedException %q", read, err, want)
			}
			put := eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: tt.creds, RetryMaxAttempts: 1})
			if res, err := put.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
				entry("transferflow.transfers", `{"transferId":"tr_2"}`)}}); err != nil || res.FailedEntryCount != 0 {
				t.Errorf("PutEvents by the same principal: %+v, %v; want it accepted", res, err)
			}
		})
	}

	// A header the server cannot read a principal from is refused as CloudWatch Logs refuses it.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"logGroupName":"`+group+`"}`))
	req.Header.Set("X-Amz-Target", "Logs_20140328.FilterLogEvents")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("Authorization", "Bearer sometoken")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusBadRequest || got.Type != "IncompleteSignatureException" {
		t.Errorf("a bearer token: %d %+v, %v; want 400 IncompleteSignatureException", resp.StatusCode, got, err)
	}
}
