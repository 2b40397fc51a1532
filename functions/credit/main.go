// Command credit is the workflow's credit function: it applies a transfer's CREDIT leg, or its compensating
// REFUND, exactly once.
package main

import (
	"github.com/transferflow/orchestrator/internal/fnconfig"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// about is what --help says the executable is.
const about = "credit: the workflow's credit Lambda function, which applies a transfer's CREDIT leg, or its compensating REFUND, exactly once"

// main starts the function even when its configuration is unusable: it then answers every invocation with a
// ConfigurationError naming the variable (fnconfig). Started by hand with arguments, it answers --help instead.
func main() {
	fnconfig.Main("CreditFunction", about, transfer.LoadLedgerConfig, transfer.CreditFunction)
}
