package sfnengine_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnengine/instantaws"
)

// tenStates is a 10-state Pass/Choice workflow.
const tenStates = `{
  "StartAt": "S1",
  "States": {
    "S1": {"Type": "Pass", "Result": {"n": 3, "kind": "b"}, "ResultPath": "$.r", "Next": "C1"},
    "C1": {"Type": "Choice", "Choices": [{"Variable": "$.r.n", "NumericGreaterThan": 2, "Next": "S2"}], "Default": "Fail"},
    "S2": {"Type": "Pass", "Parameters": {"n.$": "$.r.n", "msg.$": "States.Format('n={}', $.r.n)"}, "ResultPath": "$.p", "Next": "C2"},
    "C2": {"Type": "Choice", "Choices": [
      {"And": [{"Variable": "$.r.kind", "StringEquals": "b"}, {"Variable": "$.p.msg", "IsPresent": true}], "Next": "S3"}
    ], "Default": "Fail"},
    "S3": {"Type": "Pass", "InputPath": "$.p", "ResultPath": "$.q", "Next": "C3"},
    "C3": {"Type": "Choice", "Choices": [{"Variable": "$.q.n", "NumericEquals": 3, "Next": "S4"}], "Default": "Fail"},
    "S4": {"Type": "Pass", "OutputPath": "$.q", "Next": "C4"},
    "C4": {"Type": "Choice", "Choices": [{"Not": {"Variable": "$.msg", "StringEquals": "x"}, "Next": "Done"}], "Default": "Fail"},
    "Fail": {"Type": "Fail", "Error": "Unexpected"},
    "Done": {"Type": "Succeed"}
  }
}`

// transferDefinition returns statemachine/transfer.asl.json when the module has it, else the equivalent saga in
// testdata, with every ${Name} substituted by Name.
func transferDefinition(b testing.TB) (string, string) {
	b.Helper()
	path := filepath.Join("..", "..", "statemachine", "transfer.asl.json")
	data, err := os.ReadFile(path)
	if err != nil {
		path = filepath.Join("testdata", "saga.asl.json")
		if data, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
	subs := map[string]string{}
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`).FindAllStringSubmatch(string(data), -1) {
		subs[m[1]] = m[1]
	}
	return path, sfnengine.SubstituteDefinition(string(data), subs)
}

const transferInput = `{"id":"t1","transferId":"t1","sourceAccountId":"a","destinationAccountId":"b","amount":5,"currency":"EUR","reference":"","createdAt":"2026-11-23T10:00:00Z","recordKey":"TRANSFER#t1","authority":"owner:test"}`

func benchmarkExecutions(b *testing.B, eng *sfnengine.Engine, def, input string) {
	ctx := context.Background()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "bench", Definition: def, RoleArn: testRoleArn})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Input: input})
		if err != nil {
			b.Fatal(err)
		}
		rec, err = eng.Wait(ctx, rec.Arn)
		if err != nil {
			b.Fatal(err)
		}
		if rec.Status != sfnengine.StatusSucceeded {
			b.Fatalf("status %s: %v %v", rec.Status, rec.Error, rec.Cause)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "executions/s")
}

// BenchmarkPassChoice10 runs the 10-state Pass/Choice workflow end to end, one execution at a time.
func BenchmarkPassChoice10(b *testing.B) {
	eng := sfnengine.New(sfnengine.Options{})
	defer eng.Close()
	benchmarkExecutions(b, eng, tenStates, `{"x":1}`)
}

// BenchmarkTransfer runs the transfer workflow with instant Lambda and DynamoDB integrations.
func BenchmarkTransfer(b *testing.B) {
	path, def := transferDefinition(b)
	b.Logf("definition: %s", path)
	eng := sfnengine.New(sfnengine.Options{Lambda: instantaws.Lambda{}, DynamoDB: instantaws.DynamoDB{}, EventBridge: instantaws.EventBridge{}})
	defer eng.Close()
	benchmarkExecutions(b, eng, def, transferInput)
}

// mapJSONata1000 is a JSONata Map of 1,000 iterations at MaxConcurrency 0, each evaluating an expression over its
// item: how well concurrent iterations' evaluations share the machine.
const mapJSONata1000 = `{"QueryLanguage":"JSONata","StartAt":"Map","States":{
  "Map":{"Type":"Map","MaxConcurrency":0,
    "Items":"{% $map([1..1000], function($i){ {'name': 'item' & $i, 'n': $i} }) %}",
    "ItemProcessor":{"StartAt":"Item","States":{
      "Item":{"Type":"Pass","End":true,
        "Output":"{% $uppercase($states.input.name) & '=' & $string($sum($map([1..20], function($v){ $v * $states.input.n }))) %}"}}},
    "Output":"{% $count($states.result) %}",
    "End":true}}}`

// BenchmarkMapJSONata1000 runs a JSONata Map of 1,000 iterations, each evaluating an expression, one execution at
// a time.
func BenchmarkMapJSONata1000(b *testing.B) {
	eng := sfnengine.New(sfnengine.Options{})
	defer eng.Close()
	benchmarkExecutions(b, eng, mapJSONata1000, `{}`)
}
