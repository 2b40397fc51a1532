package fnconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
)

type testConfig struct{ Table string }

func loadTestConfig(getenv func(string) string) (testConfig, error) {
	c := testConfig{Table: getenv("TABLE_NAME")}
	if c.Table == "" {
		return testConfig{}, errors.New("TABLE_NAME is required")
	}
	return c, nil
}

func wireTest(_ aws.Config, c testConfig) any {
	return func(context.Context, json.RawMessage) (string, error) { return "table " + c.Table, nil }
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string // the response, or the error message for a ConfigurationError
		wantErr bool
	}{
		{name: "configured", env: map[string]string{"TABLE_NAME": "Transfers"}, want: `"table Transfers"`},
		{name: "a variable missing", env: map[string]string{}, want: "function configuration: TABLE_NAME is required", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			h := lambda.NewHandler(Handler(context.Background(), logger, func(k string) string { return tt.env[k] }, loadTestConfig, wireTest))
			for range 2 { // every invocation gets the same answer; the error is logged once, at start
				out, err := h.Invoke(context.Background(), []byte(`{}`))
				if !tt.wantErr {
					if err != nil || string(out) != tt.want {
						t.Fatalf("Invoke = %s, %v", out, err)
					}
					continue
				}
				var ce *ConfigurationError
				if !errors.As(err, &ce) || err.Error() != tt.want {
					t.Fatalf("Invoke error = %T %v, want a *ConfigurationError %q", err, err, tt.want)
				}
				// Lambda names a function error by the Go type of the error returned, unwrapped.
				if _, ok := err.(*ConfigurationError); !ok {
					t.Errorf("the handler returned %T, not the *ConfigurationError itself", err)
				}
			}
			if n := strings.Count(logs.String(), `"msg":"configuration"`); (n == 1) != tt.wantErr {
				t.Errorf("configuration logged %d times:\n%s", n, logs.String())
			}
		})
	}
}
