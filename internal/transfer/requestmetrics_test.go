package transfer_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/metrics/metricstest"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// record returns the one EMF line the request before wrote, after the n lines seen so far; every line must pass the
// specification's checks.
func (h *harness) record(t *testing.T, seen *int) metricstest.Line {
	t.Helper()
	lines := h.metrics.Lines(t)
	if len(lines) != *seen+1 {
		t.Fatalf("%d metrics lines after %d, want one more per request:\n%s", len(lines), *seen, h.metrics.Bytes())
	}
	*seen = len(lines)
	l := lines[len(lines)-1]
	if l.Namespace != testMetricsNamespace || l.Timestamp != h.clock.Now().UnixMilli() {
		t.Errorf("namespace %q timestamp %d, want %q %d", l.Namespace, l.Timestamp, testMetricsNamespace, h.clock.Now().UnixMilli())
	}
	return l
}

// wantRequest checks the latency every request publishes, by route, and that the line publishes exactly the
// request metrics in want (besides RequestLatency), each with its dimension sets and values.
func wantRequest(t *testing.T, l metricstest.Line, route, status string, want map[string][]map[string]string) {
	t.Helper()
	lat := l.Metrics[transfer.MetricRequestLatency]
	if lat.Unit != "Milliseconds" || lat.Value < 0 {
		t.Errorf("RequestLatency = %+v", lat)
	}
	wantLat := []map[string]string{{"Service": "orchestrator"}, {"Service": "orchestrator", "Route": route}}
	if got := l.Dimensions(transfer.MetricRequestLatency); !reflect.DeepEqual(got, wantLat) {
		t.Errorf("RequestLatency dimensions = %v, want %v", got, wantLat)
	}
	if l.Root["statusCode"] != status {
		t.Errorf("statusCode = %v, want %s", l.Root["statusCode"], status)
	}
	for _, name := range []string{transfer.MetricTransfersAccepted, transfer.MetricTransfersReplayed, transfer.MetricTransfersRejected, transfer.MetricRedrives} {
		m, published := l.Metrics[name]
		dims, wanted := want[name]
		switch {
		case published != wanted:
			t.Errorf("%s published %v, want %v", name, published, wanted)
		case wanted && (m.Value != 1 || m.Unit != "Count"):
			t.Errorf("%s = %+v, want a Count of 1", name, m)
		case wanted && !reflect.DeepEqual(l.Dimensions(name), dims):
			t.Errorf("%s dimensions = %v, want %v", name, l.Dimensions(name), dims)
		}
	}
}

var byService = []map[string]string{{"Service": "orchestrator"}}

func rejectedWith(code string) map[string][]map[string]string {
	return map[string][]map[string]string{
		transfer.MetricTransfersRejected: {{"Service": "orchestrator"}, {"Service": "orchestrator", "Code": code}},
	}
}

// TestRequestMetrics follows one Idempotency-Key through acceptance, rejections and replays, and checks the one
// record each request writes.
func TestRequestMetrics(t *testing.T) {
	h := newHarness(t)
	seen := 0

	resp := h.post("metrics-1", aliceToBob)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d %s", resp.StatusCode, resp.Body)
	}
	var created transfer.Resource
	decode(t, resp, &created)
	l := h.record(t, &seen)
	wantRequest(t, l, "POST /transfers", "202", map[string][]map[string]string{transfer.MetricTransfersAccepted: byService})
	if l.Root["transferId"] != created.TransferID {
		t.Errorf("transferId = %v, want %s", l.Root["transferId"], created.TransferID)
	}
	raw := string(h.metrics.Bytes())
	if strings.Contains(raw, "invoice 2026-118") || strings.Contains(raw, "acc-alice") || strings.Contains(raw, "1250") {
		t.Errorf("the record carries the request body: %s", raw)
	}

	steps := []struct {
		name   string
		do     func() events.APIGatewayProxyResponse
		route  string
		status string
		want   map[string][]map[string]string
		// transferID is whether the record names the transfer.
		transferID bool
	}{
		{"a duplicate inside the window is rejected", func() events.APIGatewayProxyResponse { return h.post("metrics-1", aliceToBob) },
			"POST /transfers", "409", rejectedWith("REQUEST_IN_PROGRESS"), true},
		{"an invalid body is rejected with its code", func() events.APIGatewayProxyResponse {
			return h.post("metrics-2", `{"sourceAccountId":"acc-alice","amount":-1}`)
		}, "POST /transfers", "400", rejectedWith("VALIDATION_ERROR"), false},
		{"a missing key is rejected with its code", func() events.APIGatewayProxyResponse { return h.post("", aliceToBob) },
			"POST /transfers", "400", rejectedWith("IDEMPOTENCY_KEY_MISSING"), false},
		{"the key with another payload is rejected", func() events.APIGatewayProxyResponse {
			return h.post("metrics-1", strings.Replace(aliceToBob, "1250", "1251", 1))
		}, "POST /transfers", "422", rejectedWith("IDEMPOTENCY_KEY_REUSED"), true},
		{"a replay past the window re-drives the start", func() events.APIGatewayProxyResponse {
			h.clock.Advance(11 * time.Second)
			return h.post("metrics-1", aliceToBob)
		}, "POST /transfers", "202", map[string][]map[string]string{
			transfer.MetricTransfersReplayed: byService, transfer.MetricRedrives: byService}, true},
		{"a replay inside the re-drive window only replays", func() events.APIGatewayProxyResponse { return h.post("metrics-1", aliceToBob) },
			"POST /transfers", "202", map[string][]map[string]string{transfer.MetricTransfersReplayed: byService}, true},
		{"a replay of a settled transfer", func() events.APIGatewayProxyResponse {
			settle(t, h, created.TransferID, "FAILED", "INSUFFICIENT_FUNDS")
			return h.post("metrics-1", aliceToBob)
		}, "POST /transfers", "200", map[string][]map[string]string{transfer.MetricTransfersReplayed: byService}, true},
		{"a read is counted by its route template, not its path", func() events.APIGatewayProxyResponse { return h.get(created.TransferID, "") },
			"GET /transfers/{transferId}", "200", nil, false},
		{"an unknown transfer is a rejection", func() events.APIGatewayProxyResponse { return h.get("tr_nope", "") },
			"GET /transfers/{transferId}", "404", rejectedWith("TRANSFER_NOT_FOUND"), false},
		{"history", func() events.APIGatewayProxyResponse {
			return h.getPath("/transfers/{transferId}/history", "/transfers/"+created.TransferID+"/history",
				map[string]string{"transferId": created.TransferID}, nil)
		}, "GET /transfers/{transferId}/history", "200", nil, false},
		{"an account", func() events.APIGatewayProxyResponse {
			return h.getPath("/accounts/{accountId}", "/accounts/acc-nobody", map[string]string{"accountId": "acc-nobody"}, nil)
		}, "GET /accounts/{accountId}", "404", rejectedWith("ACCOUNT_NOT_FOUND"), false},
		{"no route", func() events.APIGatewayProxyResponse {
			return h.do(events.APIGatewayProxyRequest{Resource: "/admin/{proxy+}", Path: "/admin/x", HTTPMethod: http.MethodGet})
		}, transfer.RouteOther, "404", rejectedWith("NOT_FOUND"), false},
		{"a method the route does not serve", func() events.APIGatewayProxyResponse {
			return h.do(events.APIGatewayProxyRequest{Resource: "/transfers", Path: "/transfers", HTTPMethod: http.MethodDelete})
		}, transfer.RouteOther, "405", rejectedWith("METHOD_NOT_ALLOWED"), false},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			resp := st.do()
			if fmt.Sprint(resp.StatusCode) != st.status {
				t.Fatalf("status %d, want %s: %s", resp.StatusCode, st.status, resp.Body)
			}
			l := h.record(t, &seen)
			wantRequest(t, l, st.route, st.status, st.want)
			if got := l.Root["transferId"]; (got == created.TransferID) != st.transferID {
				t.Errorf("transferId = %v, want it named: %v", got, st.transferID)
			}
		})
	}
}

// TestDependencyFailureMetrics: a request that meets a throttled Step Functions is rejected with
// SERVICE_UNAVAILABLE, and its record names the transfer it reserved.
func TestDependencyFailureMetrics(t *testing.T) {
	h := newHarness(t, withoutRetries)
	h.sfn.setFault(func(int64) sfnFault { return sfnThrottle })
	resp := h.post("metrics-throttled", aliceToBob)
	wantProblem(t, resp, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	seen := 0
	l := h.record(t, &seen)
	wantRequest(t, l, "POST /transfers", "503", rejectedWith("SERVICE_UNAVAILABLE"))
	recs := h.records()
	if len(recs) != 1 || l.Root["transferId"] != recs[0].TransferID {
		t.Errorf("transferId = %v, records %v", l.Root["transferId"], recs)
	}
}
