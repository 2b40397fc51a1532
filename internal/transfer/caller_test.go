package transfer_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/transfer"
)

const (
	roleSession1 = "arn:aws:sts::123456789012:assumed-role/payments-writer/session-1"
	roleSession2 = "arn:aws:sts::123456789012:assumed-role/payments-writer/session-2"
	roleSession3 = "arn:aws:sts::123456789012:assumed-role/payments-writer/i-0abc123def4567890"
	otherRole    = "arn:aws:sts::123456789012:assumed-role/reporting/session-1"
)

// as returns req made by the IAM principal userArn.
func as(userArn string, req events.APIGatewayProxyRequest) events.APIGatewayProxyRequest {
	req.RequestContext.Identity.UserArn = userArn
	return req
}

func historyReq(id string) events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{Resource: "/transfers/{transferId}/history", Path: "/transfers/" + id + "/history",
		HTTPMethod: http.MethodGet, PathParameters: map[string]string{"transferId": id}}
}

// TestAssumedRoleKeepsItsScopeAcrossSessions: a client that restarts with fresh credentials (a new role session) and
// retries with the same Idempotency-Key gets its transfer back instead of starting a second one.
func TestAssumedRoleKeepsItsScopeAcrossSessions(t *testing.T) {
	h := newHarness(t)
	first := h.do(as(roleSession1, postReq("restart-1", "application/json", aliceToBob)))
	if first.StatusCode != http.StatusAccepted || first.Headers["Idempotent-Replayed"] != "" {
		t.Fatalf("first POST: status %d, headers %v, body %s", first.StatusCode, first.Headers, first.Body)
	}
	var created transfer.Resource
	decode(t, first, &created)

	// The client's first reply was lost; it restarts after the reservation window and retries from a new session.
	h.clock.Advance(11 * time.Second)
	replayed := wantReplay(t, h.do(as(roleSession2, postReq("restart-1", "application/json", aliceToBob))), http.StatusAccepted)
	if replayed.TransferID != created.TransferID {
		t.Fatalf("retry from a new session got transfer %s, want %s", replayed.TransferID, created.TransferID)
	}
	if n := h.sfn.created.Load(); n != 1 {
		t.Fatalf("executions created = %d, want 1", n)
	}
	if n := len(h.records()); n != 1 {
		t.Fatalf("transfer records = %d, want 1", n)
	}

	// The same key from another role is another caller's key: a transfer of its own.
	other := h.do(as(otherRole, postReq("restart-1", "application/json", aliceToBob)))
	if other.StatusCode != http.StatusAccepted || other.Headers["Idempotent-Replayed"] != "" {
		t.Fatalf("another role: status %d, headers %v, body %s", other.StatusCode, other.Headers, other.Body)
	}
	var theirs transfer.Resource
	decode(t, other, &theirs)
	if theirs.TransferID == created.TransferID {
		t.Fatal("another role replayed this role's transfer")
	}
	if n := h.sfn.created.Load(); n != 2 {
		t.Errorf("executions created = %d, want 2", n)
	}

	// Reads follow the role, whatever the session; another role does not learn the transfer exists.
	if resp := h.get(created.TransferID, roleSession3); resp.StatusCode != http.StatusOK {
		t.Errorf("GET from a third session of the role: status %d, body %s", resp.StatusCode, resp.Body)
	}
	wantProblem(t, h.get(created.TransferID, otherRole), http.StatusNotFound, "TRANSFER_NOT_FOUND")
	if resp := h.do(as(roleSession3, historyReq(created.TransferID))); resp.StatusCode != http.StatusOK {
		t.Errorf("history from a third session of the role: status %d, body %s", resp.StatusCode, resp.Body)
	}
	wantProblem(t, h.do(as(otherRole, historyReq(created.TransferID))), http.StatusNotFound, "TRANSFER_NOT_FOUND")
}

// TestUnsupportedCallerIsRefused: a userArn CallerScope has no rule for gets 403 on every route that scopes by caller,
// and nothing is written or started.
func TestUnsupportedCallerIsRefused(t *testing.T) {
	h := newHarness(t)
	// A transfer of a supported caller, to read back with the unsupported ones.
	var tr transfer.Resource
	decode(t, h.do(as(roleSession1, postReq("k-1", "application/json", aliceToBob))), &tr)
	before := h.items()

	for _, arn := range []string{
		"arn:aws:sts::123456789012:assumed-role/payments-writer", // no session
		"arn:aws:sts::123:assumed-role/R/S/extra",
		"arn:aws:iam::123456789012:role/payments-writer", // a role ARN is never a caller
		"arn:aws:s3:::bucket",
		"payments-writer",
	} {
		t.Run(arn, func(t *testing.T) {
			wantProblem(t, h.do(as(arn, postReq("k-2", "application/json", aliceToBob))), http.StatusForbidden, "CALLER_NOT_SUPPORTED")
			wantProblem(t, h.do(as(arn, postReq("k-1", "application/json", aliceToBob))), http.StatusForbidden, "CALLER_NOT_SUPPORTED")
			wantProblem(t, h.get(tr.TransferID, arn), http.StatusForbidden, "CALLER_NOT_SUPPORTED")
			wantProblem(t, h.do(as(arn, historyReq(tr.TransferID))), http.StatusForbidden, "CALLER_NOT_SUPPORTED")
		})
	}
	if n := h.items(); n != before {
		t.Errorf("items = %d after the refused requests, want %d", n, before)
	}
	if n := h.sfn.calls.Load(); n != 1 {
		t.Errorf("StartExecution calls = %d, want only the supported caller's 1", n)
	}
}

// TestUnsupportedCallerWritesNothing: on an empty table, a refused POST leaves it empty.
func TestUnsupportedCallerWritesNothing(t *testing.T) {
	h := newHarness(t)
	wantProblem(t, h.do(as("arn:aws:sts::123456789012:assumed-role/R", postReq("k-1", "application/json", aliceToBob))),
		http.StatusForbidden, "CALLER_NOT_SUPPORTED")
	if n := h.items(); n != 0 {
		t.Errorf("items = %d, want 0", n)
	}
	if n := h.sfn.calls.Load(); n != 0 {
		t.Errorf("StartExecution calls = %d, want 0", n)
	}
}
