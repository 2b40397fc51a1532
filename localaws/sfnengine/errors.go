package sfnengine

import (
	"errors"
	"fmt"
)

// Predefined error names of the Amazon States Language.
const (
	ErrNameAll                 = "States.ALL"
	ErrNameHeartbeatTimeout    = "States.HeartbeatTimeout"
	ErrNameTimeout             = "States.Timeout"
	ErrNameTaskFailed          = "States.TaskFailed"
	ErrNamePermissions         = "States.Permissions"
	ErrNameResultPathMatch     = "States.ResultPathMatchFailure"
	ErrNameParameterPathFail   = "States.ParameterPathFailure"
	ErrNameBranchFailed        = "States.BranchFailed"
	ErrNameNoChoiceMatched     = "States.NoChoiceMatched"
	ErrNameIntrinsicFailure    = "States.IntrinsicFailure"
	ErrNameExceedToleratedFail = "States.ExceedToleratedFailureThreshold"
	ErrNameItemReaderFailed    = "States.ItemReaderFailed"
	ErrNameResultWriterFailed  = "States.ResultWriterFailed"
	ErrNameRuntime             = "States.Runtime"
	ErrNameDataLimitExceeded   = "States.DataLimitExceeded"
	ErrNameQueryEvaluation     = "States.QueryEvaluationError"
)

// Sentinel errors of the engine's management operations; sfnapi maps them to the API's error types.
var (
	ErrStateMachineDoesNotExist = errors.New("sfnengine: state machine does not exist")
	ErrStateMachineExists       = errors.New("sfnengine: state machine already exists")
	ErrExecutionDoesNotExist    = errors.New("sfnengine: execution does not exist")
	ErrExecutionAlreadyExists   = errors.New("sfnengine: execution already exists")
	ErrInvalidName              = errors.New("sfnengine: invalid name")
	ErrInvalidArn               = errors.New("sfnengine: invalid arn")
	ErrInvalidExecutionInput    = errors.New("sfnengine: invalid execution input")
	ErrInvalidDefinition        = errors.New("sfnengine: invalid definition")
	// ErrResourceNotFound: a version, an alias or a tagged resource that does not exist.
	ErrResourceNotFound = errors.New("sfnengine: resource not found")
	// ErrTooManyTags: a resource would have more than MaxTags tags.
	ErrTooManyTags = errors.New("sfnengine: too many tags")
	// ErrConflict: a revision that is not the current one, a version an alias routes to, an alias of that name
	// with other settings.
	ErrConflict = errors.New("sfnengine: conflict")
	// ErrQuotaExceeded: more than MaxVersions versions or MaxAliases aliases.
	ErrQuotaExceeded = errors.New("sfnengine: service quota exceeded")
	// ErrInvalidRouting: an alias's routing configuration that is not one or two versions of one state machine
	// with weights summing to 100.
	ErrInvalidRouting = errors.New("sfnengine: invalid routing configuration")
	// ErrDistributedMapArn: StartExecution or StartSyncExecution given the ARN of a Distributed Map state
	// (<state machine>/<label>, a Map Run's stateMachineArn), which cannot be started (AWS: ValidationException).
	ErrDistributedMapArn = errors.New("sfnengine: the ARN of a Distributed Map state cannot be started")
)

// FunctionError is returned by a LambdaInvoker when the function itself failed (Lambda's X-Amz-Function-Error).
// The engine surfaces Type as the task's error name and {"errorMessage":…,"errorType":…} as its cause.
type FunctionError struct {
	Type    string
	Message string
}

// Error returns "Type: Message".
func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// ServiceError is returned by a LambdaInvoker to report a Lambda service error by name, for example
// Lambda.ServiceException, Lambda.TooManyRequestsException or Lambda.ResourceNotFoundException. Name is used
// verbatim as the task's error name.
type ServiceError struct {
	Name    string
	Message string
}

// Error returns "Name: Message".
func (e *ServiceError) Error() string { return e.Name + ": " + e.Message }

// failure is a state or execution failure: an ASL error name and cause.
type failure struct {
	Error string
	Cause string
	// heartbeat marks a heartbeat timeout (States.Timeout that States.HeartbeatTimeout also matches).
	heartbeat bool
}

// String renders "error: cause" for logs.
func (f *failure) String() string { return fmt.Sprintf("%s: %s", f.Error, f.Cause) }

// stopped is the failure a branch of control reports when its context ended (the execution was stopped or timed
// out, or a sibling Parallel branch or Map iteration failed); it is never reported as the execution's error.
var stopped = &failure{Error: ErrNameRuntime, Cause: "execution stopped"}

// dataLimitExceeded is the States.DataLimitExceeded failure of a state whose data is over MaxPayloadBytes; what
// says which data. AWS's cause for a result ("returned a result") is recorded in the conformance corpus
// (test_start_large_input); the others follow its wording.
func dataLimitExceeded(state, what string) *failure {
	return &failure{Error: ErrNameDataLimitExceeded, Cause: fmt.Sprintf(
		"The state/task '%s' %s with a size exceeding the maximum number of bytes service limit.", state, what)}
}

// runtimeFailure is a States.Runtime failure: neither retried nor caught.
func runtimeFailure(cause string) *failure { return &failure{Error: ErrNameRuntime, Cause: cause} }

// DefinitionError wraps the positioned validation problems of a rejected definition.
type DefinitionError struct {
	Err error
}

// Error returns the joined problems.
func (e *DefinitionError) Error() string { return e.Err.Error() }

// Unwrap returns ErrInvalidDefinition and the problems.
func (e *DefinitionError) Unwrap() []error { return []error{ErrInvalidDefinition, e.Err} }
