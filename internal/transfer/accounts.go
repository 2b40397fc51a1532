package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
)

// accountOpener opens accounts under an Idempotency-Key (ledger.Store satisfies it).
type accountOpener interface {
	OpenAccount(ctx context.Context, req ledger.OpenRequest, now time.Time, ttl time.Duration) (ledger.Account, ledger.OpenOutcome, error)
}

// ownerAssigner gives an account without an owner its owner (ledger.Store satisfies it).
type ownerAssigner interface {
	AssignOwner(ctx context.Context, accountID, owner string, now time.Time) (ledger.Account, error)
}

// activityLister lists an account's ledger entries, newest first (ledger.Store satisfies it).
type activityLister interface {
	ListActivity(ctx context.Context, accountID string, limit int, after string) (ledger.ActivityPage, error)
}

// Fields of the POST /accounts body; floor and owner only on POST /operator/accounts.
const (
	fieldAccountID = "accountId"
	fieldKind      = "kind"
	fieldFloor     = "floor"
	fieldOwner     = "owner"
)

// Paging of GET /accounts/{accountId}/transfers.
const (
	// DefaultAccountTransfersPage is the page size without ?limit=.
	DefaultAccountTransfersPage = 20
	// MaxAccountTransfersPage is the largest ?limit= (ledger.MaxActivityPage).
	MaxAccountTransfersPage = ledger.MaxActivityPage
)

// AccountRequest is a validated POST /accounts (or POST /operator/accounts) body. AccountID is empty when the caller
// let the API choose it; Kind is KindCustomer when the body has none. Floor and Owner come only from an operator's
// body: Floor is a funding account's floor (ledger.DefaultFundingFloor when the body has none), Owner the principal
// ARN of a customer account's owner (empty: none).
type AccountRequest struct {
	AccountID string
	Currency  string
	Kind      string
	Floor     *int64
	Owner     string
}

// DecodeAccountRequest parses and validates a POST /accounts body as strictly as DecodeRequest does a transfer:
// one JSON object, no unknown or repeated fields, every problem reported in one *ValidationError. With operator
// (POST /operator/accounts) the body may also have floor (a funding account's, from ledger.MinFundingFloor to 0)
// and owner (a customer account's owner, as a principal ARN).
func DecodeAccountRequest(body []byte, operator bool) (AccountRequest, error) {
	verr := &ValidationError{}
	fields, err := decodeObject(body)
	if err != nil {
		verr.add("body", err.Error())
		return AccountRequest{}, verr
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		switch name {
		case fieldAccountID, fieldCurrency, fieldKind:
		case fieldFloor, fieldOwner:
			if !operator {
				verr.add(name, "unknown field (an operator's field: POST /operator/accounts)")
			}
		default:
			verr.add(name, "unknown field")
		}
	}
	var r AccountRequest
	if _, ok := fields[fieldAccountID]; ok {
		r.AccountID = patternField(fields, fieldAccountID, verr)
	}
	r.Currency = patternField(fields, fieldCurrency, verr)
	r.Kind = ledger.KindCustomer
	if _, ok := fields[fieldKind]; ok {
		r.Kind = stringField(fields, fieldKind, true, verr)
		if r.Kind != "" && !ledger.ValidKind(r.Kind) {
			verr.add(fieldKind, `must be "customer" or "funding"`)
		}
	}
	if _, ok := fields[fieldFloor]; ok && operator {
		r.Floor = floorField(fields, verr)
		if r.Kind != ledger.KindFunding {
			verr.add(fieldFloor, "is only for a funding account")
		}
	}
	if r.Kind == ledger.KindFunding && r.Floor == nil {
		r.Floor = aws.Int64(ledger.DefaultFundingFloor)
	}
	if _, ok := fields[fieldOwner]; ok && operator {
		r.Owner = stringField(fields, fieldOwner, true, verr)
		switch {
		case r.Kind != ledger.KindCustomer:
			verr.add(fieldOwner, "is only for a customer account: funding accounts have no owner")
		case r.Owner != "":
			if _, err := apigw.PrincipalScope(r.Owner); err != nil {
				verr.add(fieldOwner, "must be the ARN of an IAM user, role, assumed role, federated user or account root")
			}
		}
	}
	if len(verr.Errors) > 0 {
		return AccountRequest{}, verr
	}
	return r, nil
}

// floorField reads floor: a JSON integer from ledger.MinFundingFloor to 0.
func floorField(fields map[string]json.RawMessage, verr *ValidationError) *int64 {
	msg := fmt.Sprintf("must be a JSON integer from %d to 0", ledger.MinFundingFloor)
	s := string(fields[fieldFloor])
	n, err := strconv.ParseInt(s, 10, 64)
	if !integerRe.MatchString(s) || err != nil || n > 0 || n < ledger.MinFundingFloor {
		verr.add(fieldFloor, msg)
		return nil
	}
	return &n
}

// canonicalAccountRequest fixes field order so that equal requests hash equally.
type canonicalAccountRequest struct {
	AccountID string `json:"accountId"`
	Currency  string `json:"currency"`
	Kind      string `json:"kind"`
	Floor     *int64 `json:"floor,omitempty"`
	Owner     string `json:"owner,omitempty"`
}

// Hash is the SHA-256 (hex) of the canonical form of r, the defaults of kind and floor applied: {"currency":"EUR"}
// and {"currency":"EUR","kind":"customer"} are the same request. It is prefixed with the route, so that it can never
// equal a transfer request's hash, nor a client's request an operator's.
func (r AccountRequest) Hash(operator bool) string {
	b, _ := json.Marshal(canonicalAccountRequest(r))
	route := "POST /accounts\x00"
	if operator {
		route = "POST /operator/accounts\x00"
	}
	sum := sha256.Sum256(append([]byte(route), b...))
	return hex.EncodeToString(sum[:])
}

var accountIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewAccountID returns an id for an account whose request named none: "acc_" and 26 random base32 characters
// (128 bits), so two ids never meet and none can be guessed from another.
func NewAccountID(random io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("new account id: %w", err)
	}
	return "acc_" + accountIDEncoding.EncodeToString(b[:]), nil
}

// AccountView is an account as the API shows it (GET /accounts/{accountId}, POST /accounts).
type AccountView struct {
	AccountID string `json:"accountId"`
	Kind      string `json:"kind"`
	Currency  string `json:"currency"`
	Balance   int64  `json:"balance"`
	Version   int64  `json:"version"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
	// Owner (the owner's scope; absent: none) and Floor (a funding account's) are shown to operators only.
	Owner string       `json:"owner,omitempty"`
	Floor *int64       `json:"floor,omitempty"`
	Links AccountLinks `json:"links"`
}

// AccountLinks are the account's related resources.
type AccountLinks struct {
	Self      string `json:"self"`
	Transfers string `json:"transfers"`
}

// NewAccountView renders a stored account as its owner sees it.
func NewAccountView(a ledger.Account) AccountView {
	return AccountView{
		AccountID: a.AccountID, Kind: a.AccountKind(), Currency: a.Currency, Balance: a.Balance, Version: a.Version,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		Links: AccountLinks{Self: "/accounts/" + a.AccountID, Transfers: "/accounts/" + a.AccountID + "/transfers"},
	}
}

// NewOperatorAccountView renders a stored account as an operator sees it: with its owner and floor, and links to
// the operator routes.
func NewOperatorAccountView(a ledger.Account) AccountView {
	v := NewAccountView(a)
	v.Owner = a.Owner
	if a.AccountKind() == ledger.KindFunding {
		v.Floor = aws.Int64(a.FundingFloor())
	}
	v.Links = AccountLinks{Self: "/operator/accounts/" + a.AccountID, Transfers: "/operator/accounts/" + a.AccountID + "/transfers"}
	return v
}

// accountView renders a for an operator (op) or its owner.
func accountView(a ledger.Account, op bool) AccountView {
	if op {
		return NewOperatorAccountView(a)
	}
	return NewAccountView(a)
}

// accountNotFound is the answer for an account that does not exist, and, to a client, for one it does not own:
// the two are the same, so account ids cannot be probed.
func accountNotFound() apigw.Response {
	return problem(http.StatusNotFound, "ACCOUNT_NOT_FOUND", "no account with this id")
}

// readableAccount reads the account id for the caller scope: any account for an operator (op), only its own for a
// client; anything else is ledger.ErrNotFound.
func (o *Orchestrator) readableAccount(ctx context.Context, id, scope string, op bool) (ledger.Account, error) {
	a, err := o.Accounts.GetAccount(ctx, id)
	if err == nil && !op && a.Owner != scope {
		return ledger.Account{}, ledger.ErrNotFound
	}
	return a, err
}

// openAccount serves POST /accounts, and POST /operator/accounts when op. Every 4xx is decided before anything is
// written. A client's account is its own (its owner is the caller's scope) and a customer account; only an operator
// opens a funding account, or a customer account for another owner (or none).
func (o *Orchestrator) openAccount(ctx context.Context, req events.APIGatewayProxyRequest, op bool) apigw.Response {
	key, err := ParseIdempotencyKey(apigw.HeaderValues(req, "Idempotency-Key"))
	var kerr *KeyError
	switch {
	case errors.Is(err, ErrKeyMissing):
		return problem(http.StatusBadRequest, "IDEMPOTENCY_KEY_MISSING", "the Idempotency-Key header is required")
	case errors.As(err, &kerr):
		return problem(http.StatusBadRequest, "IDEMPOTENCY_KEY_INVALID", kerr.Error())
	}
	if !isJSON(apigw.HeaderValues(req, "Content-Type")) {
		return problem(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json")
	}
	body, err := apigw.Body(req, MaxBodyBytes)
	if errors.Is(err, apigw.ErrBodyTooLarge) {
		return problem(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
	}
	if err != nil {
		return problem(http.StatusBadRequest, "VALIDATION_ERROR", "the body is not valid base64")
	}
	r, err := DecodeAccountRequest(body, op)
	var verr *ValidationError
	if errors.As(err, &verr) {
		p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "the request body is invalid")
		p.Errors = verr.Errors
		return apigw.ProblemResponse(p)
	}
	if r.Kind == ledger.KindFunding && !op {
		return problem(http.StatusForbidden, "OPERATOR_REQUIRED",
			"opening a funding account takes the operator capability: POST /operator/accounts")
	}
	scope, denied, ok := o.callerScope(ctx, req)
	if !ok {
		return denied
	}
	owner := scope // a client's account is its own
	if op {
		owner = ""
		if r.Owner != "" {
			owner, _ = apigw.PrincipalScope(r.Owner) // checked by DecodeAccountRequest
		}
	}
	hash := r.Hash(op) // of the request as sent: without an accountId, a replay finds the id the key recorded
	id := r.AccountID
	if id == "" {
		if id, err = NewAccountID(o.Random); err != nil {
			return o.internal(ctx, "new account id", err)
		}
	}
	acct, oc, err := o.Openings.OpenAccount(ctx, ledger.OpenRequest{
		Scope: scope, IdempotencyKey: key, KeyHash: o.Keys.Hash(scope, key), RequestHash: hash, AccountID: id, Currency: r.Currency, Kind: r.Kind,
		Owner: owner, Floor: r.Floor,
	}, o.Now(), o.TTL)
	log := o.Logger.With("accountId", id)
	switch {
	case errors.Is(err, ledger.ErrKeyReused):
		log.InfoContext(ctx, "idempotency key reused with a different payload")
		return problem(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was already used with a different request")
	case errors.Is(err, ledger.ErrAccountConflict):
		return problem(http.StatusConflict, "ACCOUNT_EXISTS", "an account with this id exists, with other attributes or another owner")
	case err != nil:
		return o.dependency(ctx, "open account", err, 1, "accountId", id)
	}
	view := accountView(acct, op)
	switch oc {
	case ledger.Replayed:
		return apigw.JSON(http.StatusOK, view).WithHeader("Idempotent-Replayed", "true").WithHeader("Location", view.Links.Self)
	case ledger.AlreadyOpen:
		log.InfoContext(ctx, "account already open with the same attributes")
		return apigw.JSON(http.StatusOK, view).WithHeader("Location", view.Links.Self)
	}
	log.InfoContext(ctx, "account opened", "kind", acct.Kind)
	return apigw.JSON(http.StatusCreated, view).WithHeader("Location", view.Links.Self)
}

// account serves GET /accounts/{accountId} to the account's owner, and GET /operator/accounts/{accountId} (op).
func (o *Orchestrator) account(ctx context.Context, req events.APIGatewayProxyRequest, op bool) apigw.Response {
	id := req.PathParameters["accountId"]
	if !accountIDRe.MatchString(id) {
		return accountNotFound()
	}
	scope, denied, ok := o.callerScope(ctx, req)
	if !ok {
		return denied
	}
	a, err := o.readableAccount(ctx, id, scope, op)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return accountNotFound()
	case err != nil:
		return o.dependency(ctx, "get account", err, 1, "accountId", id)
	}
	return apigw.JSON(http.StatusOK, accountView(a, op))
}

// assignOwner serves PUT /operator/accounts/{accountId}/owner: an operator gives an account without an owner (one
// opened before accounts had owners, or by an operator without one) its owner, named by principal ARN. Assigning
// the owner it already has answers 200 again; another owner is 409 ACCOUNT_HAS_OWNER, a funding account 409
// FUNDING_ACCOUNT (operators hold those).
func (o *Orchestrator) assignOwner(ctx context.Context, req events.APIGatewayProxyRequest) apigw.Response {
	id := req.PathParameters["accountId"]
	if !accountIDRe.MatchString(id) {
		return accountNotFound()
	}
	if !isJSON(apigw.HeaderValues(req, "Content-Type")) {
		return problem(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json")
	}
	body, err := apigw.Body(req, MaxBodyBytes)
	if errors.Is(err, apigw.ErrBodyTooLarge) {
		return problem(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
	}
	verr := &ValidationError{}
	fields, derr := decodeObject(body)
	switch {
	case err != nil:
		verr.add("body", "is not valid base64")
	case derr != nil:
		verr.add("body", derr.Error())
	default:
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			if name != fieldOwner {
				verr.add(name, "unknown field")
			}
		}
	}
	var owner string
	if len(verr.Errors) == 0 {
		arn := stringField(fields, fieldOwner, true, verr)
		if arn != "" {
			var serr error
			if owner, serr = apigw.PrincipalScope(arn); serr != nil {
				verr.add(fieldOwner, "must be the ARN of an IAM user, role, assumed role, federated user or account root")
			}
		}
	}
	if len(verr.Errors) > 0 {
		p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "the request body is invalid")
		p.Errors = verr.Errors
		return apigw.ProblemResponse(p)
	}
	if _, denied, ok := o.callerScope(ctx, req); !ok {
		return denied
	}
	a, err := o.Owners.AssignOwner(ctx, id, owner, o.Now())
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return accountNotFound()
	case errors.Is(err, ledger.ErrHasOwner):
		return problem(http.StatusConflict, "ACCOUNT_HAS_OWNER", "the account already has another owner")
	case errors.Is(err, ledger.ErrFundingAccount):
		return problem(http.StatusConflict, "FUNDING_ACCOUNT", "a funding account has no owner: operators hold it")
	case err != nil:
		return o.dependency(ctx, "assign owner", err, 1, "accountId", id)
	}
	o.Logger.InfoContext(ctx, "account owner assigned", "accountId", id)
	return apigw.JSON(http.StatusOK, NewOperatorAccountView(a))
}

// AccountTransfers is a page of GET /accounts/{accountId}/transfers.
type AccountTransfers struct {
	AccountID string            `json:"accountId"`
	Transfers []AccountTransfer `json:"transfers"`
	NextToken string            `json:"nextToken,omitempty"`
}

// AccountTransfer is one ledger entry of the account: a transfer that moved money on it. A transfer appears once
// per leg on the account: a refunded one twice (DEBIT, then REFUND).
type AccountTransfer struct {
	TransferID string `json:"transferId"`
	Leg        string `json:"leg"`
	// Direction is "out" for a DEBIT, "in" for a CREDIT or REFUND; Amount is signed the same way (negative out).
	Direction             string `json:"direction"`
	Amount                int64  `json:"amount"`
	Currency              string `json:"currency"`
	CounterpartyAccountID string `json:"counterpartyAccountId,omitempty"`
	CreatedAt             string `json:"createdAt"`
	// Status and Reference come from the transfer's record, shown only while it exists (records expire with the
	// idempotency TTL; entries are kept forever), to the account's owner whoever sent the transfer.
	Status    string               `json:"status,omitempty"`
	Reference string               `json:"reference,omitempty"`
	Links     AccountTransferLinks `json:"links"`
}

// AccountTransferLinks link an entry to its transfer.
type AccountTransferLinks struct {
	Transfer string `json:"transfer"`
}

// pageToken is what a nextToken carries: the account it pages (a token of another account is refused) and the
// activityAt of the last entry returned. It is base64url JSON, opaque to clients.
type pageToken struct {
	Version int    `json:"v"`
	Account string `json:"a"`
	After   string `json:"k"`
}

func encodePageToken(accountID, after string) string {
	b, _ := json.Marshal(pageToken{Version: 1, Account: accountID, After: after})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePageToken returns the activityAt a token resumes after; ok is false for a token that is malformed, of
// another version, or of another account.
func decodePageToken(token, accountID string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(token) > 512 {
		return "", false
	}
	var t pageToken
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil || t.Version != 1 || t.Account != accountID {
		return "", false
	}
	if _, _, _, ok := ledger.ParseActivitySortKey(t.After); !ok {
		return "", false
	}
	return t.After, true
}

// badPageToken is the 400 of a nextToken that is not one this listing gave for this account.
func badPageToken() apigw.Response {
	p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "nextToken is not a token this listing gave for this account")
	p.Errors = []FieldError{{Field: "nextToken", Message: "is not a token of this account's listing"}}
	return apigw.ProblemResponse(p)
}

// accountTransfers serves GET /accounts/{accountId}/transfers: one GetItem (the account exists), with a nextToken
// one GetItem (its entry is this account's), one Query of the AccountActivity index and one TransactGetItems for
// the page's transfer records and DEBIT entries.
func (o *Orchestrator) accountTransfers(ctx context.Context, req events.APIGatewayProxyRequest, op bool) apigw.Response {
	id := req.PathParameters["accountId"]
	if !accountIDRe.MatchString(id) {
		return accountNotFound()
	}
	limit := DefaultAccountTransfersPage
	if v, ok := req.QueryStringParameters["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAccountTransfersPage {
			msg := fmt.Sprintf("must be an integer from 1 to %d", MaxAccountTransfersPage)
			p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "limit "+msg)
			p.Errors = []FieldError{{Field: "limit", Message: msg}}
			return apigw.ProblemResponse(p)
		}
		limit = n
	}
	after := ""
	if tok, ok := req.QueryStringParameters["nextToken"]; ok {
		var valid bool
		if after, valid = decodePageToken(tok, id); !valid {
			return badPageToken()
		}
	}
	scope, denied, ok := o.callerScope(ctx, req)
	if !ok {
		return denied
	}
	if _, err := o.readableAccount(ctx, id, scope, op); err != nil {
		if errors.Is(err, ledger.ErrNotFound) {
			return accountNotFound()
		}
		return o.dependency(ctx, "get account", err, 1, "accountId", id)
	}
	page, err := o.Activity.ListActivity(ctx, id, limit, after)
	if errors.Is(err, ledger.ErrInvalidCursor) {
		return badPageToken()
	}
	if err != nil {
		return o.dependency(ctx, "list account activity", err, 1, "accountId", id)
	}
	now := o.Now()
	out := AccountTransfers{AccountID: id, Transfers: make([]AccountTransfer, 0, len(page.Entries))}
	for _, a := range page.Entries {
		t := AccountTransfer{
			TransferID: a.TransferID, Leg: a.Leg, Direction: "in", Amount: a.Amount, Currency: a.Currency,
			CounterpartyAccountID: a.Counterparty, CreatedAt: a.CreatedAt,
			Links: AccountTransferLinks{Transfer: "/transfers/" + a.TransferID},
		}
		if a.Leg == ledger.LegDebit {
			t.Direction, t.Amount = "out", -a.Amount
		}
		if r := a.Record; r != nil && r.TransferID == a.TransferID && !r.Expired(now) {
			// The listing is the account owner's (or an operator's), and every entry is a transfer that moved money
			// on the account: its status and the reference its sender wrote are the owner's to see, as on a bank
			// statement. Nothing else of the other side is shown.
			t.Status, t.Reference = r.Status, r.Reference
		}
		out.Transfers = append(out.Transfers, t)
	}
	if page.Next != "" {
		out.NextToken = encodePageToken(id, page.Next)
	}
	return apigw.JSON(http.StatusOK, out)
}
