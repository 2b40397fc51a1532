package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
)

// transferStore is what the orchestrator needs of the store.
type transferStore interface {
	Reserve(ctx context.Context, rec ledger.Transfer, now time.Time) (ledger.Transfer, bool, error)
	GetTransfer(ctx context.Context, scope, transferID string, now time.Time) (ledger.Transfer, error)
	FindTransfer(ctx context.Context, transferID string, now time.Time) (ledger.Transfer, error)
	ClaimRedrive(ctx context.Context, rec ledger.Transfer, now time.Time, window time.Duration) (bool, time.Time, error)
	ReleaseRedrive(ctx context.Context, transferID string, claimedAt time.Time) error
}

// executionStarter starts workflow executions (the Step Functions client satisfies it).
type executionStarter interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, optFns ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
}

// Orchestrator is the API function: it reserves the Idempotency-Key with one conditional write that already carries
// the execution ARN, starts the workflow under a name derived from the transfer, opens accounts, and answers reads.
type Orchestrator struct {
	Store           transferStore
	SFN             executionStarter
	History         historyReader
	Legs            entryLister
	Accounts        accountReader
	Openings        accountOpener
	Owners          ownerAssigner
	Activity        activityLister
	StateMachineArn string
	// Keys derives the key part of record keys and transfer ids from a caller's scope and Idempotency-Key, with
	// the deployment's secret; the zero KeyHasher is the unkeyed hash.
	Keys ledger.KeyHasher
	// TTL is how long a transfer record, and so its Idempotency-Key, lives; 0 keeps it forever.
	TTL time.Duration
	// ReservationWindow is how long after a reservation its duplicates answer 409 instead of re-driving the start.
	ReservationWindow time.Duration
	// MaxTransferAmount is the largest amount a transfer may move (MAX_TRANSFER_AMOUNT); 0 allows up to MaxAmount.
	MaxTransferAmount int64
	// StartTimeout bounds one StartExecution call; it is shorter than ReservationWindow, so once the window has
	// passed the first request has finished or given up on its start.
	StartTimeout time.Duration
	Now          func() time.Time
	Random       io.Reader
	Logger       *slog.Logger
	// Metrics receives one record per request (docs/metrics.md); nil writes none.
	Metrics metricsEmitter
	// HistoryCache keeps the history pages of executions that have ended for good, so re-reading a settled
	// transfer's history does not spend the account's GetExecutionHistory quota (docs/api.md); nil caches none.
	HistoryCache *HistoryCache
}

// knownResources are the API's resources; another method on one of them is 405.
var knownResources = map[string]bool{
	"/transfers": true, "/transfers/{transferId}": true, "/transfers/{transferId}/history": true,
	"/accounts": true, "/accounts/{accountId}": true, "/accounts/{accountId}/transfers": true,
	"/operator/transfers": true, "/operator/transfers/{transferId}": true, "/operator/transfers/{transferId}/history": true,
	"/operator/accounts": true, "/operator/accounts/{accountId}": true, "/operator/accounts/{accountId}/transfers": true,
	"/operator/accounts/{accountId}/owner": true,
}

// OperatorPrefix begins the path of every operator route. API Gateway lets only principals that IAM allows on a
// route reach it (the template's TransferOperatorPolicy grants these routes, TransferClientPolicy the others), so a
// request that arrives on an operator route carries the operator capability (docs/security.md).
const OperatorPrefix = "/operator/"

// Handle serves one API Gateway proxy request. Every failure is an HTTP answer; the returned error is always nil, so
// API Gateway never sees a function error. Each request writes one metrics record.
func (o *Orchestrator) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	start := o.Now()
	r, oc := o.route(ctx, req)
	resp := apigw.Encode(r)
	emit(ctx, o.Metrics, o.Logger, requestRecord(r, resp, oc, o.Now().Sub(start)))
	return resp, nil
}

func (o *Orchestrator) route(ctx context.Context, req events.APIGatewayProxyRequest) (apigw.Response, outcome) {
	resource, route := req.Resource, req.HTTPMethod+" "+req.Resource
	// An operator route serves what its client twin serves, with the operator's rights.
	op := strings.HasPrefix(resource, OperatorPrefix)
	twin := resource
	if op {
		twin = "/" + strings.TrimPrefix(resource, OperatorPrefix)
	}
	switch req.HTTPMethod + " " + twin {
	case "POST /transfers":
		r, oc := o.submit(ctx, req, op)
		oc.route = route
		return r, oc
	case "GET /transfers/{transferId}":
		return o.get(ctx, req, op), outcome{route: route}
	case "GET /transfers/{transferId}/history":
		r, oc := o.history(ctx, req, op)
		oc.route = route
		return r, oc
	case "POST /accounts":
		return o.openAccount(ctx, req, op), outcome{route: route}
	case "GET /accounts/{accountId}":
		return o.account(ctx, req, op), outcome{route: route}
	case "GET /accounts/{accountId}/transfers":
		return o.accountTransfers(ctx, req, op), outcome{route: route}
	}
	switch {
	case op && resource == "/operator/accounts/{accountId}/owner" && req.HTTPMethod == http.MethodPut:
		return o.assignOwner(ctx, req), outcome{route: route}
	case knownResources[resource]:
		return apigw.ProblemResponse(apigw.NewProblem(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			fmt.Sprintf("%s is not allowed on %s", req.HTTPMethod, resource))), outcome{route: RouteOther}
	default:
		return apigw.ProblemResponse(apigw.NewProblem(http.StatusNotFound, "NOT_FOUND", "no such route")), outcome{route: RouteOther}
	}
}

// submit serves POST /transfers, and POST /operator/transfers when op; the outcome says whether it accepted a
// transfer or replayed one. A client's transfer is on its own authority, so its DEBIT takes money only out of an
// account it owns; an operator's only out of an account without an owner (docs/security.md). Which one it is goes
// into the request's hash, so a key used on one route is never a replay on the other.
func (o *Orchestrator) submit(ctx context.Context, req events.APIGatewayProxyRequest, op bool) (apigw.Response, outcome) {
	key, err := ParseIdempotencyKey(apigw.HeaderValues(req, "Idempotency-Key"))
	var kerr *KeyError
	switch {
	case errors.Is(err, ErrKeyMissing):
		return problem(http.StatusBadRequest, "IDEMPOTENCY_KEY_MISSING", "the Idempotency-Key header is required"), outcome{}
	case errors.As(err, &kerr):
		return problem(http.StatusBadRequest, "IDEMPOTENCY_KEY_INVALID", kerr.Error()), outcome{}
	}
	if !isJSON(apigw.HeaderValues(req, "Content-Type")) {
		return problem(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json"), outcome{}
	}
	body, err := apigw.Body(req, MaxBodyBytes)
	if errors.Is(err, apigw.ErrBodyTooLarge) {
		return problem(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes)), outcome{}
	}
	if err != nil {
		return problem(http.StatusBadRequest, "VALIDATION_ERROR", "the body is not valid base64"), outcome{}
	}
	r, err := DecodeRequest(body)
	var verr *ValidationError
	if errors.As(err, &verr) {
		p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "the request body is invalid")
		p.Errors = verr.Errors
		return apigw.ProblemResponse(p), outcome{}
	}
	if max := o.maxTransferAmount(); r.Amount > max {
		msg := fmt.Sprintf("must be at most %d, this API's largest transfer", max)
		p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "amount "+msg)
		p.Errors = []FieldError{{Field: fieldAmount, Message: msg}}
		return apigw.ProblemResponse(p), outcome{}
	}

	now := o.Now()
	scope, denied, ok := o.callerScope(ctx, req)
	if !ok {
		return denied, outcome{}
	}
	id, err := ledger.NewTransferID(o.Keys.Hash(scope, key), o.Random)
	if err != nil {
		return o.internal(ctx, "new transfer id", err), outcome{}
	}
	rec := ledger.NewTransferRecord(ledger.Transfer{
		TransferID:           id,
		Scope:                scope,
		IdempotencyKey:       key,
		RequestHash:          routeHash(r.Hash(), op),
		Operator:             op,
		SourceAccountID:      r.SourceAccountID,
		DestinationAccountID: r.DestinationAccountID,
		Amount:               r.Amount,
		Currency:             r.Currency,
		Reference:            r.Reference,
		ExecutionArn:         ExecutionArn(o.StateMachineArn, id),
	}, now, o.TTL)

	existing, created, err := o.Store.Reserve(ctx, rec, now)
	if err != nil {
		return o.dependency(ctx, "reserve", err, 1), outcome{}
	}
	if created {
		log := o.Logger.With("transferId", rec.TransferID)
		if err := o.start(ctx, rec); err != nil {
			// The reservation stays: the start may have succeeded with its reply lost. A retry with the same key
			// after the reservation window re-drives the start under the same execution name.
			return o.dependency(ctx, "start execution", err, o.windowLeft(rec.CreatedTime(), now), "transferId", rec.TransferID),
				outcome{transferID: rec.TransferID}
		}
		log.InfoContext(ctx, "transfer accepted", "executionArn", rec.ExecutionArn)
		return apigw.JSON(http.StatusAccepted, NewResource(rec)).WithHeader("Location", "/transfers/"+rec.TransferID),
			outcome{transferID: rec.TransferID, accepted: true}
	}

	log := o.Logger.With("transferId", existing.TransferID)
	if existing.RequestHash != rec.RequestHash {
		log.InfoContext(ctx, "idempotency key reused with a different payload")
		return problem(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED",
			"this Idempotency-Key was already used with a different request"), outcome{transferID: existing.TransferID}
	}
	if existing.Status != ledger.StatusInProgress {
		return replay(http.StatusOK, existing), replayed(existing, false) // terminal: nothing to start
	}
	if left := o.windowLeft(existing.CreatedTime(), now); left > 0 {
		p := apigw.NewProblem(http.StatusConflict, "REQUEST_IN_PROGRESS", "the first request with this Idempotency-Key is still being processed")
		p.RetryAfter = left
		return apigw.ProblemResponse(p), outcome{transferID: existing.TransferID}
	}
	// In flight past the window: the first request has started the workflow or given up, so the start is re-driven
	// (same name and input: it cannot start a second execution), but at most once a window however many duplicates
	// arrive.
	claimed, standing, err := o.Store.ClaimRedrive(ctx, existing, now, o.ReservationWindow)
	if err != nil {
		return o.dependency(ctx, "claim re-drive", err, 1, "transferId", existing.TransferID), outcome{transferID: existing.TransferID}
	}
	retryAfter := strconv.Itoa(int(math.Ceil(o.ReservationWindow.Seconds())))
	if !claimed {
		if left := o.windowLeft(standing, now); left > 0 {
			retryAfter = strconv.Itoa(left)
		}
		return replay(http.StatusAccepted, existing).WithHeader("Retry-After", retryAfter), replayed(existing, false)
	}
	if err := o.start(ctx, existing); err != nil {
		// The claim is given back, so the client's retry after Retry-After re-drives at once instead of meeting it.
		if rerr := o.Store.ReleaseRedrive(ctx, existing.TransferID, now); rerr != nil {
			log.WarnContext(ctx, "re-drive claim not released; the next claim waits for its window", "error", rerr.Error())
		}
		return o.dependency(ctx, "re-drive start execution", err, 1, "transferId", existing.TransferID), outcome{transferID: existing.TransferID}
	}
	log.InfoContext(ctx, "transfer replayed; start re-driven", "status", existing.Status)
	return replay(http.StatusAccepted, existing).WithHeader("Retry-After", retryAfter), replayed(existing, true)
}

func (o *Orchestrator) get(ctx context.Context, req events.APIGatewayProxyRequest, op bool) apigw.Response {
	id := req.PathParameters["transferId"]
	t, failed := o.transfer(ctx, req, id, op)
	if failed != nil {
		return *failed
	}
	return apigw.JSON(http.StatusOK, NewResource(t))
}

// transfer reads the transfer id for the caller: the caller's own on a client route, any transfer on an operator
// route (op). failed, when the transfer cannot be read, is the answer instead: to a caller that cannot be scoped, to
// a transfer that does not exist (for this caller), or to a failed read.
func (o *Orchestrator) transfer(ctx context.Context, req events.APIGatewayProxyRequest, id string, op bool) (t ledger.Transfer, failed *apigw.Response) {
	scope, denied, ok := o.callerScope(ctx, req)
	if !ok {
		return ledger.Transfer{}, &denied
	}
	var err error
	if op {
		t, err = o.Store.FindTransfer(ctx, id, o.Now())
	} else {
		t, err = o.Store.GetTransfer(ctx, scope, id, o.Now())
	}
	var resp apigw.Response
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		resp = problem(http.StatusNotFound, "TRANSFER_NOT_FOUND", "no transfer with this id")
	case err != nil:
		resp = o.dependency(ctx, "get transfer", err, 1, "transferId", id)
	default:
		return t, nil
	}
	return ledger.Transfer{}, &resp
}

// maxTransferAmount is the largest amount a transfer may move.
func (o *Orchestrator) maxTransferAmount() int64 {
	if o.MaxTransferAmount <= 0 {
		return MaxAmount
	}
	return o.MaxTransferAmount
}

// routeHash is the request hash of a transfer submitted on the operator route (op) or the client route: the
// client's is the request's own hash, as before operators existed, so keys reserved earlier still replay.
func routeHash(hash string, op bool) string {
	if !op {
		return hash
	}
	sum := sha256.Sum256([]byte("POST /operator/transfers\x00" + hash))
	return hex.EncodeToString(sum[:])
}

// start starts the transfer's execution. The name is the transfer id and the input is built from the stored record,
// so every call for one transfer sends the same name and byte-identical input: Step Functions then returns the
// running execution, or ExecutionAlreadyExists once it has closed; both mean the execution exists.
func (o *Orchestrator) start(ctx context.Context, rec ledger.Transfer) error {
	input, err := json.Marshal(NewExecutionInput(rec))
	if err != nil {
		return fmt.Errorf("encode execution input: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	_, err = o.SFN.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(o.StateMachineArn),
		Name:            aws.String(rec.TransferID),
		Input:           aws.String(string(input)),
	})
	var exists *sfntypes.ExecutionAlreadyExists
	if errors.As(err, &exists) {
		return nil
	}
	return err
}

// windowLeft is the whole number of seconds, rounded up, until the window opened at from closes; 0 once it has.
func (o *Orchestrator) windowLeft(from, now time.Time) int {
	left := from.Add(o.ReservationWindow).Sub(now)
	if left <= 0 {
		return 0
	}
	return int(math.Ceil(left.Seconds()))
}

// dependency answers a failed call to DynamoDB or Step Functions: 503 with Retry-After, safe to retry with the same key.
func (o *Orchestrator) dependency(ctx context.Context, op string, err error, retryAfter int, attrs ...any) apigw.Response {
	o.Logger.WarnContext(ctx, "dependency failed", append([]any{"op", op, "error", err.Error()}, attrs...)...)
	p := apigw.NewProblem(http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "a dependency is unavailable; retry with the same Idempotency-Key")
	p.RetryAfter = max(retryAfter, 1)
	return apigw.ProblemResponse(p)
}

func (o *Orchestrator) internal(ctx context.Context, op string, err error) apigw.Response {
	o.Logger.ErrorContext(ctx, "internal error", "op", op, "error", err.Error())
	return problem(http.StatusInternalServerError, "INTERNAL_ERROR", "an internal error occurred")
}

func problem(status int, code, detail string) apigw.Response {
	return apigw.ProblemResponse(apigw.NewProblem(status, code, detail))
}

// replayed is the outcome of a replay of t; redriven when it started t's workflow again.
func replayed(t ledger.Transfer, redriven bool) outcome {
	return outcome{transferID: t.TransferID, replayed: true, redriven: redriven}
}

func replay(status int, t ledger.Transfer) apigw.Response {
	return apigw.JSON(status, NewResource(t)).WithHeader("Idempotent-Replayed", "true").
		WithHeader("Location", "/transfers/"+t.TransferID)
}

// isJSON reports whether the Content-Type is application/json, parameters such as charset allowed.
func isJSON(values []string) bool {
	if len(values) != 1 {
		return false
	}
	mt, _, err := mime.ParseMediaType(values[0])
	return err == nil && strings.EqualFold(mt, "application/json")
}

// ExecutionArn is the ARN Step Functions gives the execution named name of the state machine stateMachineArn. An
// execution started through a version or an alias is still the state machine's: a qualified stateMachineArn
// (…:stateMachine:name:live) gives the same ARN as the unqualified one.
func ExecutionArn(stateMachineArn, name string) string {
	prefix, machine, ok := strings.Cut(stateMachineArn, ":stateMachine:")
	if !ok {
		return stateMachineArn + ":" + name // not a state machine ARN: Step Functions refuses it anyway
	}
	machine, _, _ = strings.Cut(machine, ":")
	return prefix + ":execution:" + machine + ":" + name
}
