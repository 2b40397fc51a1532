package sfnapi

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

func (s *Server) testState(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		Definition      string  `json:"definition"`
		RoleArn         *string `json:"roleArn"`
		Input           string  `json:"input"`
		InspectionLevel string  `json:"inspectionLevel"`
		RevealSecrets   bool    `json:"revealSecrets"`
		Variables       string  `json:"variables"`
		StateName       string  `json:"stateName"`
		Context         string  `json:"context"`
		Mock            *struct {
			Result      *string `json:"result"`
			ErrorOutput *struct {
				Error string `json:"error"`
				Cause string `json:"cause"`
			} `json:"errorOutput"`
			FieldValidationMode string `json:"fieldValidationMode"`
		} `json:"mock"`
		StateConfiguration *struct {
			RetrierRetryCount int `json:"retrierRetryCount"`
		} `json:"stateConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if in.RoleArn != nil && !strings.HasPrefix(*in.RoleArn, "arn:") {
		return nil, errorf(codeInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", *in.RoleArn)
	}
	req := sfnengine.TestStateInput{Definition: in.Definition, StateName: in.StateName, Input: in.Input,
		Inspection: in.InspectionLevel, Context: in.Context, Variables: in.Variables}
	if in.RoleArn != nil {
		req.RoleArn = *in.RoleArn
	}
	if in.Variables != "" && !json.Valid([]byte(in.Variables)) {
		return nil, errorf(codeValidation, "The variables are not a JSON object")
	}
	if m := in.Mock; m != nil {
		if mode := m.FieldValidationMode; mode != "" && !contains([]string{"STRICT", "PRESENT", "NONE"}, mode) {
			return nil, errorf(codeValidation, "1 validation error detected: Value '%s' at 'mock.fieldValidationMode' failed to satisfy constraint: Member must satisfy enum value set: [STRICT, PRESENT, NONE]", mode)
		}
		switch {
		case m.Result != nil && m.ErrorOutput != nil:
			return nil, errorf(codeValidation, "A mock may have a result or an errorOutput, not both")
		case m.ErrorOutput != nil && m.ErrorOutput.Error == "":
			return nil, errorf(codeValidation, "mock.errorOutput.error is required when mock.errorOutput is specified")
		case m.ErrorOutput != nil:
			req.Mock = &sfnengine.TestStateMock{Error: m.ErrorOutput.Error, Cause: m.ErrorOutput.Cause}
		case m.Result != nil:
			req.Mock = &sfnengine.TestStateMock{Result: *m.Result}
		default:
			return nil, errorf(codeValidation, "A mock must have a result or an errorOutput")
		}
	}
	if in.StateConfiguration != nil {
		req.RetrierRetryCount = in.StateConfiguration.RetrierRetryCount
	}
	out, err := s.eng.TestState(ctx, req)
	if err != nil {
		return nil, err
	}
	return testStateAnswer(out), nil
}

// testStateAnswer is TestState's answer: the members that have a value.
func testStateAnswer(out *sfnengine.TestStateOutput) map[string]any {
	ans := map[string]any{"status": out.Status}
	if out.Output != nil {
		ans["output"] = *out.Output
	}
	putString(ans, "nextState", out.NextState)
	putString(ans, "error", out.Error)
	putString(ans, "cause", out.Cause)
	if in := out.Inspection; in != nil {
		data := map[string]any{}
		for k, v := range map[string]string{"input": in.Input, "afterInputPath": in.AfterInputPath,
			"afterParameters": in.AfterParameters, "result": in.Result, "afterResultSelector": in.AfterResultSelector,
			"afterResultPath": in.AfterResultPath, "variables": in.Variables} {
			putString(data, k, v)
		}
		if in.MaxConcurrency != nil {
			data["maxConcurrency"] = *in.MaxConcurrency
		}
		details := map[string]any{}
		if in.RetryIndex >= 0 {
			details["retryIndex"] = in.RetryIndex
			details["retryBackoffIntervalSeconds"] = in.RetryBackoffSeconds
		}
		if in.CatchIndex >= 0 {
			details["catchIndex"] = in.CatchIndex
		}
		if len(details) > 0 {
			data["errorDetails"] = details
		}
		ans["inspectionData"] = data
	}
	return ans
}
