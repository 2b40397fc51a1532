package sfnapi

import (
	"context"
	"encoding/json"
)

func (s *Server) redriveExecution(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		ClientToken  string `json:"clientToken"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	date, err := s.eng.RedriveExecution(ctx, in.ExecutionArn, in.ClientToken)
	if err != nil {
		return nil, err
	}
	return map[string]any{"redriveDate": epoch(date)}, nil
}
