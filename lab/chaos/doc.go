// Package chaos is the chaos campaign (`make chaos`, `make chaos-quick`): it starts the local stack
// (bin/local, package stack) as a separate process on a --data-dir, drives the transfer API from concurrent
// clients that retry as real clients do (duplicates, replays after timeouts, the same key with another payload,
// new role sessions), turns on every fault kind of --fault over time, kill -9s and restarts the stack at points
// chosen from a seed, and after quiescence checks the money invariants of docs/api.md from the table
// itself (Check).
//
// Every random choice (the clients' actions, the transfers, the fault sets, the kill points, counted in accepted
// transfers rather than in time) comes from one seed through NewPlan, so a run can be replayed with CHAOS_SEED. What
// a seed cannot fix is the interleaving of goroutines and processes; a failing seed reproduces the same schedule of
// the same requests, faults and kills.
package chaos
