package ddbserver

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
)

// TestStartPicksAnotherPortWhenItsPortWasTaken: when another process takes the free port Start picked before
// Dynoxide listens on it, Dynoxide exits saying the port is in use and Start tries a newly picked one, where the
// server starts. The other process is a listener of this test: one that never answers, and one that answers the
// health check as another test's Dynoxide would (Start must not take that server for its own: the stack would then
// run against it, and stop once its own Dynoxide had exited).
func TestStartPicksAnotherPortWhenItsPortWasTaken(t *testing.T) {
	bin, err := BinaryPath()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v: `make test` installs Dynoxide", err)
		}
		t.Skipf("Dynoxide is not installed (%v): `make test` installs it", err)
	}
	for _, tt := range []struct {
		name    string
		answers bool
	}{
		{"by a listener that never answers", false},
		{"by a server that answers as Dynoxide does", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var taken net.Listener
			if tt.answers {
				other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
				defer other.Close()
				taken = other.Listener
			} else {
				if taken, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
					t.Fatal(err)
				}
				defer taken.Close()
			}
			takenPort := taken.Addr().(*net.TCPAddr).Port
			picks := 0
			pick := freePort
			freePort = func(host string) (int, error) {
				picks++
				if picks == 1 {
					return takenPort, nil
				}
				return pick(host)
			}
			t.Cleanup(func() { freePort = pick })

			s, err := Start(context.Background(), Options{Binary: bin})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer s.Close()
			if picks != 2 || s.Addr == net.JoinHostPort("127.0.0.1", strconv.Itoa(takenPort)) {
				t.Errorf("server at %s after %d picks, want a second pick away from the taken port %d", s.Addr, picks, takenPort)
			}
		})
	}
}
