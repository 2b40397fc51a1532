package transfer

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"time"
	"unicode"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
)

// historyReader reads an execution's history (the Step Functions client satisfies it).
type historyReader interface {
	GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, optFns ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error)
}

// entryLister lists a transfer's ledger entries.
type entryLister interface {
	Entries(ctx context.Context, transferID string) ([]ledger.Entry, error)
}

// accountReader reads an account.
type accountReader interface {
	GetAccount(ctx context.Context, accountID string) (ledger.Account, error)
}

const (
	defaultHistoryPage = 100
	maxHistoryPage     = 1000
)

// History is the audit trail of a transfer: its execution's history events, in Step Functions' own JSON shape, and
// its ledger legs.
type History struct {
	TransferID   string           `json:"transferId"`
	ExecutionArn string           `json:"executionArn"`
	Events       []map[string]any `json:"events"`
	Ledger       []LegResult      `json:"ledger"`
	NextToken    string           `json:"nextToken,omitempty"`
}

// history serves GET /transfers/{transferId}/history (and its operator twin). The caller is authorized on every
// request, before the cache is consulted: a page is looked up under the execution ARN of the transfer record the
// caller may read, so a caller reaches no other transfer's cached history. A page of an execution that has ended for
// good comes from o.HistoryCache; any other is read from Step Functions. The ledger legs are read every time.
func (o *Orchestrator) history(ctx context.Context, req events.APIGatewayProxyRequest, op bool) (apigw.Response, outcome) {
	id := req.PathParameters["transferId"]
	maxResults := defaultHistoryPage
	if v, ok := req.QueryStringParameters["maxResults"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxHistoryPage {
			p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "maxResults must be an integer from 1 to 1000")
			p.Errors = []FieldError{{Field: "maxResults", Message: "must be an integer from 1 to 1000"}}
			return apigw.ProblemResponse(p), outcome{}
		}
		maxResults = n
	}
	t, failed := o.transfer(ctx, req, id, op)
	if failed != nil {
		return *failed, outcome{}
	}
	key := historyKey{executionArn: t.ExecutionArn, token: req.QueryStringParameters["nextToken"], maxResults: int32(maxResults)}
	page, oc, failed := o.historyPage(ctx, key, id)
	if failed != nil {
		return *failed, oc
	}
	h := History{TransferID: t.TransferID, ExecutionArn: t.ExecutionArn, Events: page.Events, Ledger: []LegResult{},
		NextToken: page.NextToken}
	entries, err := o.Legs.Entries(ctx, t.TransferID)
	if err != nil {
		return o.dependency(ctx, "ledger entries", err, 1, "transferId", id), oc
	}
	for _, e := range entries {
		h.Ledger = append(h.Ledger, newLegResult(e))
	}
	return apigw.JSON(http.StatusOK, h), oc
}

// historyPage returns the page k names, from the cache when it holds it, else from Step Functions (caching it when
// the execution has ended for good). The outcome says which, for the request's metrics.
func (o *Orchestrator) historyPage(ctx context.Context, k historyKey, id string) (historyPage, outcome, *apigw.Response) {
	if page, ok := o.HistoryCache.get(k, o.Now()); ok {
		return page, outcome{historyCache: historyCacheHit}, nil
	}
	oc := outcome{historyCache: historyCacheMiss}
	page := historyPage{Events: []map[string]any{}}
	in := &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(k.executionArn), MaxResults: k.maxResults}
	if k.token != "" {
		in.NextToken = aws.String(k.token)
	}
	out, err := o.History.GetExecutionHistory(ctx, in)
	var missing *sfntypes.ExecutionDoesNotExist
	var badToken *sfntypes.InvalidToken
	switch {
	case errors.As(err, &missing):
		// The workflow never started (an orphan): the trail is the record and the (empty) ledger. Not cached: the
		// reconciler may still start it.
		return page, oc, nil
	case errors.As(err, &badToken):
		p := apigw.NewProblem(http.StatusBadRequest, "VALIDATION_ERROR", "nextToken is not valid")
		p.Errors = []FieldError{{Field: "nextToken", Message: "is not a token this history gave"}}
		r := apigw.ProblemResponse(p)
		return page, oc, &r
	case err != nil:
		r := o.dependency(ctx, "get execution history", err, 1, "transferId", id)
		return page, oc, &r
	}
	for _, ev := range out.Events {
		page.Events = append(page.Events, wireShape(reflect.ValueOf(ev)).(map[string]any))
	}
	page.NextToken = aws.ToString(out.NextToken)
	o.HistoryCache.put(k, out.Events, page, o.Now())
	return page, oc, nil
}

var timeType = reflect.TypeOf(time.Time{})

// wireShape renders an aws-sdk-go-v2 Step Functions value as the service's JSON: exported fields in lowerCamel
// case (Id → id, TaskScheduledEventDetails → taskScheduledEventDetails), nil fields left out, timestamps as epoch
// seconds with milliseconds, as GetExecutionHistory returns them on the wire.
func wireShape(v reflect.Value) any {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Type() == timeType {
		t := v.Interface().(time.Time)
		return float64(t.UnixMilli()) / 1000
	}
	switch v.Kind() {
	case reflect.Struct:
		m := map[string]any{}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			fv := v.Field(i)
			if (fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil() {
				continue
			}
			if fv.Kind() == reflect.String && fv.Len() == 0 && fv.Type() != reflect.TypeOf("") {
				continue // an unset enum
			}
			m[lowerFirst(f.Name)] = wireShape(fv)
		}
		return m
	case reflect.Slice:
		s := make([]any, v.Len())
		for i := range s {
			s[i] = wireShape(v.Index(i))
		}
		return s
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Float32, reflect.Float64:
		return v.Float()
	}
	return nil
}

func lowerFirst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}
