package stack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/transferflow/orchestrator/localaws/ddbserver"
	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/streamsource"
)

// streamFault is the target of the --fault that holds the stream mappings: stream:hold.
const streamFault = "stream"

// parseStreamFault reads "stream:hold".
func parseStreamFault(spec string) error {
	if spec != streamFault+":hold" {
		return fmt.Errorf("fault %q: want %s:hold", spec, streamFault)
	}
	return nil
}

// resolveStreams gives the names the ARNs of the tables' streams, in AWS's form (!GetAtt Table.StreamArn).
func (s *stack) resolveStreams(ctx context.Context, ddb *dynamodb.Client, tables []samtemplate.Table) error {
	arns, err := ddbserver.StreamARNs(ctx, ddb, tables)
	if err != nil {
		return err
	}
	for id, server := range arns {
		arn, err := streamsource.AWSStreamARN(server, Region, AccountID)
		if err != nil {
			return fmt.Errorf("table %s: %w", id, err)
		}
		s.names.streams[id] = arn
	}
	return nil
}

// startStreams starts an event source mapping for each DynamoDB event of the template's functions, reading the
// stream from the DynamoDB server at ddbURL (Dynoxide serves DynamoDB Streams on the same address) and invoking
// the function through the Lambda host. With --data-dir each keeps its checkpoint in <data-dir>/streams and writes
// the batches it gives up to <data-dir>/dead-letter/<queue>.jsonl.
func (s *stack) startStreams(ctx context.Context, cfg aws.Config, ddbURL string) error {
	streams := dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(ddbURL) })
	s.deadLetters = map[string]*streamsource.DeadLetterQueue{}
	for _, f := range s.fns {
		for _, ev := range f.Events {
			if ev.Type != samtemplate.EventDynamoDB {
				continue
			}
			name := f.LogicalID + ev.Name
			if !ev.DynamoDB.Enabled {
				s.logger.Info("stream event source mapping disabled in the template", "mapping", name)
				continue
			}
			mc, err := s.mappingConfig(name, f.LogicalID, ev.DynamoDB)
			if err != nil {
				return fmt.Errorf("%s.Events.%s: %w", f.LogicalID, ev.Name, err)
			}
			mc.Streams = streams
			m, err := streamsource.New(mc)
			if err != nil {
				return fmt.Errorf("%s.Events.%s: %w", f.LogicalID, ev.Name, err)
			}
			if err := m.Start(ctx); err != nil {
				return fmt.Errorf("%s.Events.%s: %w", f.LogicalID, ev.Name, err)
			}
			s.mappings = append(s.mappings, m)
		}
	}
	return nil
}

// mappingConfig is the streamsource configuration of a function's DynamoDB event.
func (s *stack) mappingConfig(name, function string, src *samtemplate.StreamSource) (streamsource.Config, error) {
	if src.TumblingWindowInSeconds > 0 {
		return streamsource.Config{}, errors.New("TumblingWindowInSeconds: tumbling windows are not run locally")
	}
	if src.ParallelizationFactor > 1 {
		s.logger.Warn("stream event source mapping: ParallelizationFactor is not modelled, one batch per shard is in flight",
			"mapping", name, "parallelizationFactor", src.ParallelizationFactor)
	}
	mc := streamsource.Config{
		Name: name, Function: function, FunctionARN: functionArn(function), StreamARN: src.StreamARN, Region: Region,
		StartingPosition: src.StartingPosition, BatchSize: src.BatchSize,
		MaximumBatchingWindow:      time.Duration(src.MaximumBatchingWindowInSeconds) * time.Second,
		BisectBatchOnFunctionError: src.BisectBatchOnFunctionError, MaximumRetryAttempts: src.MaximumRetryAttempts,
		ReportBatchItemFailures: src.ReportBatchItemFailures, Hold: s.cfg.StreamHold,
		Invoker: s.invoker, Logger: s.logger, NewID: s.newID,
	}
	if src.MaximumRecordAgeInSeconds > 0 {
		mc.MaximumRecordAge = time.Duration(src.MaximumRecordAgeInSeconds) * time.Second
	}
	for i, p := range src.Filters {
		c, err := eventpattern.Compile(p)
		if err != nil {
			return streamsource.Config{}, fmt.Errorf("FilterCriteria.Filters[%d].Pattern: %w", i, err)
		}
		mc.Filters = append(mc.Filters, c)
	}
	if s.cfg.DataDir != "" {
		mc.CheckpointDir = filepath.Join(s.cfg.DataDir, "streams")
	}
	if src.OnFailure != "" {
		q, err := s.deadLetterQueue(src.OnFailure)
		if err != nil {
			return streamsource.Config{}, err
		}
		mc.OnFailure = q
	}
	return mc, nil
}

// deadLetterQueue is the stand-in for the SQS queue arn: a file named after it in <data-dir>/dead-letter, or
// memory.
func (s *stack) deadLetterQueue(arn string) (*streamsource.DeadLetterQueue, error) {
	name, ok := strings.CutPrefix(arn, queueArn(""))
	if !ok || name == "" || strings.Contains(name, ":") {
		return nil, fmt.Errorf("DestinationConfig.OnFailure.Destination %q: only a queue of the template (!GetAtt Queue.Arn) is a destination locally", arn)
	}
	if q, ok := s.deadLetters[name]; ok {
		return q, nil
	}
	q, err := streamsource.OpenDeadLetterQueue(s.cfg.DataDir, name)
	if err != nil {
		return nil, err
	}
	s.deadLetters[name] = q
	return q, nil
}

// stopStreams stops the mappings, together, each waiting for its batch in flight until ctx ends.
func (s *stack) stopStreams(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range s.mappings {
		wg.Go(func() { m.Stop(ctx) })
	}
	wg.Wait()
}
