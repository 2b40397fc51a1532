package metrics_test

import (
	"context"
	"io"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/transferflow/orchestrator/internal/metrics"
)

// BenchmarkEmit measures one record as the orchestrator writes it for a rejected request (two directives, three
// dimensions, two metrics, a transferId and the Lambda requestId), validated, encoded and written to io.Discard.
func BenchmarkEmit(b *testing.B) {
	e := metrics.New(io.Discard, "TransferOrchestrator/prod")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "7f0e5c2a-1b3d-4c5e-8f90-0a1b2c3d4e5f"})
	b.ReportAllocs()
	for b.Loop() {
		if err := e.Emit(ctx, rejected); err != nil {
			b.Fatal(err)
		}
	}
}
