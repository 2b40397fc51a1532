// Package loadbench measures the local stack from outside, against its performance targets: it starts bin/local as a separate
// process (package stack) on a fresh store, drives the transfer API, and reports one table and one JSON
// document (Result). Two stacks run one after the other on the same DynamoDB server: an attribution stack behind a
// counting proxy (package ddbproxy), and the measured stack, which talks to the server directly so that the proxy's
// hop does not count against it.
//
// The sections of a run, in order:
//
//   - DynamoDB attribution, on the attribution stack: a few new transfers, one at a time, each POST's requests
//     counted up to its answer and the workflow's after it (that stack runs with --fault debit:delay for exactly
//     these debits, so the workflow cannot overlap the POST), then replays of the same key and body; the first
//     transfer's requests are kept as the template of the store test. Transitions and Lambda invocations come from
//     the executions' histories (GetExecutionHistory on the ready line's sfn endpoint).
//   - Closed loop: clients that POST and then poll GET /transfers/{id} until the transfer is terminal, at several
//     concurrencies, once across many well-funded accounts and once between 4 hot accounts.
//   - Burst: clients that POST without waiting, over a few accounts, then the wait until every transfer is
//     terminal (drain time).
//   - Open loop: POSTs issued on a fixed schedule at half the closed loop's peak, latency measured from each
//     request's scheduled time (no coordinated omission).
//   - Store limit: the template's requests, with fresh identifiers and accounts, sent straight to the DynamoDB
//     server at the closed loop's concurrencies; efficiency = transfers/s × requests per transfer ÷ direct
//     requests/s.
//   - Engine: executions/s of the Step Functions engine against the npm engine, through an EngineFunc.
//   - Memory: the resident set (VmRSS) of bin/local and of the DynamoDB server at start, after 1,000 transfers,
//     and after a long closed-loop run.
//   - Cost of 1,000,000 transfers on AWS at list prices, from the figures above.
//
// The pure parts (percentiles, the cost formula, history analysis, the table, verdicts) are functions of their
// inputs and tested on their own.
package loadbench
