// Package ledger is the DynamoDB adapter of the transfer orchestrator: the item structs, their keys, the conditional
// writes and the translation of DynamoDB errors into the errors callers branch on.
//
// Every item lives in one table (TABLE_NAME) with a string partition key pk and sort key sk:
//
//	TRANSFER#<keyHash>   TRANSFER        the transfer record, which is also the idempotency record of its key
//	ACCOUNT#<accountId>  ACCOUNT         an account: kind (customer or funding), balance, currency, version
//	ACCOUNTKEY#<keyHash> ACCOUNTKEY      the idempotency record of a POST /accounts key
//	LEDGER#<transferId>  DEBIT|CREDIT|REFUND  one ledger leg of a transfer, also in the AccountActivity index
//
// keyHash is derived from the caller's scope and the Idempotency-Key, so a new request costs one conditional PutItem
// and a duplicate is answered from that same request's ALL_OLD image. The transfer id embeds the key hash, so a read
// by id is one GetItem. docs/data-model.md describes every attribute.
package ledger
