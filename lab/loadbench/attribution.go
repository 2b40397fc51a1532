package loadbench

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/internal/transferclient"
	"github.com/transferflow/orchestrator/lab/ddbproxy"
)

// AttributionDelay is the --fault delay of the attribution stack's first debits: the workflow's first DynamoDB
// request comes this long after StartExecution, by which time the POST has answered, so every request before the
// answer is the POST's and every one after it the workflow's.
const AttributionDelay = 400 * time.Millisecond

// attributionFault is the attribution stack's --fault flag for n transfers.
func attributionFault(n int) string {
	return fmt.Sprintf("debit:delay=%s:times=%d", AttributionDelay, n)
}

// template is the DynamoDB requests of one transfer (its POST, then its workflow) and the identifiers they carry,
// which the store test replaces to make them the requests of another transfer.
type template struct {
	requests   []ddbproxy.Exchange
	transferID string
	key        string
	source     string
	dest       string
}

// attribution is what the quiet stack measured.
type attribution struct {
	use      DynamoDBUse
	template template
	arns     []string
	notes    []string
}

// attribute makes n transfers one at a time on a quiet stack whose first n debits are delayed by AttributionDelay,
// each between its own pair of fresh accounts, then replays each replays times. POST and workflow requests are told
// apart by the POST's answer; the first transfer's requests become the template.
func (d *driver) attribute(ctx context.Context, proxy *ddbproxy.Proxy, accounts []string, n, replays int) (attribution, error) {
	var (
		a                         attribution
		post, workflow, replayed  ddbproxy.Counts
		replaySamples, postSample int
	)
	post, workflow, replayed = ddbproxy.Counts{}, ddbproxy.Counts{}, ddbproxy.Counts{}
	for k := range n {
		key := d.key("attr")
		req := transferclient.SubmitRequest{SourceAccountID: accounts[2*k], DestinationAccountID: accounts[2*k+1], Amount: 100, Currency: currency}
		var stop func() []ddbproxy.Exchange
		if k == 0 {
			var err error
			if stop, err = proxy.Record(); err != nil {
				return a, err
			}
		}
		s0 := proxy.Snapshot()
		tr, took, _, err := d.submit(ctx, key, req)
		s1 := proxy.Snapshot()
		if err != nil {
			if stop != nil {
				stop()
			}
			return a, fmt.Errorf("attribution transfer %d: %w", k+1, err)
		}
		if took > AttributionDelay/2 {
			a.notes = append(a.notes, fmt.Sprintf("attribution: POST %d took %s, near the %s debit delay; its split between POST and workflow may be off", k+1, took.Round(time.Millisecond), AttributionDelay))
		}
		if err := d.awaitExecution(ctx, tr.ExecutionArn); err != nil {
			return a, err
		}
		s2 := proxy.Snapshot()
		if stop != nil {
			a.template = template{requests: stop(), transferID: tr.TransferID, key: key, source: req.SourceAccountID, dest: req.DestinationAccountID}
		}
		post = post.Add(s1.Sub(s0).Data())
		workflow = workflow.Add(s2.Sub(s1).Data())
		postSample++
		a.arns = append(a.arns, tr.ExecutionArn)

		s3 := proxy.Snapshot()
		for r := range replays {
			res, err := d.api.Submit(ctx, key, req)
			if err != nil {
				return a, fmt.Errorf("attribution replay %d of transfer %d: %w", r+1, k+1, err)
			}
			if !res.Replayed || res.Transfer.TransferID != tr.TransferID {
				return a, fmt.Errorf("attribution replay %d of transfer %d: answered %d with transfer %s, not a replay of %s", r+1, k+1, res.Status, res.Transfer.TransferID, tr.TransferID)
			}
		}
		replayed = replayed.Add(proxy.Snapshot().Sub(s3).Data())
		replaySamples += replays
	}
	a.use = DynamoDBUse{
		NewPOST:        phaseOf(post, postSample),
		Replay:         phaseOf(replayed, replaySamples),
		Workflow:       phaseOf(workflow, postSample),
		Transfer:       phaseOf(post.Add(workflow), postSample),
		CapacitySource: "ConsumedCapacity of the answers (the proxy asks for TOTAL); failed conditional writes estimated by DynamoDB's rule (existing item's size in 1 KB units, at least 1)",
	}
	return a, nil
}

// awaitExecution waits until the execution is no longer RUNNING, asking Step Functions (which costs no DynamoDB
// request).
func (d *driver) awaitExecution(ctx context.Context, arn string) error {
	deadline := time.Now().Add(transferDeadline)
	for {
		out, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			return fmt.Errorf("describe %s: %w", arn, err)
		}
		if out.Status != sfntypes.ExecutionStatusRunning {
			if out.Status != sfntypes.ExecutionStatusSucceeded {
				return fmt.Errorf("attribution execution %s ended %s", arn, out.Status)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("attribution execution %s still running after %s", arn, transferDeadline)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// phaseOf divides counts by samples.
func phaseOf(c ddbproxy.Counts, samples int) Phase {
	p := Phase{Samples: samples, ByOperation: map[string]float64{}}
	if samples == 0 {
		return p
	}
	n := float64(samples)
	for op, v := range c {
		p.ByOperation[op] = float64(v.Requests) / n
		for typ, e := range v.ErrorTypes {
			if p.Errors == nil {
				p.Errors = map[string]float64{}
			}
			p.Errors[typ] += float64(e) / n
		}
	}
	t := c.Total()
	p.Requests = float64(t.Requests) / n
	p.ReadUnits = t.ReadUnits / n
	p.WriteUnits = t.WriteUnits / n
	p.Estimated = float64(t.Estimated) / n
	p.Unreported = float64(t.Unreported) / n
	return p
}
