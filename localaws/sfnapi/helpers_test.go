package sfnapi_test

import (
	"errors"
	"testing"

	"github.com/aws/smithy-go"
)

// apiErrorCase is a request the API refuses: call makes it and returns its error, which must be the typed error
// wantErr points to (for errors.As) and, when wantMsg is set, have that message exactly.
type apiErrorCase struct {
	name    string
	call    func() error
	wantErr any
	wantMsg string
}

// checkAPIErrors runs each case as a subtest named by the case.
func checkAPIErrors(t *testing.T, tests []apiErrorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkAPIError(t, tt.call(), tt.wantErr, tt.wantMsg)
		})
	}
}

// checkAPIError checks that err is the typed error wantErr points to and, when wantMsg is set, that its message is
// wantMsg. A wantErr of *smithy.APIError is the generic API error the SDK reports for an error an operation does
// not model, which must then be a ValidationException.
func checkAPIError(t *testing.T, err error, wantErr any, wantMsg string) {
	t.Helper()
	if !errors.As(err, wantErr) {
		t.Fatalf("error = %v (%T), want %T", err, err, wantErr)
	}
	var generic smithy.APIError
	if _, ok := wantErr.(*smithy.APIError); ok && (!errors.As(err, &generic) || generic.ErrorCode() != "ValidationException") {
		t.Fatalf("err = %v, want ValidationException", err)
	}
	var api interface{ ErrorMessage() string }
	if wantMsg != "" && (!errors.As(err, &api) || api.ErrorMessage() != wantMsg) {
		t.Fatalf("message = %v, want %q", err, wantMsg)
	}
}

// errOf is the error of an SDK call, its output dropped.
func errOf[T any](_ T, err error) error { return err }
