package sfnapi

import "strings"

// diagnosticCodes are the ValidateStateMachineDefinition error codes a validation message can start with
// ("INVALID_JSONATA_EXPRESSION: …"); any other message is a SCHEMA_VALIDATION_FAILED.
var diagnosticCodes = []string{"INVALID_JSONATA_EXPRESSION", "UNSUPPORTED_JSONATA_EXPRESSION"}

// diagnosticCode splits a validation message into its diagnostic code and the message without it.
func diagnosticCode(msg string) (code, rest string) {
	for _, c := range diagnosticCodes {
		if r, ok := strings.CutPrefix(msg, c+": "); ok {
			return c, r
		}
	}
	return "SCHEMA_VALIDATION_FAILED", msg
}
