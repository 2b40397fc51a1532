package e2e

import "net/http"

// submitAccepted submits body with the Idempotency-Key key and fails the test at once unless the stack accepts it
// (202); it returns the transfer's id. what names the transfer in the failure.
func (s *stack) submitAccepted(what, key string, body map[string]any) string {
	s.t.Helper()
	r := s.submit(key, body)
	if r.Status != http.StatusAccepted {
		s.t.Fatalf("%s: %d %s", what, r.Status, r.RawBody)
	}
	return r.Body["transferId"].(string)
}

// waitCompleted waits for the transfer id to end (waitTerminal, within settle) and fails the test at once unless it
// is COMPLETED. what names the transfer in the failure.
func (s *stack) waitCompleted(what, id string) {
	s.t.Helper()
	if tr := s.waitTerminal(id, settle); tr["status"] != "COMPLETED" {
		s.t.Fatalf("%s = %v, want COMPLETED", what, tr)
	}
}
