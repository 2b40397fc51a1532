package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// TestClientThatGoesAwayStillGetsItsWorkflow: a client that closes its connection before the answer does not end
// the orchestrator's invocation (API Gateway does not end a Lambda invocation when its client goes away), so the
// transfer is reserved and its workflow started and completed without the reconciler's sweep; the client's retry
// with the same key is a replay of it.
func TestClientThatGoesAwayStillGetsItsWorkflow(t *testing.T) {
	t.Parallel()
	// The orchestrator answers 1 s late, long after the client has gone; the sweep would take minutes.
	s := startStack(t, "--fault", "orchestrator:delay=1s:times=1")
	body, _ := json.Marshal(transferBody("acc-alice", "acc-bob", 432, "EUR"))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.API+"/transfers", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "e2e-client-gone")
	client := &http.Client{Transport: &http.Transport{}} // its own connection, closed when the request is cancelled
	if resp, err := client.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			resp.Body.Close()
		}
		t.Fatalf("the client got %v before it went away; want no answer within 200 ms", err)
	}

	var exec sfntypes.ExecutionListItem
	for deadline := time.Now().Add(settle); ; time.Sleep(50 * time.Millisecond) {
		if ex := s.executions(); len(ex) == 1 && ex[0].Status == sfntypes.ExecutionStatusSucceeded {
			exec = ex[0]
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("executions after %s: %+v, want the transfer's one, succeeded\n%s", settle, ex, tail(s.stderr.String(), 4000))
		}
	}
	replay := s.submit("e2e-client-gone", transferBody("acc-alice", "acc-bob", 432, "EUR"))
	if replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || replay.Body["status"] != "COMPLETED" ||
		replay.Body["transferId"] != *exec.Name {
		t.Errorf("retry: %d %v %s, want 200, a replay of transfer %s, COMPLETED", replay.Status, replay.Header, replay.RawBody, *exec.Name)
	}
	if a := s.balance("acc-alice"); a != 100000-432 {
		t.Errorf("alice %d, want %d", a, 100000-432)
	}
}
