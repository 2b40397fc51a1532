package transfer

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/transferflow/orchestrator/internal/apigw"
)

// callerScope is the scope of the request's caller (apigw.CallerScope). For a caller it cannot scope, ok is false and
// denied is the 403 CALLER_NOT_SUPPORTED answer; nothing has been read or written.
func (o *Orchestrator) callerScope(ctx context.Context, req events.APIGatewayProxyRequest) (scope string, denied apigw.Response, ok bool) {
	scope, err := apigw.CallerScope(req)
	if err != nil {
		o.Logger.WarnContext(ctx, "caller not supported", "error", err.Error())
		return "", problem(http.StatusForbidden, "CALLER_NOT_SUPPORTED",
			"the authenticated caller is not a kind of principal this API can scope Idempotency-Keys and transfers to "+
				"(an IAM user, role or federated user, the account root, a Cognito identity, an authorizer principal or an API key)"), false
	}
	return scope, apigw.Response{}, true
}
