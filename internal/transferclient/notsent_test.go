package transferclient

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestRetryErrorSaysWhetherTheRequestWasSent: attempts refused at connect leave NotSent true (nothing can have been
// acted on); an attempt that reached a server, even one that closed the connection without answering, makes it
// false.
func TestRetryErrorSaysWhetherTheRequestWasSent(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String()
	refused.Close()

	hangUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hangUp.Close() })
	go func() {
		for {
			c, err := hangUp.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf) // the request arrived
			c.Close()
		}
	}()

	for _, tt := range []struct {
		name, endpoint string
		notSent        bool
	}{
		{name: "refused at connect", endpoint: refusedURL, notSent: true},
		{name: "sent, then the connection closed", endpoint: "http://" + hangUp.Addr().String(), notSent: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{Endpoint: tt.endpoint, MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
			_, err := c.Get(context.Background(), "tr_1")
			var re *RetryError
			if !errors.As(err, &re) || re.NotSent != tt.notSent {
				t.Fatalf("err = %#v, want a RetryError with NotSent %v", err, tt.notSent)
			}
		})
	}
}
