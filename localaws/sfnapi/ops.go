package sfnapi

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

func (s *Server) createStateMachine(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		Name               string `json:"name"`
		Definition         string `json:"definition"`
		RoleArn            string `json:"roleArn"`
		Type               string `json:"type"`
		Tags               []tag  `json:"tags"`
		Publish            bool   `json:"publish"`
		VersionDescription string `json:"versionDescription"`
		configInput
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	tags, err := tagMap("tags", in.Tags)
	if err != nil {
		return nil, err
	}
	cfg, err := in.config()
	if err != nil {
		return nil, err
	}
	// After the model's constraints (validate): the name's characters, then the role's ARN, then the definition.
	if !sfnengine.ValidName(in.Name) {
		return nil, errorf(codeInvalidName, "Invalid Name: '%s'", in.Name)
	}
	if !strings.HasPrefix(in.RoleArn, "arn:") {
		return nil, errorf(codeInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", in.RoleArn)
	}
	if in.VersionDescription != "" && !in.Publish {
		return nil, errorf(codeValidation, "Version description can only be set when publish is true")
	}
	sm, err := s.eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: in.Name, Definition: in.Definition,
		RoleArn: in.RoleArn, Type: in.Type, Config: cfg, Tags: tags,
		CreateOptions: sfnengine.CreateOptions{Publish: in.Publish, VersionDescription: in.VersionDescription}})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineArn": sm.Arn, "creationDate": epoch(sm.CreationDate)}
	if in.Publish {
		for _, v := range sm.Versions {
			if v.Version == 1 {
				out["stateMachineVersionArn"] = v.Arn
			}
		}
	}
	return out, nil
}

func describeMachine(sm sfnengine.StateMachine) map[string]any {
	out := map[string]any{
		"stateMachineArn": sm.Arn,
		"name":            sm.Name,
		"status":          "ACTIVE",
		"definition":      sm.Definition,
		"roleArn":         sm.RoleArn,
		"type":            sm.Type,
		"creationDate":    epoch(sm.CreationDate),
	}
	describeConfig(out, sm.Config)
	putString(out, "revisionId", sm.RevisionID)
	putString(out, "description", sm.Description)
	putString(out, "label", sm.Label)
	return out
}

func (s *Server) describeStateMachine(ctx context.Context, body json.RawMessage) (any, error) {
	var in stateMachineArnInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	sm, err := s.eng.DescribeStateMachine(ctx, in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	return describeMachine(sm), nil
}

func (s *Server) listStateMachines(ctx context.Context, body json.RawMessage) (any, error) {
	var in pageRequest
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	pg := byName("ListStateMachines", []string{"all"}, func(sm sfnengine.StateMachine) string { return sm.Name })
	return pg.list(s.eng.Now(), s.eng.ListStateMachines(ctx), in, "stateMachines", func(sm sfnengine.StateMachine) any {
		return map[string]any{"stateMachineArn": sm.Arn, "name": sm.Name, "type": sm.Type, "creationDate": epoch(sm.CreationDate)}
	})
}

func (s *Server) updateStateMachine(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		StateMachineArn    string `json:"stateMachineArn"`
		Definition         string `json:"definition"`
		RoleArn            string `json:"roleArn"`
		Publish            bool   `json:"publish"`
		VersionDescription string `json:"versionDescription"`
		configInput
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	cfg, err := in.config()
	if err != nil {
		return nil, err
	}
	if err := unqualified("UpdateStateMachine", in.StateMachineArn); err != nil {
		return nil, err
	}
	if in.Definition == "" && in.RoleArn == "" {
		return nil, errorf(codeMissingUpdate, "Either the definition or the roleArn must be specified")
	}
	if in.RoleArn != "" && !strings.HasPrefix(in.RoleArn, "arn:") {
		return nil, errorf(codeInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", in.RoleArn)
	}
	if in.VersionDescription != "" && !in.Publish {
		return nil, errorf(codeValidation, "Version description can only be set when publish is true")
	}
	sm, v, err := s.eng.Update(ctx, sfnengine.UpdateInput{StateMachineArn: in.StateMachineArn, Definition: in.Definition,
		RoleArn: in.RoleArn, Config: cfg, Publish: in.Publish, VersionDescription: in.VersionDescription})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"updateDate": epoch(s.eng.Now())}
	if !sm.UpdateDate.IsZero() {
		out["updateDate"] = epoch(sm.UpdateDate)
	}
	putString(out, "revisionId", sm.RevisionID)
	if v != nil {
		out["stateMachineVersionArn"] = v.Arn
	}
	return out, nil
}

// unqualified answers ValidationException for the ARN of a version or an alias, which op does not take.
func unqualified(op, arn string) error {
	if strings.HasPrefix(arn, "arn:") && strings.Count(arn, ":") > 6 {
		return errorf(codeValidation, "%s does not take a qualified state machine ARN (a version or an alias): '%s'", op, arn)
	}
	return nil
}

func (s *Server) deleteStateMachine(ctx context.Context, body json.RawMessage) (any, error) {
	var in stateMachineArnInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := unqualified("DeleteStateMachine", in.StateMachineArn); err != nil {
		return nil, err
	}
	return struct{}{}, s.eng.DeleteStateMachine(ctx, in.StateMachineArn)
}

func (s *Server) validateDefinition(_ context.Context, body json.RawMessage) (any, error) {
	var in struct {
		Definition string `json:"definition"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	diags := []any{}
	if _, err := sfnengine.LoadDefinition([]byte(in.Definition)); err != nil {
		for _, e := range asl.Errors(err) {
			code, msg := diagnosticCode(e.Msg)
			if e.Code != "" {
				code = e.Code
			}
			diags = append(diags, map[string]any{"severity": "ERROR", "code": code, "message": msg,
				"location": "/" + strings.ReplaceAll(e.Path, ".", "/")})
		}
	}
	result := "OK"
	if len(diags) > 0 {
		result = "FAIL"
	}
	return map[string]any{"result": result, "diagnostics": diags, "truncated": false}, nil
}

// decodeStart reads the request of StartExecution or StartSyncExecution; an absent input is {}.
func decodeStart(body json.RawMessage) (sfnengine.StartInput, error) {
	var in struct {
		StateMachineArn string  `json:"stateMachineArn"`
		Name            string  `json:"name"`
		Input           *string `json:"input"`
	}
	if err := decode(body, &in); err != nil {
		return sfnengine.StartInput{}, err
	}
	input := "{}"
	if in.Input != nil {
		input = *in.Input
	}
	return sfnengine.StartInput{StateMachineArn: in.StateMachineArn, Name: in.Name, Input: input}, nil
}

func (s *Server) startExecution(ctx context.Context, body json.RawMessage) (any, error) {
	in, err := decodeStart(body)
	if err != nil {
		return nil, err
	}
	rec, err := s.eng.StartExecution(ctx, in)
	if err != nil {
		return nil, err
	}
	return map[string]any{"executionArn": rec.Arn, "startDate": epoch(rec.StartDate)}, nil
}

// describeRecord renders DescribeExecution's answer; redriveStatus and redriveStatusReason are given.
func describeRecord(r *sfnengine.ExecutionRecord, redriveStatus, redriveReason string) map[string]any {
	out := map[string]any{
		"executionArn":    r.Arn,
		"stateMachineArn": r.StateMachineArn,
		"name":            r.Name,
		"status":          r.Status,
		"startDate":       epoch(r.StartDate),
		"input":           r.Input,
		"inputDetails":    map[string]any{"included": true},
		"redriveCount":    r.RedriveCount(),
		"redriveStatus":   redriveStatus,
	}
	putString(out, "redriveStatusReason", redriveReason)
	if d := r.RedriveDate(); d != nil {
		out["redriveDate"] = epoch(*d)
	}
	if r.StopDate != nil {
		out["stopDate"] = epoch(*r.StopDate)
	}
	putString(out, "stateMachineVersionArn", r.StateMachineVersionArn)
	putString(out, "stateMachineAliasArn", r.StateMachineAliasArn)
	putString(out, "mapRunArn", r.MapRunArn())
	if r.Output != nil {
		out["output"] = *r.Output
		out["outputDetails"] = map[string]any{"included": true}
	}
	if r.Error != nil {
		out["error"] = *r.Error
	}
	if r.Cause != nil {
		out["cause"] = *r.Cause
	}
	return out
}

// executionArnInput, stateMachineArnInput, stateMachineAliasArnInput and activityArnInput are the requests that
// name only the resource they act on.
type executionArnInput struct {
	ExecutionArn string `json:"executionArn"`
}

type stateMachineArnInput struct {
	StateMachineArn string `json:"stateMachineArn"`
}

type stateMachineAliasArnInput struct {
	StateMachineAliasArn string `json:"stateMachineAliasArn"`
}

type activityArnInput struct {
	ActivityArn string `json:"activityArn"`
}

// requestedExecution returns the execution that a request naming only an execution (executionArnInput) names.
func (s *Server) requestedExecution(ctx context.Context, body json.RawMessage) (*sfnengine.ExecutionRecord, error) {
	var in executionArnInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	return s.eng.DescribeExecution(ctx, in.ExecutionArn)
}

func (s *Server) describeExecution(ctx context.Context, body json.RawMessage) (any, error) {
	r, err := s.requestedExecution(ctx, body)
	if err != nil {
		return nil, err
	}
	status, reason := s.eng.RedriveStatus(r)
	return describeRecord(r, status, reason), nil
}

func (s *Server) describeStateMachineForExecution(ctx context.Context, body json.RawMessage) (any, error) {
	r, err := s.requestedExecution(ctx, body)
	if err != nil {
		return nil, err
	}
	// The version the execution runs, while it exists, or the revision of the state machine it started with; for
	// a child workflow execution of a Distributed Map, the Map state (its item processor and label).
	var sm sfnengine.StateMachine
	if r.MapRunArn() != "" {
		sm, err = s.eng.DescribeStateMachine(ctx, r.StateMachineArn)
	} else {
		sm, err = s.eng.StateMachineForExecution(r)
	}
	if err != nil {
		return nil, err
	}
	out := describeMachine(sm)
	delete(out, "status")
	delete(out, "creationDate")
	delete(out, "type")
	delete(out, "description")
	out["stateMachineArn"] = r.StateMachineArn
	putString(out, "mapRunArn", r.MapRunArn())
	out["updateDate"] = epoch(sm.CreationDate)
	if !sm.UpdateDate.IsZero() {
		out["updateDate"] = epoch(sm.UpdateDate)
	}
	return out, nil
}

func (s *Server) listExecutions(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		MapRunArn       string `json:"mapRunArn"`
		StatusFilter    string `json:"statusFilter"`
		RedriveFilter   string `json:"redriveFilter"`
		pageRequest
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	// "You can specify either a mapRunArn or a stateMachineArn, but not both" (the API reference); AWS's message
	// for either mistake is not recorded, so the words are the local engine's.
	if (in.StateMachineArn == "") == (in.MapRunArn == "") {
		return nil, errorf(codeValidation, "Exactly one of stateMachineArn and mapRunArn must be specified")
	}
	var recs []*sfnengine.ExecutionRecord
	var err error
	if in.MapRunArn != "" {
		recs, err = s.eng.ListMapRunExecutions(ctx, in.MapRunArn, in.StatusFilter)
	} else {
		recs, err = s.eng.ListExecutions(ctx, in.StateMachineArn, in.StatusFilter)
	}
	if err != nil {
		return nil, err
	}
	if in.RedriveFilter != "" {
		kept := recs[:0]
		for _, r := range recs {
			if (r.RedriveCount() > 0) == (in.RedriveFilter == "REDRIVEN") {
				kept = append(kept, r)
			}
		}
		recs = kept
	}
	pg := byNewest("ListExecutions", []string{in.StateMachineArn, in.MapRunArn, in.StatusFilter, in.RedriveFilter},
		func(r *sfnengine.ExecutionRecord) time.Time { return r.StartDate },
		func(r *sfnengine.ExecutionRecord) string { return r.Arn })
	return pg.list(s.eng.Now(), recs, in.pageRequest, "executions", func(r *sfnengine.ExecutionRecord) any {
		item := map[string]any{"executionArn": r.Arn, "stateMachineArn": r.StateMachineArn, "name": r.Name,
			"status": r.Status, "startDate": epoch(r.StartDate), "redriveCount": r.RedriveCount()}
		if r.StopDate != nil {
			item["stopDate"] = epoch(*r.StopDate)
		}
		putString(item, "stateMachineVersionArn", r.StateMachineVersionArn)
		putString(item, "stateMachineAliasArn", r.StateMachineAliasArn)
		putString(item, "mapRunArn", r.MapRunArn())
		if d := r.RedriveDate(); d != nil {
			item["redriveDate"] = epoch(*d)
		}
		return item
	})
}

func (s *Server) stopExecution(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		Error        string `json:"error"`
		Cause        string `json:"cause"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	stop, err := s.eng.StopExecution(ctx, in.ExecutionArn, in.Error, in.Cause)
	if err != nil {
		return nil, err
	}
	return map[string]any{"stopDate": epoch(stop)}, nil
}

func (s *Server) getExecutionHistory(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ExecutionArn         string `json:"executionArn"`
		ReverseOrder         bool   `json:"reverseOrder"`
		IncludeExecutionData *bool  `json:"includeExecutionData"`
		pageRequest
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	events, err := s.eng.History(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	pg := pager[sfnengine.Event]{Op: "GetExecutionHistory", Scope: []string{in.ExecutionArn, "forward"},
		Key:   func(e sfnengine.Event) anchor { return anchor{N: e.ID} },
		After: func(e sfnengine.Event, a anchor) bool { return e.ID > a.N }}
	if in.ReverseOrder {
		for i, j := 0, len(events)-1; i < j; i, j = i+1, j-1 {
			events[i], events[j] = events[j], events[i]
		}
		pg.Scope[1] = "reverse"
		pg.After = func(e sfnengine.Event, a anchor) bool { return e.ID < a.N }
	}
	return pg.list(s.eng.Now(), events, in.pageRequest, "events", func(e sfnengine.Event) any {
		if in.IncludeExecutionData != nil && !*in.IncludeExecutionData && e.Details != nil {
			d := make(map[string]any, len(e.Details))
			for k, v := range e.Details {
				if k != "input" && k != "output" && k != "parameters" {
					d[k] = v
				}
			}
			e.Details = d
		}
		return e
	})
}

// withNextToken adds nextToken to a page when there is a next one.
func withNextToken(page map[string]any, next string) map[string]any {
	putString(page, "nextToken", next)
	return page
}
