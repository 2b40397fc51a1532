// Package sfnengine is a local AWS Step Functions engine: it keeps state machines and executions and runs Amazon
// States Language definitions (package asl) with the semantics of AWS Step Functions standard workflows.
//
// The engine runs each execution in its own goroutine; Task calls run on it too, except those of a Task with
// TimeoutSeconds, which get a goroutine of their own so that the timeout need not wait for them. The parsed
// definition is shared and never modified; all run-time state (retry counters, the history and its event ids) lives
// on the execution. Each state machine is compiled once, on its first execution, into a program that every
// execution shares: paths parsed, Parameters/ResultSelector/ItemSelector templates and Choice rules compiled, Task
// resources resolved. Time comes from an injected Clock and ids from an injected function, so tests need no
// sleeping.
//
// Task integrations: arn:aws:states:::lambda:invoke (and plain Lambda function ARNs) call a LambdaInvoker;
// arn:aws:states:::dynamodb:putItem|getItem|updateItem|deleteItem call DynamoDB through the aws-sdk-go-v2 client
// given in Options. Status changes are published as EventBridge "Step Functions Execution Status Change" events
// to the subscribers given in Options. With Options.MockConfig (Step Functions Local's mock configuration file,
// package sfnmock), an execution started with the state machine ARN <arn>#<TestCase> gets that test case's mocked
// responses instead of calling the services of the Task states it names (mock.go).
//
// A running execution keeps its history as JSON lines. Once it is closed and saved, the Store (MemoryStore, or
// FileStore with one append-only log per execution) holds its record and the engine only a summary; the
// HistoryRetention and MaxClosedExecutions options bound how many closed executions are kept, and for how long.
package sfnengine
