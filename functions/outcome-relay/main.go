// Command outcome-relay publishes each settled transfer's outcome event: the transactional outbox's relay, triggered
// by the transfer table's stream (template.yaml, OutcomeRelayFunction).
package main

import (
	"github.com/transferflow/orchestrator/internal/fnconfig"
	"github.com/transferflow/orchestrator/internal/transfer"
)

// about is what --help says the executable is.
const about = "outcome-relay: the Lambda function that publishes the outcome event of every transfer the table's stream shows settling"

// main starts the function even when its configuration is unusable: it then answers every invocation with a
// ConfigurationError naming the variable (fnconfig). Started by hand with arguments, it answers --help instead.
func main() {
	fnconfig.Main("OutcomeRelayFunction", about, transfer.LoadRelayConfig, transfer.OutcomeRelayFunction)
}
