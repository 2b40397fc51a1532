//go:build !enginebench

package main

import "github.com/transferflow/orchestrator/internal/loadbench"

// engine is nil without the enginebench build tag: the run leaves the engine row out and says so. The lead wires
// package enginebench by deleting this file and the build tag of engine.go.
var engine loadbench.EngineFunc
