package main

import (
	"context"

	"github.com/transferflow/orchestrator/lab/enginebench"
	"github.com/transferflow/orchestrator/lab/loadbench"
)

// engine measures the engine against aws-local-stepfunctions with package enginebench.
var engine loadbench.EngineFunc = func(ctx context.Context, executions, concurrency int, nodeDir string) (loadbench.EngineResult, error) {
	res, err := enginebench.Run(ctx, enginebench.Options{Executions: executions, Concurrency: concurrency, NodeDir: nodeDir})
	if err != nil {
		return loadbench.EngineResult{}, err
	}
	out := loadbench.EngineResult{NodeVersion: res.NodeVersion, NodePackageVersion: res.NodePackageVersion}
	for _, r := range res.Rows {
		out.Rows = append(out.Rows, loadbench.EngineRow{Definition: r.Definition, GoPerSec: r.GoPerSec, NodePerSec: r.NodePerSec, Ratio: r.Ratio})
	}
	return out, nil
}
