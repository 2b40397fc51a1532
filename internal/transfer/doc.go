// Package transfer holds the transfer orchestrator's domain handlers: the API function (Orchestrator) with its
// request validation and idempotency rules, the consumer-side interfaces it needs, and the wiring that both the Lambda
// entry points and the local stack call.
package transfer
