package samtemplate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// outboxTemplate is the transactional outbox's wiring as template.yaml writes it: a table with a stream and a
// function with a DynamoDB event on it.
const outboxTemplate = `
Resources:
  TransfersTable:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      StreamSpecification:
        StreamViewType: NEW_AND_OLD_IMAGES
  OutcomeRelayDeadLetterQueue:
    Type: AWS::SQS::Queue
  OutcomeRelayFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/outcome-relay/
      Events:
        Settled:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt TransfersTable.StreamArn
            StartingPosition: TRIM_HORIZON
            BatchSize: 10
            MaximumBatchingWindowInSeconds: 1
            BisectBatchOnFunctionError: true
            MaximumRetryAttempts: -1
            MaximumRecordAgeInSeconds: 82800
            FunctionResponseTypes: [ReportBatchItemFailures]
            FilterCriteria:
              Filters:
                - Pattern: '{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"sk":{"S":["TRANSFER"]},"status":{"S":["COMPLETED","FAILED"]}},"OldImage":{"status":{"S":[{"anything-but":["COMPLETED","FAILED"]}]}}}}'
                - Pattern:
                    eventName: [REMOVE]
            DestinationConfig:
              OnFailure:
                Type: SQS
                Destination: !GetAtt OutcomeRelayDeadLetterQueue.Arn
`

func TestTableStreamSpecification(t *testing.T) {
	tmpl, err := Parse([]byte(outboxTemplate))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	spec := tables[0].Create.StreamSpecification
	if tables[0].StreamViewType != "NEW_AND_OLD_IMAGES" || spec == nil || !aws.ToBool(spec.StreamEnabled) || spec.StreamViewType != "NEW_AND_OLD_IMAGES" {
		t.Errorf("stream view %q, CreateTable's StreamSpecification %+v; want NEW_AND_OLD_IMAGES, enabled", tables[0].StreamViewType, spec)
	}
	bad := strings.Replace(outboxTemplate, "StreamViewType: NEW_AND_OLD_IMAGES", "StreamViewType: EVERYTHING", 1)
	if tmpl, err = Parse([]byte(bad)); err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Tables(); err == nil || !strings.Contains(err.Error(), "EVERYTHING") {
		t.Errorf("an unknown StreamViewType: err = %v", err)
	}
	plain := strings.Replace(outboxTemplate, "StreamSpecification:\n        StreamViewType: NEW_AND_OLD_IMAGES", "", 1)
	if tmpl, err = Parse([]byte(plain)); err != nil {
		t.Fatal(err)
	}
	if tables, err := tmpl.Tables(); err != nil || tables[0].StreamViewType != "" || tables[0].Create.StreamSpecification != nil {
		t.Errorf("a table without StreamSpecification: %+v, %v", tables, err)
	}
}

func TestDynamoDBEvent(t *testing.T) {
	tmpl, err := Parse([]byte(outboxTemplate))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions(Env{Region: "us-east-1", AccountID: "000000000000"}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 1 || len(fns[0].Events) != 1 || fns[0].Events[0].Type != EventDynamoDB || fns[0].Events[0].DynamoDB == nil {
		t.Fatalf("functions %+v", fns)
	}
	s := fns[0].Events[0].DynamoDB
	patterns, _ := json.Marshal(s.Filters)
	if s.StreamARN != "att:TransfersTable.StreamArn" || s.StartingPosition != "TRIM_HORIZON" || s.BatchSize != 10 ||
		s.MaximumBatchingWindowInSeconds != 1 || !s.BisectBatchOnFunctionError || s.MaximumRetryAttempts != -1 ||
		s.MaximumRecordAgeInSeconds != 82800 || !s.ReportBatchItemFailures || s.OnFailure != "att:OutcomeRelayDeadLetterQueue.Arn" ||
		!s.Enabled || s.ParallelizationFactor != 1 || s.TumblingWindowInSeconds != 0 {
		t.Errorf("source %+v", s)
	}
	want := `[{"dynamodb":{"NewImage":{"sk":{"S":["TRANSFER"]},"status":{"S":["COMPLETED","FAILED"]}},"OldImage":{"status":{"S":[{"anything-but":["COMPLETED","FAILED"]}]}}},"eventName":["MODIFY"]},{"eventName":["REMOVE"]}]`
	if string(patterns) != want {
		t.Errorf("filters %s, want %s", patterns, want)
	}
}

// blankResolver resolves every reference to "", as local invoke's resolver does what it does not model.
type blankResolver struct{}

func (blankResolver) Ref(string) (string, error)            { return "", nil }
func (blankResolver) GetAtt(string, string) (string, error) { return "", nil }

// TestDynamoDBEventWithAResolverThatKnowsNoStream: the functions of a template with a DynamoDB event are read by a
// resolver that does not model streams or queues (local invoke's), the event with an empty Stream.
func TestDynamoDBEventWithAResolverThatKnowsNoStream(t *testing.T) {
	tmpl, err := Parse([]byte(outboxTemplate))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions(Env{}, blankResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if s := fns[0].Events[0].DynamoDB; s.StreamARN != "" || s.OnFailure != "" || s.BatchSize != 10 {
		t.Errorf("source %+v", s)
	}
}

func TestDynamoDBEventDefaultsAndRanges(t *testing.T) {
	parse := func(props string) (*StreamSource, error) {
		t.Helper()
		src := "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        E:\n          Type: DynamoDB\n          Properties:\n" + props
		tmpl, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		fns, err := tmpl.Functions(Env{}, fakeResolver{})
		if err != nil {
			return nil, err
		}
		return fns[0].Events[0].DynamoDB, nil
	}
	s, err := parse("            Stream: arn:x\n            StartingPosition: LATEST\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.BatchSize != 100 || s.MaximumBatchingWindowInSeconds != 0 || s.BisectBatchOnFunctionError || s.MaximumRetryAttempts != -1 ||
		s.MaximumRecordAgeInSeconds != -1 || s.ParallelizationFactor != 1 || s.ReportBatchItemFailures || s.Filters != nil ||
		s.OnFailure != "" || !s.Enabled {
		t.Errorf("Lambda's defaults: %+v", s)
	}
	for _, bad := range []string{
		"            StartingPosition: LATEST\n",
		"            Stream: arn:x\n",
		"            Stream: arn:x\n            StartingPosition: AT_TIMESTAMP\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            BatchSize: 0\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            BatchSize: 10001\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            MaximumRetryAttempts: -2\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            MaximumRecordAgeInSeconds: 59\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            MaximumBatchingWindowInSeconds: 301\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            FunctionResponseTypes: [Other]\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            FilterCriteria: {Filters: [{Pattern: 'not json'}]}\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            DestinationConfig: {OnSuccess: {Destination: arn:y}}\n",
		"            Stream: arn:x\n            StartingPosition: LATEST\n            Unknown: 1\n",
	} {
		if s, err := parse(bad); err == nil {
			t.Errorf("accepted %q: %+v", bad, s)
		}
	}
}
