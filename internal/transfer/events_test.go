package transfer_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/transfer"
)

// loadEvent decodes a `sam local invoke` payload from events/ strictly: a field the proxy event type does not know
// is an error, so the files cannot drift from what API Gateway sends.
func loadEvent(t *testing.T, name string) events.APIGatewayProxyRequest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var ev events.APIGatewayProxyRequest
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// TestOrchestratorEvents runs the events in order against the handler, as a user of `sam local invoke` would.
func TestOrchestratorEvents(t *testing.T) {
	h := newHarness(t)
	var created transfer.Resource

	t.Run("new transfer", func(t *testing.T) {
		resp := h.do(loadEvent(t, "orchestrator-new-transfer.json"))
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("status %d body %s", resp.StatusCode, resp.Body)
		}
		decode(t, resp, &created)
	})
	t.Run("replay", func(t *testing.T) {
		h.clock.Advance(time.Minute)
		got := wantReplay(t, h.do(loadEvent(t, "orchestrator-replay.json")), http.StatusAccepted)
		if got.TransferID != created.TransferID {
			t.Errorf("replayed %s, want %s", got.TransferID, created.TransferID)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		wantProblem(t, h.do(loadEvent(t, "orchestrator-missing-key.json")), http.StatusBadRequest, "IDEMPOTENCY_KEY_MISSING")
	})
	t.Run("bad body", func(t *testing.T) {
		p := wantProblem(t, h.do(loadEvent(t, "orchestrator-bad-body.json")), http.StatusBadRequest, "VALIDATION_ERROR")
		if len(p.Errors) != 4 {
			t.Errorf("errors = %+v, want memo, destinationAccountId, amount and currency", p.Errors)
		}
	})
	t.Run("get", func(t *testing.T) {
		ev := loadEvent(t, "orchestrator-get-transfer.json")
		// As shipped, the event names a transfer that does not exist here.
		wantProblem(t, h.do(ev), http.StatusNotFound, "TRANSFER_NOT_FOUND")
		ev.PathParameters["transferId"] = created.TransferID
		resp := h.do(ev)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d body %s", resp.StatusCode, resp.Body)
		}
	})
	if n := h.sfn.created.Load(); n != 1 {
		t.Errorf("executions = %d, want 1", n)
	}
}
