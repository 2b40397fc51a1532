// Package transferclient is a client of the transfer API (POST /transfers, GET /transfers/{id},
// GET /transfers/{id}/history, POST /accounts, GET /accounts/{id}, GET /accounts/{id}/transfers) for people and
// scripts. With Client.Operator it calls the same routes under /operator/, with the operator's rights, and
// AssignOwner (PUT /operator/accounts/{id}/owner).
//
// A Client retries safely: a submission is repeated with the same Idempotency-Key and the same body bytes after a
// network error, a timeout, a 5xx, a 429 or a 409 REQUEST_IN_PROGRESS, honouring Retry-After, and never after any
// other 4xx. Errors the API answers with application/problem+json become *APIError. Requests can be signed with
// SigV4 (SigV4Signer) for an API Gateway protected by AWS_IAM. Timeline renders an execution history for reading.
package transferclient
