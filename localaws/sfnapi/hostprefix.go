package sfnapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// WithoutHostPrefix is an sfn.Options function for clients of a local endpoint. The Step Functions API model gives
// StartSyncExecution and TestState the host prefix "sync-" (AWS serves them at sync-states.<region>.amazonaws.com),
// and aws-sdk-go-v2 prefixes the host of BaseEndpoint and of an EndpointResolverV2's endpoint with it too, so with
// the endpoint http://127.0.0.1:8083 those two operations call http://sync-127.0.0.1:8083, a name that does not
// resolve. WithoutHostPrefix keeps the host as given (the SDK's stack value smithyhttp.DisableEndpointHostPrefix);
// the other operations have no prefix and are unchanged. Use it as sfn.NewFromConfig(cfg, sfnapi.WithoutHostPrefix).
func WithoutHostPrefix(o *sfn.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("DisableEndpointHostPrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
			}), middleware.Before)
	})
}
