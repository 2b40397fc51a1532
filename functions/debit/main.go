// Command debit is the workflow's debit function: it applies a transfer's DEBIT leg exactly once.
package main

import (
	"github.com/transferflow/orchestrator/internal/fnconfig"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// about is what --help says the executable is.
const about = "debit: the workflow's debit Lambda function, which applies a transfer's DEBIT leg exactly once"

// main starts the function even when its configuration is unusable: it then answers every invocation with a
// ConfigurationError naming the variable (fnconfig). Started by hand with arguments, it answers --help instead.
func main() {
	fnconfig.Main("DebitFunction", about, transfer.LoadLedgerConfig, transfer.DebitFunction)
}
