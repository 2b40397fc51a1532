// Package eventbus is the local stack's Amazon EventBridge: it serves PutEvents on the JSON 1.1 protocol the AWS SDKs
// speak (POST / with X-Amz-Target: AWSEvents.PutEvents), with EventBridge's validation and error shapes, routes each
// event to the rules of its bus (patterns matched by localaws/eventpattern) and keeps what the rules' CloudWatch Logs
// targets receive: the recent events of each log group in memory, bounded, and appended to a file when a data
// directory is set, so that they survive a restart. The same address serves CloudWatch Logs' FilterLogEvents
// (X-Amz-Target: Logs_20140328.FilterLogEvents) over those log groups, so a reader such as `transferctl events tail`
// has one code path for the local stack and AWS. Only the stack's own user reads them (see readers.go): the API's
// callers are refused, as they hold no IAM rights on a log group on AWS.
package eventbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/internal/awsjson"
)

// Wire error codes, as EventBridge and CloudWatch Logs name them.
const (
	codeValidation        = "ValidationException"
	codeSerialization     = "SerializationException"
	codeUnknownOperation  = "UnknownOperationException"
	codeInternal          = "InternalException"
	codeResourceNotFound  = "ResourceNotFoundException"
	codeInvalidParameter  = "InvalidParameterException"
	codeInvalidArgument   = "InvalidArgument"
	codeMalformedDetail   = "MalformedDetail"
	codeEntryTooLarge     = "EntrySizeLimitExceeded"
	codeRequestTooLarge   = "RequestEntityTooLarge"
	codeAccessDenied      = "AccessDeniedException"
	codeIncompleteSig     = "IncompleteSignatureException"
	msgEntriesRequired    = "1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null"
	msgEntriesTooFew      = "1 validation error detected: Value '[]' at 'entries' failed to satisfy constraint: Member must have length greater than or equal to 1"
	msgEntriesTooMany     = "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to 10"
	msgLogGroupNotFound   = "The specified log group does not exist."
	msgSourceRequired     = "Parameter Source is not valid. Reason: Source is a required argument."
	msgDetailTypeRequired = "Parameter DetailType is not valid. Reason: DetailType is a required argument."
	msgDetailRequired     = "Parameter Detail is not valid. Reason: Detail is a required argument."
	msgMalformedDetail    = "Detail is malformed."
	msgEntryTooLarge      = "The entry size exceeds the limit of 256 KB."
	msgEventBusNotFound   = "Event bus %s does not exist."
	msgUnknownOperation   = "operation %q is not served by the local EventBridge"
	msgSerialization      = "the request body is not the JSON object of %s: %v"
	msgLimitTooLarge      = "1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 10000"
	msgUnsupportedFilter  = "the local stack supports filter patterns of plain terms only, not %q"
	msgAccessDenied       = "User: %s is not authorized to perform: logs:FilterLogEvents on resource: arn:aws:logs:%s:%s:log-group:%s:log-stream: because no identity-based policy allows the logs:FilterLogEvents action"
	msgNoCredential       = "Authorization header requires 'Credential' parameter."
	targetPutEvents       = "AWSEvents.PutEvents"
	targetFilterLogEvents = "Logs_20140328.FilterLogEvents"
	contentTypeJSON11     = "application/x-amz-json-1.1"
	maxEntries            = 10
	maxEntryBytes         = 256 << 10
	maxRequestBytes       = 1 << 20
	defaultMaxEvents      = 10000
	maxFilterLimit        = 10000
	defaultEventBusName   = "default"
)

// apiError is an error answered with {"__type","message"}, HTTP 400 unless Status says otherwise.
type apiError = awsjson.Error

var errorf = awsjson.Errorf

// Rule is an EventBridge rule of the template: the events of its bus that match its pattern go to its log groups.
type Rule struct {
	// Name is the rule's name (locally, its logical id).
	Name string
	// EventBusName is the bus the rule is on.
	EventBusName string
	// Pattern selects the events.
	Pattern *eventpattern.Pattern
	// LogGroups are the names of the CloudWatch Logs log groups the rule targets.
	LogGroups []string
}

// Options configure a Server.
type Options struct {
	Region    string
	AccountID string
	// Buses are the event buses besides "default", by name.
	Buses []string
	Rules []Rule
	// DataDir, when set, is where each log group's events are appended (one JSON line an event) and read back at start.
	DataDir string
	// MaxEvents bounds the events each log group keeps in memory, the oldest going first (default 10,000); a restart
	// keeps as many from the file.
	MaxEvents int
	Now       func() time.Time
	NewID     func() string
	Logger    *slog.Logger
}

// Server is the local EventBridge and the CloudWatch Logs reader of its log-group targets. It is an http.Handler.
type Server struct {
	opts   Options
	buses  map[string]bool
	ops    map[string]opFunc
	mu     sync.Mutex
	groups map[string]*logGroup
	faults []*Fault
}

// opFunc is one operation: it reads the request body and returns the response value or an error to answer.
type opFunc func(ctx context.Context, body []byte) (any, error)

// New builds a server over the buses and rules of opts, reading back the events kept in opts.DataDir. Close releases
// the files.
func New(opts Options) (*Server, error) {
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = defaultMaxEvents
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if opts.NewID == nil {
		return nil, errors.New("eventbus: Options.NewID is required")
	}
	s := &Server{opts: opts, buses: map[string]bool{defaultEventBusName: true}, groups: map[string]*logGroup{}}
	for _, b := range opts.Buses {
		s.buses[b] = true
	}
	for _, r := range opts.Rules {
		if !s.buses[r.EventBusName] {
			return nil, fmt.Errorf("eventbus: rule %s is on bus %q, which is not declared", r.Name, r.EventBusName)
		}
		for _, g := range r.LogGroups {
			if _, ok := s.groups[g]; ok {
				continue
			}
			lg, err := openLogGroup(opts.DataDir, g, opts.MaxEvents)
			if err != nil {
				_ = s.Close()
				return nil, err
			}
			s.groups[g] = lg
		}
	}
	s.ops = map[string]opFunc{
		targetPutEvents:       s.putEvents,
		targetFilterLogEvents: s.filterLogEvents,
	}
	return s, nil
}

// Close closes the log groups' files.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, g := range s.groups {
		errs = append(errs, g.close())
	}
	return errors.Join(errs...)
}

// ServeHTTP answers POST / by X-Amz-Target.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, &apiError{Code: codeUnknownOperation, Message: "only POST / is served", Status: http.StatusMethodNotAllowed})
		return
	}
	target := r.Header.Get("X-Amz-Target")
	op, ok := s.ops[target]
	if !ok {
		writeError(w, errorf(codeUnknownOperation, msgUnknownOperation, target))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		writeError(w, errorf(codeSerialization, "reading the request: %v", err))
		return
	}
	if len(body) > maxRequestBytes {
		writeError(w, &apiError{Code: codeRequestTooLarge, Message: "the request is larger than 1 MB", Status: http.StatusRequestEntityTooLarge})
		return
	}
	var who claimed
	who.arn, who.err = principal(r, s.opts.AccountID)
	out, err := op(context.WithValue(r.Context(), principalKey{}, who), body)
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeError(w, &apiError{Code: codeInternal, Message: "encoding the response", Status: http.StatusInternalServerError})
		return
	}
	w.Header().Set("Content-Type", contentTypeJSON11)
	w.Header().Set("X-Amzn-RequestId", s.opts.NewID())
	_, _ = w.Write(b)
}

// writeError answers err as the JSON protocols do: {"__type","message"} with the code also in X-Amzn-ErrorType.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{Code: codeInternal, Message: "internal error", Status: http.StatusInternalServerError}
	}
	awsjson.Write(w, contentTypeJSON11, ae)
}

// decode reads a JSON object request body into v.
func decode(body []byte, v any, what string) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errorf(codeSerialization, msgSerialization, what, err)
	}
	return nil
}
