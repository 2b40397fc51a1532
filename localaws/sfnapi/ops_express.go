package sfnapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// billedMemoryChunkMB is the unit in which AWS bills an Express execution's memory: 64 MB chunks, at least one.
const billedMemoryChunkMB = 64

// billedDurationStepMs is the unit in which AWS bills an Express execution's duration: rounded up to the next
// 100 ms, at least 100 ms (the recorded answers show 100 for an instant execution).
const billedDurationStepMs = 100

func (s *Server) startSyncExecution(ctx context.Context, body json.RawMessage) (any, error) {
	in, err := decodeStart(body)
	if err != nil {
		return nil, err
	}
	rec, err := s.eng.StartSyncExecution(ctx, in)
	if err != nil {
		return nil, err
	}
	return syncRecord(rec), nil
}

// syncRecord is StartSyncExecution's answer for a closed Express execution, members as AWS answers them
// (recorded): output only when it succeeded, error and cause only when set, inputDetails and outputDetails always.
func syncRecord(r *sfnengine.ExecutionRecord) map[string]any {
	stop := r.StartDate
	if r.StopDate != nil {
		stop = *r.StopDate
	}
	out := map[string]any{
		"executionArn":    r.Arn,
		"stateMachineArn": r.StateMachineArn,
		"name":            r.Name,
		"startDate":       epoch(r.StartDate),
		"stopDate":        epoch(stop),
		"status":          r.Status,
		"input":           r.Input,
		"inputDetails":    map[string]any{"included": true},
		"outputDetails":   map[string]any{"included": true},
		"billingDetails":  billing(r, stop),
	}
	if r.Output != nil {
		out["output"] = *r.Output
	}
	if r.Error != nil {
		out["error"] = *r.Error
	}
	if r.Cause != nil {
		out["cause"] = *r.Cause
	}
	return out
}

// billing returns an Express execution's billingDetails as AWS computes them: the duration from start to stop
// rounded up to the next 100 ms (at least 100 ms), and the memory in 64 MB chunks. AWS bases the memory on the
// definition's size, the data the execution holds and its Map and Parallel states; the local estimate is the
// size of its input and output, which makes it 64 MB for any execution within the payload quotas.
func billing(r *sfnengine.ExecutionRecord, stop time.Time) map[string]any {
	d := stop.Sub(r.StartDate)
	ms := int64((d + time.Millisecond - 1) / time.Millisecond)
	billed := max(billedDurationStepMs, (ms+billedDurationStepMs-1)/billedDurationStepMs*billedDurationStepMs)
	size := int64(len(r.Input))
	if r.Output != nil {
		size += int64(len(*r.Output))
	}
	const chunk = billedMemoryChunkMB << 20
	memory := max(1, (size+chunk-1)/chunk) * billedMemoryChunkMB
	return map[string]any{"billedDurationInMilliseconds": billed, "billedMemoryUsedInMB": memory}
}
