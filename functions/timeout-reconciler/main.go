// Command timeout-reconciler settles transfers whose workflow timed out, was aborted or failed, and sweeps transfers
// stuck IN_PROGRESS (EventBridge rule and schedule in template.yaml).
package main

import (
	"github.com/transferflow/orchestrator/internal/fnconfig"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// about is what --help says the executable is.
const about = "timeout-reconciler: the Lambda function that settles transfers whose workflow timed out, was aborted or failed, and sweeps transfers stuck IN_PROGRESS"

// main starts the function even when its configuration is unusable: it then answers every invocation with a
// ConfigurationError naming the variable (fnconfig). Started by hand with arguments, it answers --help instead.
func main() {
	fnconfig.Main("TimeoutReconcilerFunction", about, transfer.LoadReconcilerConfig, transfer.ReconcilerFunction)
}
