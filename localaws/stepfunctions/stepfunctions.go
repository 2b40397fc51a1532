// Package stepfunctions runs a local AWS Step Functions for Go tests and programs: the engine of package sfnengine
// behind the Step Functions JSON 1.0 API of package sfnapi, which the unchanged aws-sdk-go-v2 sfn client (or any
// other SDK, or the AWS CLI) talks to. Lambda functions are Go handlers registered with WithLambda and run
// in-process as the Lambda Go runtime runs them, so a state machine's Task, Retry, Catch and Choice states can be
// tested against the handlers that are deployed.
//
// In a test, RunT starts a server on a free port of the loopback interface and stops it when the test ends:
//
//	func TestGreeter(t *testing.T) {
//		greet := func(ctx context.Context, in struct{ Name string }) (string, error) { return "Hello, " + in.Name, nil }
//		srv := stepfunctions.RunT(t, stepfunctions.WithLambda("Greet", greet))
//		ctx := t.Context()
//		c := srv.Client()
//		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
//			Name:    aws.String("Greeter"),
//			RoleArn: aws.String("arn:aws:iam::123456789012:role/Greeter"),
//			Definition: aws.String(`{"StartAt": "Greet", "States": {"Greet": {"Type": "Task",
//				"Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "Greet", "Payload.$": "$"},
//				"OutputPath": "$.Payload", "End": true}}}`),
//		})
//		if err != nil {
//			t.Fatal(err)
//		}
//		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"Name":"Ada"}`)})
//		if err != nil {
//			t.Fatal(err)
//		}
//		rec, err := srv.Engine().Wait(ctx, aws.ToString(x.ExecutionArn)) // until the execution closes
//		if err != nil || rec.Status != "SUCCEEDED" || aws.ToString(rec.Output) != `"Hello, Ada"` {
//			t.Fatalf("%+v, %v", rec, err)
//		}
//	}
//
// WithClock gives the engine an sfnengine.ManualClock, so that Wait states, retry back-offs and timeouts pass when
// the test advances it, not in real time. WithMockConfig runs Step Functions Local's mock configuration files
// (package sfnmock): an execution started with <state machine ARN>#<TestCase> gets mocked service responses. WithEngineOptions passes anything else to the engine: a persistent Store,
// DynamoDB, EventBridge, SQS and SNS clients for those integrations, status-change subscribers, the region and
// account of the ARNs.
//
// Outside tests, Run starts the same server and Close stops it. New builds the engine and its API without a
// listener, for a program that serves Handler on an http.Server of its own, as the local stack (cmd/local) does.
package stepfunctions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/lambdahost"
	"github.com/transferflow/orchestrator/localaws/sfnapi"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnmock"
)

// The region and account of the ARNs when the engine options name none, as in sfnengine.
const (
	defaultRegion  = "us-east-1"
	defaultAccount = "123456789012"
)

// Option configures a Server.
type Option func(*config)

// config is what the options set.
type config struct {
	engine  sfnengine.Options
	clock   sfnengine.Clock
	mock    *sfnmock.Config
	lambdas []lambdahost.Function
}

// WithEngineOptions sets the engine's options (see sfnengine.Options), for what the other options do not cover.
// WithClock and WithLambda apply on top of them, whatever the order; a Lambda function that no WithLambda registers
// is invoked through o.Lambda when it is set.
func WithEngineOptions(o sfnengine.Options) Option {
	return func(c *config) { c.engine = o }
}

// WithClock makes the engine read the time from clock. With an sfnengine.ManualClock, Wait states, retry back-offs
// and timeouts pass only when the test calls its Advance (its Waiters method tells when the engine waits).
func WithClock(clock sfnengine.Clock) Option {
	return func(c *config) { c.clock = clock }
}

// WithMockConfig gives the engine Step Functions Local's mocked service integrations, a mock configuration file
// read by sfnmock.Load (or sfnmock.Parse): StartExecution or StartSyncExecution with the state machine ARN
// <arn>#<TestCase> runs that test case, whose mocked Task states get their mocked responses instead of calling their
// services. It applies on top of WithEngineOptions, whatever the order.
func WithMockConfig(cfg *sfnmock.Config) Option {
	return func(c *config) { c.mock = cfg }
}

// WithLambda registers handler as the Lambda function name, which a Task state calls by name, full ARN (with or
// without a version or alias) or partial ARN. handler is what lambda.Start takes, a function such as
// func(context.Context, In) (Out, error) or a lambda.Handler; a func(context.Context, []byte) ([]byte, error) gets
// the payload and returns the result as raw JSON. An invocation runs as the Lambda Go runtime runs one: a Lambda
// context with a request id, a deadline of 3 seconds (Lambda's default timeout), and a returned error or a panic
// named by its Go type, so that an ASL ErrorEquals ["InsufficientFunds"] catches a *InsufficientFunds. A function
// that is not registered fails with Lambda.ResourceNotFoundException. WithLambda panics when handler is not a
// function.
func WithLambda(name string, handler any) Option {
	switch h := handler.(type) {
	case func(context.Context, []byte) ([]byte, error):
		handler = rawHandler(h)
	case lambda.Handler:
	default:
		if handler == nil || reflect.TypeOf(handler).Kind() != reflect.Func {
			panic(fmt.Sprintf("stepfunctions: WithLambda(%q): the handler is %T, not a function", name, handler))
		}
	}
	return func(c *config) {
		c.lambdas = append(c.lambdas, lambdahost.Function{Name: name, NewHandler: func() lambda.Handler { return lambda.NewHandler(handler) }})
	}
}

// rawHandler is a lambda.Handler that passes the payload and the result through as JSON text.
type rawHandler func(ctx context.Context, payload []byte) ([]byte, error)

// Invoke calls the function.
func (h rawHandler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return h(ctx, payload)
}

// invoker runs the WithLambda functions, and the others through next when it is set.
type invoker struct {
	own  *lambdahost.Invoker
	next sfnengine.LambdaInvoker
}

// Invoke runs the function called name.
func (inv invoker) Invoke(ctx context.Context, name string, payload []byte) ([]byte, error) {
	out, err := inv.own.Invoke(ctx, name, payload)
	var se *sfnengine.ServiceError
	if inv.next != nil && errors.As(err, &se) && se.Name == "Lambda.ResourceNotFoundException" {
		return inv.next.Invoke(ctx, name, payload)
	}
	return out, err
}

// Server is a Step Functions engine and the Step Functions API over it, served on a local port when it was started
// by Run or RunT.
type Server struct {
	eng     *sfnengine.Engine
	api     *sfnapi.Server
	lambdas *lambdahost.Invoker // nil without WithLambda
	region  string
	hs      *httptest.Server // nil for a Server made by New
}

// New builds the engine and the API with opts, without serving them: the caller serves Handler and calls Close
// once it no longer does.
func New(opts ...Option) *Server {
	var c config
	for _, o := range opts {
		o(&c)
	}
	eo := c.engine
	if c.clock != nil {
		eo.Clock = c.clock
	}
	if c.mock != nil {
		eo.MockConfig = c.mock
	}
	s := &Server{region: eo.Region}
	if s.region == "" {
		s.region = defaultRegion
	}
	if len(c.lambdas) > 0 {
		account := eo.AccountID
		if account == "" {
			account = defaultAccount
		}
		logger := eo.Logger
		if logger == nil {
			logger = slog.New(slog.DiscardHandler)
		}
		s.lambdas = lambdahost.New(s.region, account, sfnengine.NewUUID, logger, c.lambdas...)
		eo.Lambda = invoker{own: s.lambdas, next: eo.Lambda}
	}
	s.eng = sfnengine.New(eo)
	s.api = sfnapi.New(s.eng, eo.Logger)
	return s
}

// Run builds a Server as New does and serves it on a free port of the loopback interface, until Close.
func Run(opts ...Option) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if ln, err = net.Listen("tcp6", "[::1]:0"); err != nil {
			return nil, fmt.Errorf("listen for the step functions api: %w", err)
		}
	}
	s := New(opts...)
	s.hs = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.api}}
	s.hs.Start()
	return s, nil
}

// RunT starts a Server as Run does, fails the test if it cannot, and closes the server when the test ends
// (t.Cleanup).
func RunT(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Run(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Handler returns the Step Functions API (POST / with X-Amz-Target: AWSStepFunctions.<Operation>).
func (s *Server) Handler() http.Handler { return s.api }

// URL returns the endpoint of a Server started by Run or RunT, such as http://127.0.0.1:40321, for an SDK's
// BaseEndpoint, AWS_ENDPOINT_URL_SFN or the AWS CLI's --endpoint-url. It is empty for a Server made by New.
func (s *Server) URL() string {
	if s.hs == nil {
		return ""
	}
	return s.hs.URL
}

// Client returns an aws-sdk-go-v2 Step Functions client of a Server started by Run or RunT: its endpoint, the
// engine's region, static credentials and sfnapi.WithoutHostPrefix, then optFns. It panics for a Server made by New,
// whose endpoint only its caller knows.
func (s *Server) Client(optFns ...func(*sfn.Options)) *sfn.Client {
	if s.hs == nil {
		panic("stepfunctions: Client needs a Server started by Run or RunT")
	}
	return sfn.New(sfn.Options{
		Region:       s.region,
		BaseEndpoint: aws.String(s.hs.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	}, append([]func(*sfn.Options){sfnapi.WithoutHostPrefix}, optFns...)...)
}

// Engine returns the engine behind the API, for what the API does not offer: Wait blocks until an execution
// closes, Restore reloads a persistent Store, Subscribe adds a status-change subscriber.
func (s *Server) Engine() *sfnengine.Engine { return s.eng }

// Close stops serving (when Run started the Server, after the requests in flight), then stops the engine, which
// interrupts the running executions, and the Lambda functions' goroutines.
func (s *Server) Close() {
	if s.hs != nil {
		s.hs.Close()
	}
	s.eng.Close()
	if s.lambdas != nil {
		s.lambdas.Close()
	}
}
