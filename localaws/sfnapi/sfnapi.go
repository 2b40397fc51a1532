// Package sfnapi serves the AWS Step Functions JSON 1.0 API (POST / with X-Amz-Target: AWSStepFunctions.<Op>) on
// top of the sfnengine engine, so the AWS SDKs and the AWS CLI can use it through an endpoint URL. Request and
// response shapes and error types follow the real service.
package sfnapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/internal/awsjson"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Wire error types, as the Step Functions API names them.
const (
	codeExecutionAlreadyExists    = "ExecutionAlreadyExists"
	codeExecutionDoesNotExist     = "ExecutionDoesNotExist"
	codeStateMachineDoesNotExist  = "StateMachineDoesNotExist"
	codeStateMachineAlreadyExists = "StateMachineAlreadyExists"
	codeInvalidArn                = "InvalidArn"
	codeInvalidName               = "InvalidName"
	codeInvalidDefinition         = "InvalidDefinition"
	codeInvalidExecutionInput     = "InvalidExecutionInput"
	codeInvalidToken              = "InvalidToken"
	codeTypeNotSupported          = "StateMachineTypeNotSupported"
	codeExecutionNotRedrivable    = "ExecutionNotRedrivable"
	codeResourceNotFound          = "ResourceNotFound"
	codeValidation                = "ValidationException"
	codeSerialization             = "SerializationException"
	codeUnknownOperation          = "UnknownOperationException"
	codeMissingUpdate             = "MissingRequiredParameter"
	codeInternal                  = "InternalFailure"
	// codeRequestTooLarge answers a body over MaxRequestBytes, with HTTP 413. It is the local API's own: AWS
	// refuses requests over its 1 MB quota, with an answer that is not recorded.
	codeRequestTooLarge = "RequestEntityTooLarge"
)

const targetPrefix = "AWSStepFunctions."

// apiError is an error answered with HTTP 400 (or 500 for internal failures) and {"__type","message"}.
type apiError = awsjson.Error

var errorf = awsjson.Errorf

type opFunc func(ctx context.Context, body json.RawMessage) (any, error)

// Server is the HTTP handler of the Step Functions API.
type Server struct {
	eng    *sfnengine.Engine
	logger *slog.Logger
	ops    map[string]opFunc
}

// New returns a Server serving eng. A nil logger discards messages.
func New(eng *sfnengine.Engine, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{eng: eng, logger: logger}
	s.ops = map[string]opFunc{
		"CreateStateMachine":               s.createStateMachine,
		"DescribeStateMachine":             s.describeStateMachine,
		"ListStateMachines":                s.listStateMachines,
		"DeleteStateMachine":               s.deleteStateMachine,
		"UpdateStateMachine":               s.updateStateMachine,
		"ValidateStateMachineDefinition":   s.validateDefinition,
		"StartExecution":                   s.startExecution,
		"StartSyncExecution":               s.startSyncExecution,
		"TestState":                        s.testState,
		"DescribeExecution":                s.describeExecution,
		"DescribeStateMachineForExecution": s.describeStateMachineForExecution,
		"ListExecutions":                   s.listExecutions,
		"StopExecution":                    s.stopExecution,
		"GetExecutionHistory":              s.getExecutionHistory,
		"RedriveExecution":                 s.redriveExecution,
		"ListMapRuns":                      s.listMapRuns,
		"DescribeMapRun":                   s.describeMapRun,
		"UpdateMapRun":                     s.updateMapRun,
		"SendTaskSuccess":                  s.sendTaskSuccess,
		"SendTaskFailure":                  s.sendTaskFailure,
		"SendTaskHeartbeat":                s.sendTaskHeartbeat,
		"CreateActivity":                   s.createActivity,
		"DescribeActivity":                 s.describeActivity,
		"ListActivities":                   s.listActivities,
		"DeleteActivity":                   s.deleteActivity,
		"GetActivityTask":                  s.getActivityTask,
		"TagResource":                      s.tagResource,
		"UntagResource":                    s.untagResource,
		"ListTagsForResource":              s.listTagsForResource,
		"PublishStateMachineVersion":       s.publishStateMachineVersion,
		"ListStateMachineVersions":         s.listStateMachineVersions,
		"DeleteStateMachineVersion":        s.deleteStateMachineVersion,
		"CreateStateMachineAlias":          s.createStateMachineAlias,
		"DescribeStateMachineAlias":        s.describeStateMachineAlias,
		"UpdateStateMachineAlias":          s.updateStateMachineAlias,
		"DeleteStateMachineAlias":          s.deleteStateMachineAlias,
		"ListStateMachineAliases":          s.listStateMachineAliases,
	}
	return s
}

// ServeHTTP dispatches on X-Amz-Target and writes the JSON answer or the error.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.write(w, nil, errorf(codeUnknownOperation, "only POST is supported"))
		return
	}
	target := r.Header.Get("X-Amz-Target")
	op, ok := s.ops[strings.TrimPrefix(target, targetPrefix)]
	if !ok || !strings.HasPrefix(target, targetPrefix) {
		s.write(w, nil, errorf(codeUnknownOperation, "operation %q is not supported", target))
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		s.write(w, nil, err)
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if !json.Valid(body) {
		s.write(w, nil, errorf(codeSerialization, "the request body is not valid JSON"))
		return
	}
	if err := validate(strings.TrimPrefix(target, targetPrefix), body); err != nil {
		s.write(w, nil, err)
		return
	}
	if d := s.holdFor(strings.TrimPrefix(target, targetPrefix)); d > 0 {
		// Runs longer than the server's write timeout may allow (localaws/stack): the deadline is extended for it.
		// An error means w is not a connection net/http serves (a test recorder), with no deadline to extend.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d + answerMargin))
	}
	out, err := op(r.Context(), body)
	s.write(w, out, err)
}

// holdFor returns how long the operation may run before it answers, for the operations that may run longer than a
// server's write timeout, and 0 for the others, which answer from memory: StartSyncExecution and TestState answer
// when an execution (or a tested state) ends, up to sfnengine.ExpressMaxDuration later; GetActivityTask holds an idle
// poll for the engine's ActivityPoll (60 s, as AWS) before it answers an empty task.
func (s *Server) holdFor(op string) time.Duration {
	switch op {
	case "StartSyncExecution", "TestState":
		return sfnengine.ExpressMaxDuration
	case "GetActivityTask":
		return s.eng.ActivityPoll()
	}
	return 0
}

// answerMargin is how much longer than its hold a long operation's write deadline is, for the answer to be written.
const answerMargin = time.Minute

// readBody reads the request body, at most MaxRequestBytes of it: a larger body (by its Content-Length, or once
// that much has been read) is refused with HTTP 413 without reading the rest, and the connection is closed.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxRequestBytes {
		return nil, tooLarge()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge()
	}
	if err != nil {
		return nil, errorf(codeSerialization, "cannot read the request body")
	}
	return body, nil
}

func tooLarge() *apiError {
	return &apiError{Code: codeRequestTooLarge, Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
		"The request body exceeds %d bytes, the most the local Step Functions API reads (a definition may have %d characters, an execution input %d bytes)",
		MaxRequestBytes, MaxDefinitionLength, MaxInputBytes)}
}

func (s *Server) write(w http.ResponseWriter, out any, err error) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-RequestId", sfnengine.NewUUID())
	if err != nil {
		ae := toAPIError(err)
		if ae.Status >= 500 {
			s.logger.Error("step functions api", "error", err)
		}
		awsjson.Write(w, "application/x-amz-json-1.0", ae)
		return
	}
	if out == nil {
		out = struct{}{}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// toAPIError maps engine errors to wire errors.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var de *sfnengine.DefinitionError
	if errors.As(err, &de) {
		var msgs []string
		for _, e := range asl.Errors(de.Err) {
			msgs = append(msgs, e.Error())
		}
		if len(msgs) == 0 {
			msgs = []string{de.Err.Error()}
		}
		return errorf(codeInvalidDefinition, "Invalid State Machine Definition: '%s'", strings.Join(msgs, ", "))
	}
	for _, m := range wireErrors {
		if errors.Is(err, m.target) {
			subj := subject(err, m.target)
			var ae *apiError
			if strings.Contains(m.format, "%s") {
				ae = errorf(m.code, m.format, subj)
			} else {
				ae = errorf(m.code, "%s", m.format)
			}
			if fields := wireFields[m.target]; fields != nil {
				ae.Fields = fields(subj)
			}
			return ae
		}
	}
	return &apiError{Code: codeInternal, Message: "internal failure", Status: http.StatusInternalServerError}
}

// wireError maps one of the engine's sentinel errors, target, to the API's error type code and AWS's message,
// format, whose one argument is what the error is about (an ARN, a name, the reason an input is not JSON).
type wireError struct {
	target error
	code   string
	format string
}

// wireErrors are the wire errors of the engine's sentinel errors.
var wireErrors = []wireError{
	{sfnengine.ErrInvalidArn, codeInvalidArn, "Invalid Arn: '%s'"},
	{sfnengine.ErrInvalidName, codeInvalidName, "Invalid Name: '%s'"},
	{sfnengine.ErrStateMachineDoesNotExist, codeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'"},
	{sfnengine.ErrStateMachineExists, codeStateMachineAlreadyExists, "State Machine Already Exists: '%s'"},
	{sfnengine.ErrExecutionDoesNotExist, codeExecutionDoesNotExist, "Execution Does Not Exist: '%s'"},
	{sfnengine.ErrExecutionAlreadyExists, codeExecutionAlreadyExists, "Execution Already Exists: '%s'"},
	{sfnengine.ErrInvalidExecutionInput, codeInvalidExecutionInput, "Invalid State Machine Execution Input: '%s'"},
	// AWS's message for ListExecutions of an Express state machine (recorded); StartSyncExecution of a Standard one
	// answers the same type, its message not recorded.
	{sfnengine.ErrTestStateInput, codeValidation, "%s"},
	{sfnengine.ErrStateMachineTypeNotSupported, codeTypeNotSupported, "This operation is not supported by this type of state machine"},
	{sfnengine.ErrExecutionNotRedrivable, codeExecutionNotRedrivable, "%s"},
	{sfnengine.ErrMapRunDoesNotExist, codeResourceNotFound, "Resource Not Found: '%s'"},
	{sfnengine.ErrMapRunNotRunning, codeValidation, "Map Run is not running: '%s'"},
	// AWS documents the type, not the message.
	{sfnengine.ErrDistributedMapArn, codeValidation, "The ARN of a Distributed Map state cannot be started: '%s'"},
	// Step Functions Local's mock test cases (<arn>#<TestCase>): the engine's own message names what is missing.
	{sfnengine.ErrMockTestCase, codeValidation, "%s"},
}

// wireFields gives, for the engine errors whose wire error has members besides __type and message, those members
// from the error's subject.
var wireFields = map[error]func(subject string) map[string]string{}

// subject returns what an engine error wrapping target is about: the engine writes "<target>: <subject>", the
// subject quoted when it is a name or an ARN that may not be one. An ARN that does not start with "arn:" is
// reported as AWS reports it, "Invalid ARN prefix: <arn>".
func subject(err, target error) string {
	s := strings.TrimPrefix(err.Error(), target.Error()+": ")
	if u, uerr := strconv.Unquote(s); uerr == nil {
		s = u
	}
	if target == sfnengine.ErrInvalidArn && !strings.HasPrefix(s, "arn:") && !strings.HasPrefix(s, "Resource type not valid") {
		s = "Invalid ARN prefix: " + s
	}
	return s
}

// epoch renders a time as the API does: seconds since the epoch with milliseconds.
func epoch(t time.Time) json.Number {
	return json.Number(strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64))
}

// putString sets m[key] to v unless v is empty: the API leaves out the optional members that have no value.
func putString(m map[string]any, key, v string) {
	if v != "" {
		m[key] = v
	}
}

// decode reads a request, already checked by validate, into v.
func decode(body json.RawMessage, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return errorf(codeSerialization, "cannot decode the request: %v", err)
	}
	return nil
}
