package samtemplate

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestProjectTemplateTables(t *testing.T) {
	tmpl, err := Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 {
		t.Fatalf("tables = %d, want 1", len(tables))
	}
	tb := tables[0]
	if tb.LogicalID != "TransfersTable" || aws.ToString(tb.Create.TableName) != "TransfersTable" || tb.TTLAttribute != "expiresAt" {
		t.Errorf("table = %+v", tb)
	}
	if len(tb.Create.KeySchema) != 2 || aws.ToString(tb.Create.KeySchema[0].AttributeName) != "pk" || tb.Create.KeySchema[0].KeyType != "HASH" {
		t.Errorf("key schema = %+v", tb.Create.KeySchema)
	}
	if len(tb.Create.AttributeDefinitions) != 6 || len(tb.Create.GlobalSecondaryIndexes) != 2 {
		t.Errorf("attributes %d, indexes %d", len(tb.Create.AttributeDefinitions), len(tb.Create.GlobalSecondaryIndexes))
	}
}

func TestParseKeepsShortFormTags(t *testing.T) {
	tmpl, err := Parse([]byte("Resources:\n  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n      TableName: !Ref Name\n      BillingMode: PAY_PER_REQUEST\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.Resources["T"].Properties.Content[1].Tag; got != "!Ref" {
		t.Errorf("tag = %q, want !Ref", got)
	}
	if _, err := Parse([]byte("Parameters: {}\n")); err == nil {
		t.Error("a template without Resources must be refused")
	}
}

// fakeResolver names resources as the local stack would.
type fakeResolver struct{}

func (fakeResolver) Ref(id string) (string, error) { return "ref:" + id, nil }
func (fakeResolver) GetAtt(id, attr string) (string, error) {
	return "att:" + id + "." + attr, nil
}

func TestFunctionsAndStateMachines(t *testing.T) {
	src := `
Parameters:
  Window: {Type: String, Default: 10s}
  Reserve: {Type: Number, Default: 5}
Globals:
  Function:
    Runtime: provided.al2023
    Handler: bootstrap
    Architectures: [arm64]
    MemorySize: 256
    LoggingConfig: {LogFormat: JSON}
    Timeout: 7
    ReservedConcurrentExecutions: !Ref Reserve
    Environment:
      Variables:
        TABLE_NAME: !Ref Table
        SHARED: global
Resources:
  Table: {Type: AWS::DynamoDB::Table, Properties: {}}
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: sm.asl.json
      DefinitionSubstitutions:
        FnArn: !GetAtt Fn.Arn
        Table: {Ref: Table}
        Arn: !Sub "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:x:${Machine.Name}"
  Fn:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: go1.x
    Properties:
      CodeUri: functions/fn/
      Timeout: 30
      ReservedConcurrentExecutions: 0
      MemorySize: 1024
      Architectures: [x86_64]
      Environment:
        Variables:
          SHARED: own
          WINDOW: !Ref Window
          LONG: {"Fn::GetAtt": [Machine, Name]}
      Events:
        Post: {Type: Api, Properties: {Path: "/things/{id}", Method: POST}}
        Rule:
          Type: EventBridgeRule
          Properties:
            Pattern:
              source: [aws.states]
              detail:
                status: [FAILED, TIMED_OUT]
                stateMachineArn: [!Ref Machine]
        Sweep: {Type: Schedule, Properties: {Schedule: rate(5 minutes)}}
  Other: {Type: AWS::Serverless::Function, Properties: {CodeUri: functions/other/}}
`
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Region: "us-east-1", AccountID: "000000000000", Parameters: map[string]string{}}
	fns, err := tmpl.Functions(env, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 2 || fns[0].LogicalID != "Fn" || fns[1].LogicalID != "Other" {
		t.Fatalf("functions = %+v", fns)
	}
	fn := fns[0]
	wantEnv := map[string]string{"TABLE_NAME": "ref:Table", "SHARED": "own", "WINDOW": "10s", "LONG": "att:Machine.Name"}
	if !reflect.DeepEqual(fn.Environment, wantEnv) {
		t.Errorf("environment = %v, want %v", fn.Environment, wantEnv)
	}
	if fn.Timeout != 30*time.Second || fns[1].Timeout != 7*time.Second || fn.CodeURI != "functions/fn/" {
		t.Errorf("timeouts %s %s, code %s", fn.Timeout, fns[1].Timeout, fn.CodeURI)
	}
	other := fns[1]
	if fn.MemorySize != 1024 || other.MemorySize != 256 || fn.BuildMethod != "go1.x" || other.BuildMethod != "" ||
		!reflect.DeepEqual(fn.Architectures, []string{"x86_64"}) || !reflect.DeepEqual(other.Architectures, []string{"arm64"}) ||
		fn.Runtime != "provided.al2023" || other.Handler != "bootstrap" || fn.LogFormat != "JSON" {
		t.Errorf("properties: %+v / %+v", fn, other)
	}
	if fn.ReservedConcurrentExecutions == nil || *fn.ReservedConcurrentExecutions != 0 ||
		other.ReservedConcurrentExecutions == nil || *other.ReservedConcurrentExecutions != 5 {
		t.Errorf("reserved concurrency: own %v, from Globals %v; want 0 and 5", fn.ReservedConcurrentExecutions, other.ReservedConcurrentExecutions)
	}
	if len(fn.Events) != 3 {
		t.Fatalf("events = %+v", fn.Events)
	}
	post, rule, sweep := fn.Events[0], fn.Events[1], fn.Events[2]
	if post.Type != EventAPI || post.Path != "/things/{id}" || post.Method != "POST" {
		t.Errorf("api event = %+v", post)
	}
	wantPattern := map[string]any{"source": []any{"aws.states"}, "detail": map[string]any{"status": []any{"FAILED", "TIMED_OUT"}, "stateMachineArn": []any{"ref:Machine"}}}
	if rule.Type != EventEventBridgeRule || !reflect.DeepEqual(rule.Pattern, wantPattern) {
		t.Errorf("rule = %+v", rule)
	}
	if sweep.Type != EventSchedule || sweep.Schedule != "rate(5 minutes)" {
		t.Errorf("schedule = %+v", sweep)
	}
	sms, err := tmpl.StateMachines(env, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	wantSubs := map[string]string{"FnArn": "att:Fn.Arn", "Table": "ref:Table", "Arn": "arn:aws:states:us-east-1:000000000000:x:att:Machine.Name"}
	if len(sms) != 1 || sms[0].DefinitionURI != "sm.asl.json" || sms[0].Type != "STANDARD" || !reflect.DeepEqual(sms[0].Substitutions, wantSubs) {
		t.Errorf("state machines = %+v", sms)
	}
}

func TestUnknownRefIsAnError(t *testing.T) {
	tmpl, err := Parse([]byte("Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Environment: {Variables: {X: !Ref Nope}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Functions(Env{}, fakeResolver{}); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("err = %v, want it to name Nope", err)
	}
}

func TestReservedConcurrentExecutions(t *testing.T) {
	tests := []struct {
		name, props string
		want        *int
		err         string
	}{
		{name: "unset", props: "{}"},
		{name: "plain", props: "{ReservedConcurrentExecutions: 3}", want: aws.Int(3)},
		{name: "negative", props: "{ReservedConcurrentExecutions: -1}", err: `F.ReservedConcurrentExecutions: "-1" is not an integer >= 0`},
		{name: "not a number", props: "{ReservedConcurrentExecutions: many}", err: `F.ReservedConcurrentExecutions: "many" is not an integer >= 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse([]byte("Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties: " + tt.props + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			fns, err := tmpl.Functions(Env{}, fakeResolver{})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fns[0].ReservedConcurrentExecutions; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reserved = %v, want %v", got, tt.want)
			}
		})
	}
}
