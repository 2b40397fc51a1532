package sfnapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Wire error types of callbacks and activities.
const (
	codeTaskDoesNotExist     = "TaskDoesNotExist"
	codeTaskTimedOut         = "TaskTimedOut"
	codeInvalidOutput        = "InvalidOutput"
	codeActivityDoesNotExist = "ActivityDoesNotExist"
)

// tokenMember is a task token: 1–2048 characters in the API model.
var tokenMember = member{name: "taskToken", required: true, min: 1, max: 2048}

func init() {
	models["SendTaskSuccess"] = []member{tokenMember,
		{name: "output", required: true, max: MaxInputBytes, utf8Bytes: true, sensitive: true}}
	models["SendTaskFailure"] = []member{tokenMember, {name: "error", max: 256, sensitive: true},
		{name: "cause", max: 32768, sensitive: true}}
	models["SendTaskHeartbeat"] = []member{tokenMember}
	models["CreateActivity"] = []member{required(nameMember)}
	models["DescribeActivity"] = []member{arnMember("activityArn", true)}
	models["DeleteActivity"] = []member{arnMember("activityArn", true)}
	models["ListActivities"] = []member{pageSize, pageToken}
	models["GetActivityTask"] = []member{arnMember("activityArn", true), {name: "workerName", min: 1, max: 80}}
	wireErrors = append(wireErrors, wireError{sfnengine.ErrActivityNotFound, codeActivityDoesNotExist, "Activity Does Not Exist: '%s'"})
}

// callbackError maps the engine's callback errors to the API's, with AWS's message where it is recorded (TaskTimedOut,
// the answer to a token whose task is over) and in AWS's "<Error>: '<detail>'" form otherwise.
func callbackError(err error) error {
	switch {
	case errors.Is(err, sfnengine.ErrInvalidToken):
		return errorf(codeInvalidToken, "Invalid Token: 'Invalid token'")
	case errors.Is(err, sfnengine.ErrTaskTimedOut):
		return errorf(codeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	case errors.Is(err, sfnengine.ErrTaskDoesNotExist):
		return errorf(codeTaskDoesNotExist, "Task Does Not Exist: 'Provided task does not exist'")
	case errors.Is(err, sfnengine.ErrInvalidOutput):
		return errorf(codeInvalidOutput, "Invalid Output: '%s'", strings.TrimPrefix(err.Error(), sfnengine.ErrInvalidOutput.Error()+": "))
	}
	return err
}

func (s *Server) sendTaskSuccess(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		TaskToken string `json:"taskToken"`
		Output    string `json:"output"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	return struct{}{}, callbackError(s.eng.SendTaskSuccess(ctx, in.TaskToken, in.Output))
}

func (s *Server) sendTaskFailure(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		TaskToken string `json:"taskToken"`
		Error     string `json:"error"`
		Cause     string `json:"cause"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	return struct{}{}, callbackError(s.eng.SendTaskFailure(ctx, in.TaskToken, in.Error, in.Cause))
}

func (s *Server) sendTaskHeartbeat(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		TaskToken string `json:"taskToken"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	return struct{}{}, callbackError(s.eng.SendTaskHeartbeat(ctx, in.TaskToken))
}

func (s *Server) createActivity(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		Name string `json:"name"`
		Tags []tag  `json:"tags"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	tags, err := tagMap("tags", in.Tags)
	if err != nil {
		return nil, err
	}
	a, err := s.eng.CreateActivity(ctx, in.Name, tags)
	if err != nil {
		return nil, err
	}
	return map[string]any{"activityArn": a.Arn, "creationDate": epoch(a.CreationDate)}, nil
}

func (s *Server) describeActivity(ctx context.Context, body json.RawMessage) (any, error) {
	var in activityArnInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	a, err := s.eng.DescribeActivity(ctx, in.ActivityArn)
	if err != nil {
		return nil, err
	}
	return map[string]any{"activityArn": a.Arn, "name": a.Name, "creationDate": epoch(a.CreationDate)}, nil
}

func (s *Server) listActivities(ctx context.Context, body json.RawMessage) (any, error) {
	var in pageRequest
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	pg := byName("ListActivities", []string{"all"}, func(a sfnengine.Activity) string { return a.Name })
	return pg.list(s.eng.Now(), s.eng.ListActivities(ctx), in, "activities", func(a sfnengine.Activity) any {
		return map[string]any{"activityArn": a.Arn, "name": a.Name, "creationDate": epoch(a.CreationDate)}
	})
}

func (s *Server) deleteActivity(ctx context.Context, body json.RawMessage) (any, error) {
	var in activityArnInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	return struct{}{}, s.eng.DeleteActivity(ctx, in.ActivityArn)
}

func (s *Server) getActivityTask(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ActivityArn string `json:"activityArn"`
		WorkerName  string `json:"workerName"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	// The engine waits ActivityPoll on its own clock; this bounds the wait in real time too, whatever that clock,
	// so that the answer always comes before the write deadline ServeHTTP set.
	ctx, cancel := context.WithTimeout(ctx, s.eng.ActivityPoll())
	defer cancel()
	t, err := s.eng.GetActivityTask(ctx, in.ActivityArn, in.WorkerName)
	if err != nil {
		return nil, err
	}
	if t.Token == "" {
		return struct{}{}, nil
	}
	return map[string]any{"taskToken": t.Token, "input": t.Input}, nil
}
