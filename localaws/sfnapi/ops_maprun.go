package sfnapi

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

func (s *Server) listMapRuns(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		pageRequest
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	runs, err := s.eng.ListMapRuns(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	pg := byNewest("ListMapRuns", []string{in.ExecutionArn},
		func(r sfnengine.MapRun) time.Time { return r.StartDate }, func(r sfnengine.MapRun) string { return r.Arn })
	return pg.list(s.eng.Now(), runs, in.pageRequest, "mapRuns", func(r sfnengine.MapRun) any {
		item := map[string]any{"executionArn": r.ExecutionArn, "mapRunArn": r.Arn, "stateMachineArn": r.StateMachineArn,
			"startDate": epoch(r.StartDate)}
		if r.StopDate != nil {
			item["stopDate"] = epoch(*r.StopDate)
		}
		return item
	})
}

func (s *Server) describeMapRun(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		MapRunArn string `json:"mapRunArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	r, err := s.eng.DescribeMapRun(ctx, in.MapRunArn)
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"mapRunArn":                  r.Arn,
		"executionArn":               r.ExecutionArn,
		"status":                     r.Status,
		"startDate":                  epoch(r.StartDate),
		"maxConcurrency":             r.MaxConcurrency,
		"toleratedFailurePercentage": r.ToleratedFailurePercentage,
		"toleratedFailureCount":      r.ToleratedFailureCount,
		"itemCounts":                 mapRunCounts(r.ItemCounts),
		"executionCounts":            mapRunCounts(r.ExecutionCounts),
		"redriveCount":               r.RedriveCount,
	}
	if r.StopDate != nil {
		out["stopDate"] = epoch(*r.StopDate)
	}
	if r.RedriveDate != nil {
		out["redriveDate"] = epoch(*r.RedriveDate)
	}
	return out, nil
}

// mapRunCounts renders MapRunItemCounts/MapRunExecutionCounts; nothing is written to S3 or waits for a redrive.
func mapRunCounts(c sfnengine.MapRunCounts) map[string]any {
	return map[string]any{"pending": c.Pending, "running": c.Running, "succeeded": c.Succeeded, "failed": c.Failed,
		"timedOut": c.TimedOut, "aborted": c.Aborted, "total": c.Total, "resultsWritten": c.ResultsWritten,
		"failuresNotRedrivable": 0, "pendingRedrive": 0}
}

func (s *Server) updateMapRun(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		MapRunArn                  string   `json:"mapRunArn"`
		MaxConcurrency             *int64   `json:"maxConcurrency"`
		ToleratedFailurePercentage *float64 `json:"toleratedFailurePercentage"`
		ToleratedFailureCount      *int64   `json:"toleratedFailureCount"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if p := in.ToleratedFailurePercentage; p != nil && (*p < 0 || *p > 100 || math.IsNaN(*p)) {
		return nil, errorf(codeValidation, "1 validation error detected: Value '%v' at 'toleratedFailurePercentage' failed to satisfy constraint: Member must have value between 0 and 100", *p)
	}
	err := s.eng.UpdateMapRun(ctx, in.MapRunArn, sfnengine.MapRunUpdate{MaxConcurrency: in.MaxConcurrency,
		ToleratedFailurePercentage: in.ToleratedFailurePercentage, ToleratedFailureCount: in.ToleratedFailureCount})
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}
