// Command orchestrator is the transfer API's Lambda function (API Gateway proxy integration).
package main

import (
	"github.com/transferflow/orchestrator/internal/fnconfig"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// about is what --help says the executable is.
const about = "orchestrator: the transfer API's Lambda function (API Gateway proxy integration)"

// main starts the function even when its configuration is unusable: it then answers every invocation with a
// ConfigurationError naming the variable (fnconfig). Started by hand with arguments, it answers --help instead.
func main() {
	fnconfig.Main("OrchestratorFunction", about, transfer.LoadConfig, transfer.OrchestratorFunction)
}
