package transfer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/dunglas/httpsfv"

	"github.com/transferflow/orchestrator/internal/apigw"
	"github.com/transferflow/orchestrator/internal/ledger"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// The fuzz targets of the transfer API (docs/reliability.md#fuzzing). Each bounds its input so the fuzzer does not
// spend its time on inputs far over the API's own limits.

// fuzzBodies are request bodies for the seed corpora: the API's examples and the classic ways to get one wrong.
var fuzzBodies = []string{
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR","reference":"invoice 2026-118"}`,
	`{ "reference":"invoice 2026-118", "currency":"EUR", "amount":1250, "destinationAccountId":"acc-bob", "sourceAccountId":"acc-alice" }`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":100000000000,"currency":"USD"}`,
	`{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"GBP","reference":"caf\u00e9 \ud83d\ude00"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":12.50,"currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1e3,"currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":"1250","currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":-5,"currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":0,"currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":100000000001,"currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":99999999999999999999,"currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-alice","amount":1,"currency":"eur"}`,
	`{"sourceAccountId":"acc-alice","sourceAccountId":"acc-eve","destinationAccountId":"acc-bob","amount":1,"currency":"EUR"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR","memo":"x"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR","reference":"\ud800"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR","reference":"a\u0007"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR","reference":"a\u0085b\u2028c\u2029"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR","reference":"inv \u202e811-6202\u202c"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR","reference":"\u2067\u200f\u0627\u2069 1"}`,
	`{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1,"currency":"EUR"} {}`,
	`[{"amount":1}]`, `null`, `{`, ``, `{"amount":1,}`,
}

// FuzzParseIdempotencyKey checks the header parser: an accepted key is 1 to 255 printable ASCII characters and is
// the same key in the bare and the structured-field forms of the header; everything else is ErrKeyMissing or a
// *KeyError, the two errors the API documents (IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID).
func FuzzParseIdempotencyKey(f *testing.F) {
	for _, s := range []string{"order-118", `"invoice-2026-118"`, `"dup-1"`, "", " \t", `"a";p=1`, `"unterminated`,
		`"esc\"aped"`, `"\"quoted-start"`, strings.Repeat("k", 255), strings.Repeat("k", 256), "caf\u00e9", "a b",
		`""`, "?1", ":YWJj:", "42", "\x00", "tab\tinside"} {
		f.Add(s, false)
	}
	f.Add("order-118", true)
	f.Fuzz(func(t *testing.T, value string, twice bool) {
		if len(value) > 1024 {
			return
		}
		values := []string{value}
		if twice {
			values = append(values, value)
		}
		key, err := ParseIdempotencyKey(values)
		if key2, err2 := ParseIdempotencyKey(values); key2 != key || fmt.Sprint(err2) != fmt.Sprint(err) {
			t.Fatalf("two parses of %q differ: %q, %v and %q, %v", values, key, err, key2, err2)
		}
		var kerr *KeyError
		switch {
		case err == nil:
			if twice {
				t.Fatalf("a header given twice was accepted as %q", key)
			}
			if len(key) < 1 || len(key) > maxKeyLen {
				t.Fatalf("accepted key %q has %d characters", key, len(key))
			}
			for i := 0; i < len(key); i++ {
				if key[i] < 0x21 || key[i] > 0x7e {
					t.Fatalf("accepted key %q has the byte %#x", key, key[i])
				}
			}
			// The structured-field form of the key is the same key.
			sf, merr := httpsfv.Marshal(httpsfv.NewItem(key))
			if merr != nil {
				t.Fatalf("key %q cannot be written as a structured-field string: %v", key, merr)
			}
			if k, err := ParseIdempotencyKey([]string{sf}); err != nil || k != key {
				t.Fatalf("structured form %s of key %q parsed as %q, %v", sf, key, k, err)
			}
			// So is the bare form, unless it would read as a structured-field string.
			if !strings.HasPrefix(key, `"`) {
				if k, err := ParseIdempotencyKey([]string{key}); err != nil || k != key {
					t.Fatalf("bare form of key %q parsed as %q, %v", key, k, err)
				}
			}
			// Optional whitespace around the field value is not part of it.
			if k, err := ParseIdempotencyKey([]string{" \t" + value + " "}); err != nil || k != key {
				t.Fatalf("%q with whitespace around parsed as %q, %v, without as %q", value, k, err, key)
			}
		case errors.Is(err, ErrKeyMissing):
			if twice || strings.Trim(value, " \t") != "" {
				t.Fatalf("%q reported as a missing key", values)
			}
		case errors.As(err, &kerr):
			if kerr.Reason == "" || key != "" {
				t.Fatalf("invalid key %q: key %q, reason %q", values, key, kerr.Reason)
			}
		default:
			t.Fatalf("%q: error %v is neither ErrKeyMissing nor a *KeyError", values, err)
		}
	})
}

// FuzzDecodeRequest checks the transfer body: an accepted body has an integer amount in range, written as a JSON
// integer (never a float, an exponent or a string), and fields of the documented forms; it re-encodes canonically
// and re-parses to the same request with the same hash. A refused body is one *ValidationError naming each field.
func FuzzDecodeRequest(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add([]byte(b))
	}
	for _, name := range []string{"orchestrator-new-transfer.json", "orchestrator-bad-body.json", "orchestrator-replay.json"} {
		f.Add([]byte(readProxyEvent(f, name).Body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > MaxBodyBytes {
			return
		}
		r, err := DecodeRequest(body)
		if r2, err2 := DecodeRequest(body); r2 != r || fmt.Sprint(err2) != fmt.Sprint(err) {
			t.Fatalf("two decodes of %q differ: %+v, %v and %+v, %v", body, r, err, r2, err2)
		}
		if err != nil {
			var verr *ValidationError
			if !errors.As(err, &verr) || len(verr.Errors) == 0 {
				t.Fatalf("%q: error %v is not a *ValidationError with field errors", body, err)
			}
			// Each error names the body, a field of the contract, or a member the body has (an unknown field).
			var members map[string]json.RawMessage
			_ = json.Unmarshal(body, &members)
			for _, fe := range verr.Errors {
				_, member := members[fe.Field]
				known := slices.Contains([]string{"body", fieldSource, fieldDestination, fieldAmount, fieldCurrency, fieldReference}, fe.Field)
				if fe.Message == "" || !known && !member {
					t.Fatalf("%q: field error %+v names neither the body nor one of its fields", body, fe)
				}
			}
			if r != (Request{}) {
				t.Fatalf("%q: a refused body returned %+v", body, r)
			}
			return
		}
		if r.Amount < 1 || r.Amount > MaxAmount {
			t.Fatalf("%q: accepted amount %d out of range", body, r.Amount)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(body, &raw); err != nil {
			t.Fatalf("%q: accepted but not a JSON object: %v", body, err)
		}
		amount := string(raw[fieldAmount])
		if strings.ContainsAny(amount, `.eE"`) {
			t.Fatalf("%q: accepted the amount %s, which is not a JSON integer", body, amount)
		}
		if n, err := strconv.ParseInt(amount, 10, 64); err != nil || n != r.Amount {
			t.Fatalf("%q: amount %s decoded as %d", body, amount, r.Amount)
		}
		if !accountIDRe.MatchString(r.SourceAccountID) || !accountIDRe.MatchString(r.DestinationAccountID) ||
			r.SourceAccountID == r.DestinationAccountID || !currencyRe.MatchString(r.Currency) ||
			utf8.RuneCountInString(r.Reference) > MaxReferenceLen || !utf8.ValidString(r.Reference) ||
			strings.ContainsFunc(r.Reference, forgesLines) {
			t.Fatalf("%q: accepted %+v, which breaks the contract", body, r)
		}
		canon, err := json.Marshal(canonicalRequest(r))
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRequest(canon)
		if err != nil || back != r || back.Hash() != r.Hash() {
			t.Fatalf("%q: canonical form %s decoded as %+v, %v; want %+v", body, canon, back, err, r)
		}
	})
}

// readProxyEvent reads events/name, the sam local invoke events, for a seed corpus.
func readProxyEvent(f *testing.F, name string) events.APIGatewayProxyRequest {
	f.Helper()
	var ev events.APIGatewayProxyRequest
	b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		f.Fatalf("seed corpus: %v", err)
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		f.Fatalf("seed corpus %s: %v", name, err)
	}
	return ev
}

// submitProblems are the problem codes POST /transfers documents for each status below 500.
var submitProblems = map[int][]string{
	http.StatusBadRequest:            {"IDEMPOTENCY_KEY_MISSING", "IDEMPOTENCY_KEY_INVALID", "VALIDATION_ERROR"},
	http.StatusConflict:              {"REQUEST_IN_PROGRESS"},
	http.StatusRequestEntityTooLarge: {"PAYLOAD_TOO_LARGE"},
	http.StatusUnsupportedMediaType:  {"UNSUPPORTED_MEDIA_TYPE"},
	http.StatusUnprocessableEntity:   {"IDEMPOTENCY_KEY_REUSED"},
}

// FuzzSubmit sends POST /transfers with any Idempotency-Key, Content-Type and body through the orchestrator, with
// Dynoxide as the table and our Step Functions engine behind its API. Whatever the input, the answer is one the
// contract documents and never a 5xx: a missing or invalid key is 400 with IDEMPOTENCY_KEY_MISSING or
// IDEMPOTENCY_KEY_INVALID, exactly when ParseIdempotencyKey refuses it; an invalid body is 400 VALIDATION_ERROR with
// DecodeRequest's field errors; a valid request is accepted (202, the resource echoing it), replayed, or a
// documented conflict; and a second identical request never starts a second transfer.
func FuzzSubmit(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add("order-118", "application/json", b, false, false)
	}
	f.Add(`"invoice-2026-118"`, "application/json; charset=utf-8", fuzzBodies[0], true, false)
	f.Add("k", "application/json", fuzzBodies[0], false, true)
	f.Add("", "application/json", fuzzBodies[0], false, false)
	f.Add("bad key", "application/json", fuzzBodies[0], false, false)
	f.Add("k2", "text/plain", fuzzBodies[0], false, false)
	f.Add("k3", "application/json", strings.Repeat(" ", MaxBodyBytes+1), false, false)
	for _, name := range []string{"orchestrator-new-transfer.json", "orchestrator-bad-body.json", "orchestrator-missing-key.json"} {
		ev := readProxyEvent(f, name)
		f.Add(ev.Headers["Idempotency-Key"], ev.Headers["Content-Type"], ev.Body, ev.IsBase64Encoded, false)
	}
	o := newFuzzOrchestrator(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, key, contentType, body string, encode, twoKeys bool) {
		if len(key) > 512 || len(contentType) > 256 || len(body) > 2*MaxBodyBytes {
			return
		}
		req := events.APIGatewayProxyRequest{
			Resource: "/transfers", Path: "/transfers", HTTPMethod: http.MethodPost,
			Headers: map[string]string{"Content-Type": contentType}, Body: body,
		}
		if key != "" {
			req.Headers["Idempotency-Key"] = key
		}
		if twoKeys {
			req.MultiValueHeaders = map[string][]string{"Content-Type": {contentType}, "Idempotency-Key": {key, key + "2"}}
		}
		if encode {
			req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(body)), true
		}
		resp, err := o.Handle(ctx, req)
		if err != nil {
			t.Fatalf("Handle returned an error: %v", err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("status %d for key %q, Content-Type %q, body %q: %s", resp.StatusCode, key, contentType, body, resp.Body)
		}

		// What the contract says the answer is, from the parsers it names.
		wantCode := ""
		var fieldErrs []FieldError
		parsedKey, kerr := ParseIdempotencyKey(apigw.HeaderValues(req, "Idempotency-Key"))
		decoded, derr := DecodeRequest([]byte(body))
		switch {
		case errors.Is(kerr, ErrKeyMissing):
			wantCode = "IDEMPOTENCY_KEY_MISSING"
		case kerr != nil:
			wantCode = "IDEMPOTENCY_KEY_INVALID"
		case !isJSON(apigw.HeaderValues(req, "Content-Type")):
			wantCode = "UNSUPPORTED_MEDIA_TYPE"
		case len(body) > MaxBodyBytes:
			wantCode = "PAYLOAD_TOO_LARGE"
		case derr != nil:
			wantCode = "VALIDATION_ERROR"
			fieldErrs = derr.(*ValidationError).Errors
		case decoded.Amount > o.maxTransferAmount():
			wantCode = "VALIDATION_ERROR"
			fieldErrs = []FieldError{{Field: fieldAmount, Message: fmt.Sprintf("must be at most %d, this API's largest transfer", o.maxTransferAmount())}}
		}
		if resp.StatusCode >= 400 {
			if resp.Headers["Content-Type"] != "application/problem+json" {
				t.Fatalf("status %d with Content-Type %q", resp.StatusCode, resp.Headers["Content-Type"])
			}
			var p struct {
				Status int          `json:"status"`
				Code   string       `json:"code"`
				Errors []FieldError `json:"errors"`
			}
			if err := json.Unmarshal([]byte(resp.Body), &p); err != nil || p.Status != resp.StatusCode {
				t.Fatalf("problem body %s: %v", resp.Body, err)
			}
			if !slices.Contains(submitProblems[resp.StatusCode], p.Code) {
				t.Fatalf("status %d with the undocumented code %q", resp.StatusCode, p.Code)
			}
			if wantCode != "" && p.Code != wantCode || wantCode == "" && resp.StatusCode != http.StatusConflict &&
				resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("key %q, Content-Type %q, body %q: got %d %s, want %q", key, contentType, body, resp.StatusCode, p.Code, wantCode)
			}
			if wantCode == "VALIDATION_ERROR" && !slices.Equal(p.Errors, fieldErrs) {
				t.Fatalf("body %q: field errors %+v, DecodeRequest says %+v", body, p.Errors, fieldErrs)
			}
			return
		}
		if wantCode != "" {
			t.Fatalf("key %q, Content-Type %q, body %q: got %d, want %s", key, contentType, body, resp.StatusCode, wantCode)
		}
		var got Resource
		if err := json.Unmarshal([]byte(resp.Body), &got); err != nil {
			t.Fatalf("resource %s: %v", resp.Body, err)
		}
		replayed := resp.Headers["Idempotent-Replayed"] == "true"
		if resp.StatusCode != http.StatusAccepted && !(replayed && resp.StatusCode == http.StatusOK) {
			t.Fatalf("status %d (replayed %v) for a valid request", resp.StatusCode, replayed)
		}
		if !replayed && (got.SourceAccountID != decoded.SourceAccountID || got.DestinationAccountID != decoded.DestinationAccountID ||
			got.Amount != decoded.Amount || got.Currency != decoded.Currency || got.Reference != decoded.Reference ||
			got.Status != ledger.StatusInProgress || resp.Headers["Location"] != "/transfers/"+got.TransferID) {
			t.Fatalf("request %+v accepted as %+v, Location %q", decoded, got, resp.Headers["Location"])
		}
		// The same request again is never a second transfer: the reservation window has not passed (the clock
		// stands still), so it is 409 while the first is in flight.
		again, _ := o.Handle(ctx, req)
		if again.StatusCode != http.StatusConflict {
			t.Fatalf("the same request with key %q again: %d %s", parsedKey, again.StatusCode, again.Body)
		}
	})
}

// newFuzzOrchestrator wires the orchestrator as production does, on a fresh Dynoxide table and a Step Functions
// engine behind its HTTP API, with a clock that stands still and no metrics.
func newFuzzOrchestrator(f *testing.F) *Orchestrator {
	f.Helper()
	srv, tables := ddbserver.StartWithTablesT(f)
	api := stepfunctions.RunT(f, stepfunctions.WithEngineOptions(sfnengine.Options{MaxClosedExecutions: 100}))
	sm, err := api.Engine().CreateStateMachine(context.Background(), sfnengine.CreateInput{
		Name: "Transfer", Definition: `{"StartAt":"Accepted","States":{"Accepted":{"Type":"Pass","End":true}}}`,
	})
	if err != nil {
		f.Fatal(err)
	}
	env := map[string]string{"TABLE_NAME": tables["TransfersTable"], "STATE_MACHINE_ARN": sm.Arn}
	c, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		f.Fatal(err)
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	o := NewOrchestratorHandler(cfg, c, discardLogger())
	o.Store = ledger.NewStore(ddbserver.NewClient(srv.URL, nil), c.TableName)
	o.SFN = api.Client()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { return now }
	o.Metrics = nil
	return o
}

// FuzzStatusChangeEvent runs executions of any name and input on our engine (succeeding, failing with the input's
// error and cause, or stopped with any error and cause) and reads every status-change event it publishes as the
// reconciler does: each is a CloudWatch event of the reconciler's detail type whose detail decodes into
// statusDetail with the execution's ARN, state machine, name, status, error and cause; the first says RUNNING, the
// last the final status; and the template's rule pattern lets through exactly the FAILED, TIMED_OUT and ABORTED
// ones.
func FuzzStatusChangeEvent(f *testing.F) {
	f.Add("tr_1", `{}`, "", "")
	f.Add("tr_2", `{"fail":{"error":"InsufficientFunds","cause":"{\"account\":\"acc-alice\"}"}}`, "", "")
	f.Add("tr_3", `{"fail":{"error":42}}`, "", "")
	f.Add("tr_4", `{"wait":true}`, "States.Timeout", "stopped by the fuzzer")
	f.Add("tr_5", `{"wait":true,"x":"caf\u00e9"}`, "", "")
	f.Add("bad name!", `{}`, "", "")
	f.Add("tr_6", `not json`, "", "")

	var (
		mu        sync.Mutex
		published = map[string][][]byte{} // by execution ARN
	)
	eng := sfnengine.New(sfnengine.Options{MaxClosedExecutions: 100, Subscribers: []sfnengine.Subscriber{
		func(_ context.Context, ev []byte) {
			var e struct {
				Resources []string `json:"resources"`
			}
			_ = json.Unmarshal(ev, &e)
			if len(e.Resources) == 1 {
				mu.Lock()
				published[e.Resources[0]] = append(published[e.Resources[0]], ev)
				mu.Unlock()
			}
		},
	}})
	f.Cleanup(eng.Close)
	ctx := context.Background()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "TransferStateMachine", Definition: `{
		"StartAt": "Route",
		"States": {
			"Route": {"Type": "Choice", "Choices": [
				{"Variable": "$.fail", "IsPresent": true, "Next": "Fail"},
				{"Variable": "$.wait", "IsPresent": true, "Next": "Wait"}], "Default": "Done"},
			"Wait": {"Type": "Wait", "Seconds": 3600, "End": true},
			"Fail": {"Type": "Fail", "ErrorPath": "$.fail.error", "CausePath": "$.fail.cause"},
			"Done": {"Type": "Pass", "End": true}
		}}`})
	if err != nil {
		f.Fatal(err)
	}
	// The rule of template.yaml that sends status changes to the reconciler.
	rule, err := eventpattern.Compile(map[string]any{
		"source": []any{"aws.states"}, "detail-type": []any{"Step Functions Execution Status Change"},
		"detail": map[string]any{"status": []any{"FAILED", "TIMED_OUT", "ABORTED"}, "stateMachineArn": []any{sm.Arn}},
	})
	if err != nil {
		f.Fatal(err)
	}
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, name, input, stopError, stopCause string) {
		if len(name) > 100 || len(input) > 4<<10 || len(stopError) > 256 || len(stopCause) > 1024 {
			return
		}
		// The Step Functions API carries only UTF-8 text (its JSON decoding would replace anything else).
		if !utf8.ValidString(name + input + stopError + stopCause) {
			return
		}
		// Names are made unique so that every run starts a new execution.
		name = strconv.FormatInt(n.Add(1), 36) + "-" + name
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Name: name, Input: input})
		if err != nil {
			return
		}
		// An input with "wait" (and no "fail") waits for an hour: it is stopped, which ends it ABORTED.
		if doc, err := jsonvalue.Decode([]byte(input)); err == nil {
			_, fail := jsonvalue.Lookup(doc, "fail")
			if _, wait := jsonvalue.Lookup(doc, "wait"); wait && !fail {
				if _, err := eng.StopExecution(ctx, rec.Arn, stopError, stopCause); err != nil {
					t.Fatalf("stop %s: %v", rec.Arn, err)
				}
			}
		}
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		final, err := eng.Wait(waitCtx, rec.Arn)
		if err != nil {
			t.Fatalf("execution of %s did not end: %v", input, err)
		}
		mu.Lock()
		evs := published[rec.Arn]
		delete(published, rec.Arn)
		mu.Unlock()
		if len(evs) < 2 {
			t.Fatalf("%d status-change events for %s, want RUNNING and %s", len(evs), rec.Arn, final.Status)
		}
		for i, raw := range evs {
			var ev events.CloudWatchEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("event %s: %v", raw, err)
			}
			if ev.DetailType != DetailTypeStatusChange || ev.Source != "aws.states" || !slices.Equal(ev.Resources, []string{rec.Arn}) {
				t.Fatalf("event %s: detail-type %q, source %q, resources %v", raw, ev.DetailType, ev.Source, ev.Resources)
			}
			var d statusDetail
			if err := json.Unmarshal(ev.Detail, &d); err != nil {
				t.Fatalf("the reconciler cannot decode the detail of %s: %v", raw, err)
			}
			if d.ExecutionArn != rec.Arn || d.StateMachineArn != sm.Arn || d.Name != name {
				t.Fatalf("detail %+v of execution %s (%s)", d, rec.Arn, name)
			}
			want := sfnengine.StatusRunning
			if i == len(evs)-1 {
				want = final.Status
				if d.Error != aws.ToString(final.Error) || d.Cause != aws.ToString(final.Cause) {
					t.Fatalf("detail error %q cause %q, the execution's %q %q", d.Error, d.Cause,
						aws.ToString(final.Error), aws.ToString(final.Cause))
				}
			}
			if d.Status != want {
				t.Fatalf("event %d of %d says %s, want %s", i+1, len(evs), d.Status, want)
			}
			matched, err := rule.MatchJSON(raw)
			if err != nil {
				t.Fatal(err)
			}
			if failed := slices.Contains([]string{"FAILED", "TIMED_OUT", "ABORTED"}, d.Status); matched != failed {
				t.Fatalf("the reconciler's rule matched (%v) a %s event", matched, d.Status)
			}
		}
	})
}
