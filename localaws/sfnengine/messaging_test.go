package sfnengine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// fakeQueue is an SQSAPI that keeps what it is sent, or answers err.
type fakeQueue struct {
	mu   sync.Mutex
	sent []*sqs.SendMessageInput
	err  error
}

func (q *fakeQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return nil, q.err
	}
	q.sent = append(q.sent, in)
	return &sqs.SendMessageOutput{MessageId: aws.String("m-1"), MD5OfMessageBody: aws.String("md5")}, nil
}

// fakeTopic is an SNSAPI that keeps what it is sent, or answers err.
type fakeTopic struct {
	mu        sync.Mutex
	published []*sns.PublishInput
	err       error
}

func (p *fakeTopic) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	p.published = append(p.published, in)
	return &sns.PublishOutput{MessageId: aws.String("n-1")}, nil
}

const sendMessageTask = `{"StartAt":"Send","States":{"Send":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage",
  "Parameters":{"QueueUrl":"http://sqs.local/123456789012/transfers","MessageBody":{"transferId.$":"$.id"},
    "MessageAttributes":{"kind":{"DataType":"String","StringValue":"settled"}},"DelaySeconds":5},
  "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Caught"}],"End":true},
  "Caught":{"Type":"Pass","End":true}}}`

const publishTask = `{"StartAt":"Publish","States":{"Publish":{"Type":"Task","Resource":"arn:aws:states:::sns:publish",
  "Parameters":{"TopicArn":"arn:aws:sns:us-east-1:123456789012:transfers","Message.$":"$.text","Subject":"Transfer"},
  "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Caught"}],"End":true},
  "Caught":{"Type":"Pass","End":true}}}`

// TestSQSSendMessage: sqs:sendMessage sends the Parameters through SQSAPI (an object MessageBody as its JSON text)
// and returns SendMessage's answer with the SDK metadata; a refused call is SQS.<Exception> (the SDK's exception
// type, not SQS's legacy wire code), and without a client the task fails with SQS.SdkClientException.
func TestSQSSendMessage(t *testing.T) {
	q := &fakeQueue{}
	rec := run(t, newEngine(t, sfnengine.Options{SQS: q}), sendMessageTask, `{"id":"t-1"}`)
	var out map[string]any
	if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
		t.Fatal(err)
	}
	if out["MessageId"] != "m-1" || out["MD5OfMessageBody"] != "md5" || out["SdkHttpMetadata"] == nil || out["err"] != nil {
		t.Fatalf("output %s, want SendMessage's answer", *rec.Output)
	}
	if len(q.sent) != 1 {
		t.Fatalf("%d messages sent, want 1", len(q.sent))
	}
	in := q.sent[0]
	if *in.QueueUrl != "http://sqs.local/123456789012/transfers" || *in.MessageBody != `{"transferId":"t-1"}` || in.DelaySeconds != 5 ||
		*in.MessageAttributes["kind"].StringValue != "settled" || *in.MessageAttributes["kind"].DataType != "String" {
		t.Fatalf("sent %+v, want the Parameters with the body as JSON text", in)
	}

	for _, tc := range []struct {
		name      string
		opts      sfnengine.Options
		wantError string
	}{
		{"refused", sfnengine.Options{SQS: &fakeQueue{err: &sqstypes.QueueDoesNotExist{Message: aws.String("The specified queue does not exist."),
			ErrorCodeOverride: aws.String("AWS.SimpleQueueService.NonExistentQueue")}}}, "SQS.QueueDoesNotExistException"},
		{"no client", sfnengine.Options{}, sfnengine.SQSSdkClientError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := run(t, newEngine(t, tc.opts), sendMessageTask, `{"id":"t-2"}`)
			var out struct {
				Err struct{ Error, Cause string } `json:"err"`
			}
			if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
				t.Fatal(err)
			}
			if out.Err.Error != tc.wantError || out.Err.Cause == "" {
				t.Fatalf("err %+v, want %s with a cause", out.Err, tc.wantError)
			}
		})
	}
}

// TestSNSPublish: sns:publish sends the Parameters through SNSAPI and returns Publish's answer; a refused call is
// SNS.<Exception> with the service's message in the cause.
func TestSNSPublish(t *testing.T) {
	p := &fakeTopic{}
	rec := run(t, newEngine(t, sfnengine.Options{SNS: p}), publishTask, `{"text":"settled"}`)
	if !strings.Contains(*rec.Output, `"MessageId":"n-1"`) || len(p.published) != 1 || *p.published[0].Message != "settled" ||
		*p.published[0].TopicArn != "arn:aws:sns:us-east-1:123456789012:transfers" || *p.published[0].Subject != "Transfer" {
		t.Fatalf("output %s, published %+v; want Publish's answer for the Parameters", *rec.Output, p.published)
	}
	refused := &fakeTopic{err: &snstypes.NotFoundException{Message: aws.String("Topic does not exist")}}
	rec = run(t, newEngine(t, sfnengine.Options{SNS: refused}), publishTask, `{"text":"settled"}`)
	var out struct {
		Err struct{ Error, Cause string } `json:"err"`
	}
	if err := json.Unmarshal([]byte(*rec.Output), &out); err != nil {
		t.Fatal(err)
	}
	if out.Err.Error != "SNS.NotFoundException" || !strings.HasPrefix(out.Err.Cause, "Topic does not exist (Service: AmazonSNS; Status Code: 400; Error Code: NotFound;") {
		t.Fatalf("err %+v, want SNS.NotFoundException with the service's message", out.Err)
	}
}

// TestSQSWaitForTaskToken: sqs:sendMessage.waitForTaskToken sends the token in the message and the task ends with
// the output SendTaskSuccess gives, as a worker reading the queue would answer.
func TestSQSWaitForTaskToken(t *testing.T) {
	q := &fakeQueue{}
	eng := newEngine(t, sfnengine.Options{SQS: q})
	rec := start(t, eng, `{"StartAt":"Send","States":{"Send":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
  "Parameters":{"QueueUrl":"http://sqs.local/123456789012/work","MessageBody":{"token.$":"$$.Task.Token"}},"End":true}}}`, `{}`)
	var token string
	eventually(t, "the message with the token is sent", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		if len(q.sent) == 0 {
			return false
		}
		var body struct{ Token string }
		if err := json.Unmarshal([]byte(*q.sent[0].MessageBody), &body); err != nil {
			t.Fatal(err)
		}
		token = body.Token
		return true
	})
	if err := eng.SendTaskSuccess(context.Background(), token, `{"done":true}`); err != nil {
		t.Fatal(err)
	}
	done, err := waitHistory(context.Background(), eng, rec.Arn)
	if err != nil || done.Status != sfnengine.StatusSucceeded || *done.Output != `{"done":true}` {
		t.Fatalf("execution %+v, %v; want SUCCEEDED with the worker's output", done, err)
	}
}
