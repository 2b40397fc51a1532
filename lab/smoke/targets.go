package smoke

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/transferflow/orchestrator/internal/transferclient"
	"github.com/transferflow/orchestrator/localaws/stack"
)

// The local stack's defaults, as make run starts it (docs/local-stack.md).
const (
	// LocalAPI is the API's default address (--api-addr).
	LocalAPI = "http://127.0.0.1:3000"
	// LocalEvents is the EventBridge and CloudWatch Logs address (--events-addr).
	LocalEvents = "http://127.0.0.1:8084"
	// LocalLogGroup is the log group the local stack's rule writes the outcome events to (the stack name is local).
	LocalLogGroup = "/aws/events/local-transfers"
	// LocalOperator is the operator make run names (--operator); a request signed with the access key operator is it.
	LocalOperator = "arn:aws:iam::000000000000:user/operator"
	// localRegion is the region local requests are signed for (the local stack accepts any).
	localRegion = "us-east-1"
)

// The access keys of the local identities: the local stack takes the access key as the IAM user's name and does
// not verify signatures.
const (
	localClientKey   = "smoke"
	localOtherKey    = "smokeother"
	localOperatorKey = "operator"
)

// httpClient follows no redirects: a payment request goes to the endpoint asked, or nowhere.
var httpClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// newClient returns an API client of endpoint signing with creds for region (unsigned when creds is nil).
func newClient(endpoint string, creds aws.CredentialsProvider, region string, operator bool) *transferclient.Client {
	c := &transferclient.Client{Endpoint: endpoint, HTTP: httpClient, Operator: operator}
	if creds != nil {
		c.Signer = &transferclient.SigV4Signer{Credentials: creds, Region: region}
	}
	return c
}

// staticKey is a local identity: the access key names the IAM user.
func staticKey(key string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(key, "local", "")
}

// LocalConfig is the Config of a local stack with the API at api and EventBridge at events: the client is the IAM
// user smoke, the other caller smokeother (404 expected), the operator the user operator, which the stack must name
// with --operator (LocalOperator, as make run does).
func LocalConfig(api, events string, out io.Writer) Config {
	return Config{
		Client:      newClient(api, staticKey(localClientKey), localRegion, false),
		Operator:    newClient(api, staticKey(localOperatorKey), localRegion, true),
		Other:       newClient(api, staticKey(localOtherKey), localRegion, false),
		OtherStatus: http.StatusNotFound,
		Logs: cloudwatchlogs.New(cloudwatchlogs.Options{Region: localRegion, BaseEndpoint: aws.String(events),
			Credentials: aws.AnonymousCredentials{}}),
		LogGroup: LocalLogGroup,
		Out:      out,
	}
}

// StartLocal runs the local stack binary from dir (the repository, for template.yaml) on free ports with
// LocalOperator as operator and any extra flags, and returns it with its Config. The caller closes the process.
func StartLocal(ctx context.Context, binary, dir string, stderr io.Writer, out io.Writer, extra ...string) (*stack.Process, Config, error) {
	args := append([]string{"--operator", LocalOperator}, extra...)
	p, err := stack.StartProcess(ctx, stack.ProcessOptions{Binary: binary, Dir: dir, Args: args, Stderr: stderr})
	if err != nil {
		return nil, Config{}, err
	}
	events := p.Endpoints["events"]
	if events == "" {
		_ = p.Close()
		return nil, Config{}, errors.New("the local stack's ready line has no events address")
	}
	return p, LocalConfig(p.API(), events, out), nil
}

// AWSOptions names a deployed stack and the identities that smoke it.
type AWSOptions struct {
	// Stack is the CloudFormation stack's name.
	Stack string
	// Profile is the client's shared-config profile (empty: the default credential chain).
	Profile string
	// OperatorProfile is the operator's (a principal with TransferOperatorPolicy); empty: Profile.
	OperatorProfile string
	// OtherProfile is a second client's, which must get 404 for the first's transfer; empty: the other caller is an
	// unsigned request, which API Gateway refuses with 403.
	OtherProfile string
	// Region overrides the profiles' region.
	Region string
}

// StackOutputs reads a CloudFormation stack's outputs, by key.
func StackOutputs(ctx context.Context, cfg aws.Config, name string) (map[string]string, error) {
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("describe stack %s: %w", name, err)
	}
	if len(out.Stacks) != 1 {
		return nil, fmt.Errorf("describe stack %s: %d stacks", name, len(out.Stacks))
	}
	outputs := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return outputs, nil
}

// loadProfile loads the SDK configuration of profile (empty: the default chain), in region when given.
func loadProfile(ctx context.Context, profile, region string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration of profile %q: %w", profile, err)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("profile %q has no region: use --region", profile)
	}
	return cfg, nil
}

// AWSConfig reads the stack's outputs (ApiUrl, TransferEventsLogGroupName) with the client's profile and returns the
// Config of a run against it.
func AWSConfig(ctx context.Context, o AWSOptions, out io.Writer) (Config, error) {
	cfg, err := loadProfile(ctx, o.Profile, o.Region)
	if err != nil {
		return Config{}, err
	}
	outputs, err := StackOutputs(ctx, cfg, o.Stack)
	if err != nil {
		return Config{}, err
	}
	api, group := outputs["ApiUrl"], outputs["TransferEventsLogGroupName"]
	if api == "" || group == "" {
		return Config{}, fmt.Errorf("stack %s has no ApiUrl or TransferEventsLogGroupName output", o.Stack)
	}
	opCfg := cfg
	if o.OperatorProfile != "" && o.OperatorProfile != o.Profile {
		if opCfg, err = loadProfile(ctx, o.OperatorProfile, cfg.Region); err != nil {
			return Config{}, err
		}
	}
	c := Config{
		Client:      newClient(api, cfg.Credentials, cfg.Region, false),
		Operator:    newClient(api, opCfg.Credentials, opCfg.Region, true),
		Other:       newClient(api, nil, "", false),
		OtherStatus: http.StatusForbidden,
		Logs:        cloudwatchlogs.NewFromConfig(cfg),
		LogGroup:    group,
		Out:         out,
	}
	if o.OtherProfile != "" {
		other, err := loadProfile(ctx, o.OtherProfile, cfg.Region)
		if err != nil {
			return Config{}, err
		}
		c.Other, c.OtherStatus = newClient(api, other.Credentials, other.Region, false), http.StatusNotFound
	}
	return c, nil
}
