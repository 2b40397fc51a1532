package sfnengine

import (
	"context"
	"encoding/json"
)

// StatusChangeDetailType is the detail-type of the EventBridge events the engine publishes.
const StatusChangeDetailType = "Step Functions Execution Status Change"

// statusChangeEvent builds the EventBridge event AWS sends for the execution's current status.
func (x *execution) statusChangeEvent() []byte {
	r := x.meta()
	redriveStatus, redriveReason := x.eng.redriveStatus(r, int(x.lastEventID()))
	detail := map[string]any{
		"executionArn":        r.Arn,
		"stateMachineArn":     r.StateMachineArn,
		"name":                r.Name,
		"status":              r.Status,
		"startDate":           r.StartDate.UnixMilli(),
		"stopDate":            nil,
		"input":               r.Input,
		"output":              nil,
		"inputDetails":        map[string]any{"included": true},
		"outputDetails":       nil,
		"error":               nil,
		"cause":               nil,
		"redriveCount":        r.RedriveCount(),
		"redriveDate":         nil,
		"redriveStatus":       redriveStatus,
		"redriveStatusReason": redriveReason,
	}
	if redriveReason == "" {
		delete(detail, "redriveStatusReason")
	}
	if d := r.RedriveDate(); d != nil {
		detail["redriveDate"] = d.UnixMilli()
	}
	if r.StopDate != nil {
		detail["stopDate"] = r.StopDate.UnixMilli()
	}
	if r.Output != nil {
		detail["output"] = *r.Output
		detail["outputDetails"] = map[string]any{"included": true}
	}
	if r.Error != nil {
		detail["error"] = *r.Error
	}
	if r.Cause != nil {
		detail["cause"] = *r.Cause
	}
	when := r.StartDate
	if r.StopDate != nil {
		when = *r.StopDate
	}
	ev := map[string]any{
		"version":     "0",
		"id":          x.eng.opts.NewID(),
		"detail-type": StatusChangeDetailType,
		"source":      "aws.states",
		"account":     x.eng.opts.AccountID,
		"time":        when.UTC().Format("2006-01-02T15:04:05Z"),
		"region":      x.eng.opts.Region,
		"resources":   []string{r.Arn},
		"detail":      detail,
	}
	b, _ := json.Marshal(ev)
	return b
}

// publish sends the current status to every subscriber.
func (x *execution) publish() {
	if x.express { // Step Functions sends status-change events for Standard workflows only
		return
	}
	x.eng.mu.Lock()
	subs := append([]Subscriber(nil), x.eng.opts.Subscribers...)
	x.eng.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	if want := x.eng.opts.Publishes; want != nil {
		x.mu.Lock()
		sm, status := x.rec.StateMachineArn, x.rec.Status
		x.mu.Unlock()
		if !want(sm, status) {
			return
		}
	}
	ev := x.statusChangeEvent()
	for _, s := range subs {
		s(context.Background(), ev)
	}
}
