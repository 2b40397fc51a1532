package transfer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// workflowErrors are the error types the handlers return, by the name the ASL matches.
var workflowErrors = map[string]error{
	"InsufficientFunds":     &InsufficientFunds{},
	"AccountNotFound":       &AccountNotFound{},
	"CurrencyMismatch":      &CurrencyMismatch{},
	"TransferNotInProgress": &TransferNotInProgress{},
	"DebitNotApplied":       &DebitNotApplied{},
	"CreditAlreadyApplied":  &CreditAlreadyApplied{},
	"RefundAlreadyApplied":  &RefundAlreadyApplied{},
	"InvalidLegInput":       &InvalidLegInput{},
	"TransientError":        &TransientError{},
}

// lambdaErrorType is the name the Lambda runtime (aws-lambda-go's lambdaErrorResponse) reports for err.
func lambdaErrorType(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}

// wantErrorType fails the test at once unless err is an error Lambda would report under the name want.
func wantErrorType(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", want)
	}
	if got := lambdaErrorType(err); got != want {
		t.Fatalf("error = %v (%s), want %s", err, got, want)
	}
}

// aslErrorNames collects every ErrorEquals name in an ASL document, however deep.
func aslErrorNames(v any, names map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if list, ok := child.([]any); ok && k == "ErrorEquals" {
				for _, n := range list {
					names[n.(string)] = true
				}
				continue
			}
			aslErrorNames(child, names)
		}
	case []any:
		for _, child := range v {
			aslErrorNames(child, names)
		}
	}
}

func TestEveryASLErrorNameIsAGoType(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "statemachine", "transfer.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	aslErrorNames(doc, names)
	var own []string
	for n := range names {
		// States.*, the Lambda service's errors, DynamoDB's and EventBridge's come from the platform, not from errors.go.
		if !strings.HasPrefix(n, "States.") && !strings.HasPrefix(n, "Lambda.") && !strings.HasPrefix(n, "DynamoDB.") &&
			!strings.HasPrefix(n, "Sandbox.") && !strings.HasPrefix(n, "EventBridge.") {
			own = append(own, n)
		}
	}
	slices.Sort(own)
	if len(own) < 5 {
		t.Fatalf("the ASL matches only %v; the walk found too little", own)
	}
	for _, n := range own {
		if _, ok := workflowErrors[n]; !ok {
			t.Errorf("the ASL matches %q, which is no workflow error type in errors.go", n)
		}
	}
	for name, e := range workflowErrors {
		if got := lambdaErrorType(e); got != name {
			t.Errorf("type %T reports as %q, want %q", e, got, name)
		}
		if !names[name] {
			t.Errorf("workflow error %s is matched nowhere in the ASL", name)
		}
	}
}
