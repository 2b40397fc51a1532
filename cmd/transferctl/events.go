package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	cwltypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// Where `events tail` reads the outcome events when no flag or variable says otherwise: the local stack's events
// server (cmd/local --events-addr) and the log group its rule writes to (template.yaml's TransferEventsLogGroup with
// the stack name "local").
const (
	defaultEventsEndpoint = "http://127.0.0.1:8084"
	defaultEventsLogGroup = "/aws/events/local-transfers"
	// followEvery is how often --follow asks for new events.
	followEvery = 2 * time.Second
)

// logFilterer reads a log group (*cloudwatchlogs.Client satisfies it).
type logFilterer interface {
	FilterLogEvents(ctx context.Context, in *cloudwatchlogs.FilterLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error)
}

// outcomeEvent is an outcome event as EventBridge delivers it; Detail is the transfer resource.
type outcomeEvent struct {
	ID         string                  `json:"id"`
	DetailType string                  `json:"detail-type"`
	Source     string                  `json:"source"`
	Time       string                  `json:"time"`
	Detail     transferclient.Transfer `json:"detail"`
}

// events runs `events tail`: it prints the transfer outcome events of the log group, oldest first, from --since ago;
// --follow keeps asking for new ones until interrupted.
func (a *app) events(ctx context.Context, fs *flag.FlagSet, args []string) int {
	var (
		follow   bool
		since    time.Duration
		endpoint = a.getenv("TRANSFERCTL_EVENTS_ENDPOINT")
		group    = a.getenv("TRANSFERCTL_EVENTS_LOG_GROUP")
	)
	if group == "" {
		group = defaultEventsLogGroup
	}
	fs.BoolVar(&follow, "follow", false, "")
	fs.DurationVar(&since, "since", time.Hour, "")
	fs.StringVar(&endpoint, "events-endpoint", endpoint, "")
	fs.StringVar(&group, "log-group", group, "")
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 || pos[0] != "tail" {
		return a.usageError(fmt.Errorf("events takes one subcommand, tail; got %q", pos))
	}
	if since <= 0 {
		return a.usageError(fmt.Errorf("--since must be positive, got %s", since))
	}
	if group == "" {
		return a.usageError(errors.New("--log-group must not be empty"))
	}
	logs, code := a.logsClient(ctx, endpoint)
	if code != exitOK {
		return code
	}
	start := a.deps.now().Add(-since)
	if !follow {
		ctx, cancel, _ := a.withTimeout(ctx)
		defer cancel()
		var raw []json.RawMessage
		_, err := readEvents(ctx, logs, group, start.UnixMilli(), nil, func(msg json.RawMessage) error {
			if a.g.output == "json" {
				raw = append(raw, msg)
				return nil
			}
			return a.printEventLine(msg)
		})
		if err != nil {
			return a.reportLogs(err, group)
		}
		if a.g.output == "json" {
			if raw == nil {
				raw = []json.RawMessage{}
			}
			return a.printJSON(raw)
		}
		return exitOK
	}
	// --follow: JSON output is one event a line. Events are asked for from the last timestamp seen, and the ones
	// already printed at that timestamp are skipped.
	from, seen := start.UnixMilli(), map[string]bool{}
	for {
		next, err := readEvents(ctx, logs, group, from, seen, func(msg json.RawMessage) error {
			if a.g.output == "json" {
				_, err := fmt.Fprintf(a.stdout, "%s\n", compactJSON(msg))
				return err
			}
			return a.printEventLine(msg)
		})
		if ctx.Err() != nil {
			return exitOK
		}
		if err != nil {
			return a.reportLogs(err, group)
		}
		if next > from {
			from = next
			for id := range seen {
				if !strings.HasPrefix(id, fmt.Sprint(next)+"/") {
					delete(seen, id)
				}
			}
		}
		if err := a.pause(ctx, followEvery); err != nil {
			return exitOK
		}
	}
}

// pause waits d or until ctx ends.
func (a *app) pause(ctx context.Context, d time.Duration) error {
	if a.deps.sleep != nil {
		return a.deps.sleep(ctx, d)
	}
	return transferclient.Sleep(ctx, d)
}

// readEvents hands each event of the group from startMs on (every page) to emit, skipping those in seen (keyed
// "timestamp/eventId") and adding the ones it emits; it returns the last timestamp it saw.
func readEvents(ctx context.Context, logs logFilterer, group string, startMs int64, seen map[string]bool, emit func(json.RawMessage) error) (int64, error) {
	last := startMs
	var token *string
	for {
		out, err := logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(group),
			StartTime: aws.Int64(startMs), NextToken: token})
		if err != nil {
			return last, fmt.Errorf("read log group %s: %w", group, err)
		}
		for _, e := range out.Events {
			key := fmt.Sprintf("%d/%s", aws.ToInt64(e.Timestamp), aws.ToString(e.EventId))
			if seen != nil {
				if seen[key] {
					continue
				}
				seen[key] = true
			}
			last = max(last, aws.ToInt64(e.Timestamp))
			if err := emit(json.RawMessage(aws.ToString(e.Message))); err != nil {
				return last, fmt.Errorf("write output: %w", err)
			}
		}
		if out.NextToken == nil || *out.NextToken == "" {
			return last, nil
		}
		token = out.NextToken
	}
}

// printEventLine prints one event: time, detail-type, transfer id, status, amount and accounts (and the failure
// code of a failed transfer). A message that is not an outcome event is printed as it is.
func (a *app) printEventLine(msg json.RawMessage) error {
	var ev outcomeEvent
	if err := json.Unmarshal(msg, &ev); err != nil || ev.Detail.TransferID == "" {
		_, err := fmt.Fprintf(a.stdout, "%s\n", compactJSON(msg))
		return err
	}
	d := ev.Detail
	line := fmt.Sprintf("%s  %-18s  %s  %-9s  %d %s  %s -> %s", ev.Time, ev.DetailType, d.TransferID, d.Status, d.Amount,
		d.Currency, d.SourceAccountID, d.DestinationAccountID)
	if d.Failure != nil && d.Failure.Code != "" {
		line += "  " + d.Failure.Code
	}
	_, err := fmt.Fprintln(a.stdout, cleanLine(line))
	return err
}

// cleanLine removes control characters an event could carry into a terminal.
func cleanLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// compactJSON renders a message on one line: compact JSON, or the text cleaned of control characters.
func compactJSON(msg json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, msg); err != nil {
		return cleanLine(string(msg))
	}
	return b.String()
}

// logsClient builds the CloudWatch Logs client: for a loopback --events-endpoint (the local stack) unsigned, in
// us-east-1 unless --region says otherwise; for "aws", or by default when --endpoint is not loopback, CloudWatch Logs
// of the region with the caller's credentials.
func (a *app) logsClient(ctx context.Context, endpoint string) (logFilterer, int) {
	endpoint, err := a.serviceEndpoint("--events-endpoint", endpoint, defaultEventsEndpoint)
	if err != nil {
		return nil, a.usageError(err)
	}
	if endpoint != endpointAWS {
		region := a.g.region
		if region == "" {
			region = "us-east-1"
		}
		return cloudwatchlogs.New(cloudwatchlogs.Options{Region: region, BaseEndpoint: aws.String(endpoint),
			Credentials: aws.AnonymousCredentials{}, HTTPClient: a.deps.http}), exitOK
	}
	cfg, err := a.deps.loadAWS(ctx, a.g.region)
	if err != nil {
		fmt.Fprintf(a.stderr, "transferctl: load AWS configuration: %v\n", err)
		return nil, exitError
	}
	if cfg.Region == "" {
		return nil, a.usageError(errors.New("cannot tell which region's CloudWatch Logs to read: use --region or set AWS_REGION"))
	}
	return cloudwatchlogs.NewFromConfig(cfg), exitOK
}

// reportLogs writes a CloudWatch Logs error to stderr and returns its exit code: a missing log group is 5, a refused
// request 4, no answer 6.
func (a *app) reportLogs(err error, group string) int {
	fmt.Fprintf(a.stderr, "transferctl: %s\n", cleanLine(err.Error()))
	var notFound *cwltypes.ResourceNotFoundException
	var apiErr smithy.APIError
	switch {
	case errors.As(err, &notFound):
		fmt.Fprintf(a.stderr, "hint: no log group %s there; on AWS pass the stack's TransferEventsLogGroupName output with --log-group\n", group)
		return exitNotFound
	case errors.As(err, &apiErr):
		if apiErr.ErrorFault() == smithy.FaultServer {
			return exitUnavailable
		}
		return exitRejected
	}
	return exitCode(err)
}

// endpointAWS as --events-endpoint or --sfn-endpoint means the AWS service of the region.
const endpointAWS = "aws"

// serviceEndpoint resolves the endpoint flag named flag of a service the stack also serves locally: "aws", or an
// http(s) URL (plain http only to loopback). Empty means local, the local stack's default, when --endpoint is
// loopback, else "aws".
func (a *app) serviceEndpoint(flag, endpoint, local string) (string, error) {
	if endpoint == "" {
		endpoint = local
		if u, err := url.Parse(a.g.endpoint); err == nil && !isLoopback(u.Hostname()) {
			endpoint = endpointAWS
		}
	}
	if endpoint == endpointAWS {
		return endpoint, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s %q: want http(s)://host:port or %q", flag, endpoint, endpointAWS)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return "", fmt.Errorf("%s %q: plain http is allowed only to loopback; use https", flag, endpoint)
	}
	return endpoint, nil
}
