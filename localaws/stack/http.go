package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/gateway"
	"github.com/transferflow/orchestrator/localaws/internal/awsjson"
	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
)

// The timeouts of the stack's HTTP servers (localaws/internal/httpserver): headers within 10 s, a body within 30 s of them
// (a 10 MB body at 350 KB/s), and a kept-alive connection idle for at most 2 minutes (longer than the 90 s after
// which Go's and the AWS SDK's clients drop an idle connection, so the client closes first and never reuses a
// connection the server is closing). The write timeout, counted from the end of the headers, covers the body and
// the slowest legitimate answer:
//   - the API: the body (30 s) and API Gateway's integration timeout (29 s, after which the gateway answers 504
//     itself), 90 s in all;
//   - the Step Functions API: its operations answer from memory, in milliseconds; 60 s. Those that take longer
//     extend their own deadline (localaws/sfnapi) to their hold plus a minute: StartSyncExecution and TestState,
//     which answer when an Express execution or a tested state ends (five minutes at most), to six minutes;
//     GetActivityTask, whose long poll answers an empty task after 60 s without one (as AWS), to two;
//   - pprof: a CPU profile or trace lasts its ?seconds= (30 by default); 10 minutes, so profiles up to that length
//     work (net/http/pprof refuses longer ones with 400).
var (
	APITimeouts   = httpserver.Timeouts{Header: 10 * time.Second, Body: 30 * time.Second, Write: 90 * time.Second, Idle: 2 * time.Minute}
	SFNTimeouts   = httpserver.Timeouts{Header: 10 * time.Second, Body: 30 * time.Second, Write: time.Minute, Idle: 2 * time.Minute}
	PprofTimeouts = httpserver.Timeouts{Header: 10 * time.Second, Body: 30 * time.Second, Write: 10 * time.Minute, Idle: 2 * time.Minute}
)

// sfnMaxBody is how much of a Step Functions API request is read ahead under the body deadline: more than the API
// reads itself (localaws/sfnapi), so its own limit decides.
const sfnMaxBody = 8 << 20

// apiServer serves the transfer API: /healthz, and everything else through the gateway, which answers unknown paths
// as API Gateway does (no redirect: a ServeMux would answer //transfers with 307).
func apiServer(gw http.Handler, health http.Handler, t httpserver.Timeouts, logger *slog.Logger) *http.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			health.ServeHTTP(w, r)
			return
		}
		gw.ServeHTTP(w, r)
	})
	return httpserver.New(h, httpserver.Options{Timeouts: t, MaxBody: gateway.MaxBody + 1, OnBodyTimeout: problemTimeout(t.Body),
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)})
}

// sfnServer serves the Step Functions API (JSON 1.0); a late body is answered 408 in the API's error shape.
func sfnServer(api http.Handler, t httpserver.Timeouts, logger *slog.Logger) *http.Server {
	return awsJSONServer(api, "application/x-amz-json-1.0", t, logger)
}

// eventsServer serves the local EventBridge (and FilterLogEvents), both JSON 1.1; a late body is answered 408 in
// the protocol's error shape. Its operations answer from memory, so it takes the Step Functions API's timeouts.
func eventsServer(api http.Handler, t httpserver.Timeouts, logger *slog.Logger) *http.Server {
	return awsJSONServer(api, "application/x-amz-json-1.1", t, logger)
}

// awsJSONServer serves an AWS JSON-protocol API whose requests are at most sfnMaxBody; a body that does not arrive
// within t.Body is answered 408 RequestTimeoutException with the protocol's content type.
func awsJSONServer(api http.Handler, contentType string, t httpserver.Timeouts, logger *slog.Logger) *http.Server {
	onTimeout := func(w http.ResponseWriter, _ *http.Request) {
		awsjson.Write(w, contentType, &awsjson.Error{Code: "RequestTimeoutException", Status: http.StatusRequestTimeout,
			Message: fmt.Sprintf("the request body did not arrive within %s", t.Body)})
	}
	return httpserver.New(api, httpserver.Options{Timeouts: t, MaxBody: sfnMaxBody + 1, OnBodyTimeout: onTimeout,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)})
}

// problemTimeout answers a late body on the API as a problem document.
func problemTimeout(d time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusRequestTimeout, "REQUEST_TIMEOUT", fmt.Sprintf("the request body did not arrive within %s", d), nil)
	}
}

// writeProblem writes an RFC 9457 problem document as the API's functions do (internal/apigw), with extra members.
func writeProblem(w http.ResponseWriter, status int, code, detail string, extra map[string]any) {
	p := map[string]any{
		"type":   "/problems/" + strings.ReplaceAll(strings.ToLower(code), "_", "-"),
		"title":  http.StatusText(status),
		"status": status,
		"detail": detail,
		"code":   code,
	}
	for k, v := range extra {
		p[k] = v
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// healthTimeout bounds each check of GET /healthz.
const healthTimeout = 2 * time.Second

// check is one thing GET /healthz looks at.
type check struct {
	name string
	run  func(ctx context.Context) error
}

// health answers GET /healthz: 200 {"status":"ok","checks":{…}} when every check passes within healthTimeout, else
// 503 SERVICE_UNAVAILABLE (problem+json, Retry-After: 1) whose detail and checks name what is down. Why a check
// failed is logged, not answered.
type health struct {
	checks []check
	logger *slog.Logger
}

// ServeHTTP implements http.Handler.
func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	results := make(map[string]string, len(h.checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range h.checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
			defer cancel()
			state := "ok"
			if err := c.run(ctx); err != nil {
				state = "down"
				h.logger.WarnContext(r.Context(), "health check failed", "check", c.name, "error", err.Error())
			}
			mu.Lock()
			results[c.name] = state
			mu.Unlock()
		})
	}
	wg.Wait()
	var down []string
	for name, state := range results {
		if state != "ok" {
			down = append(down, name)
		}
	}
	if len(down) > 0 {
		sort.Strings(down)
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "down: "+strings.Join(down, ", "),
			map[string]any{"checks": results})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "checks": results})
}

// healthChecks are the stack's: DynamoDB answers a Scan of the table for at most one item, counting it rather than
// returning it, and the Step Functions engine answers DescribeStateMachine, through its API, for each state machine.
// Neither retries: a health check reports what is, now.
//
// Not DescribeTable: Dynoxide counts the table's items for its ItemCount on every DescribeTable, while it serves
// nothing else, so each probe would hold every other request for a time that grows with the table; the one-item Scan
// takes the same time at any size.
func (s *stack) healthChecks(awsCfg aws.Config, machines []string) []check {
	noRetries := func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }
	ddb := dynamodb.NewFromConfig(awsCfg, noRetries)
	sf := sfn.NewFromConfig(awsCfg, func(o *sfn.Options) { o.Retryer = aws.NopRetryer{} })
	table := s.names.table()
	return []check{
		{name: "dynamodb", run: func(ctx context.Context) error {
			_, err := ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(1), Select: ddbtypes.SelectCount})
			return err
		}},
		{name: "engine", run: func(ctx context.Context) error {
			for _, arn := range machines {
				if _, err := sf.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)}); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}
