package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/smithy-go"
)

// throttleCodes are the DynamoDB error codes that mean "slow down or try later", not "your request is wrong".
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
	"TransactionInProgressException":         true,
}

// translate maps DynamoDB errors callers branch on to this package's sentinels, keeping the original in the chain.
// Throttling, server faults and transport failures (no API error at all) become ErrUnavailable.
func translate(err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if throttleCodes[apiErr.ErrorCode()] || apiErr.ErrorFault() == smithy.FaultServer {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
