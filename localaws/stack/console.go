package stack

import (
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/internal/console"
	"github.com/transferflow/orchestrator/internal/transferclient"
	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
)

// DefaultConsoleAddr is where the audit console listens unless --console-addr says otherwise.
const DefaultConsoleAddr = "127.0.0.1:8085"

// ConsoleTimeouts are the console's server timeouts: a page reads the API and Step Functions, a few requests each.
var ConsoleTimeouts = httpserver.Timeouts{Header: 10 * time.Second, Body: 10 * time.Second, Write: time.Minute, Idle: 2 * time.Minute}

// operatorUser matches an --operator pattern that names one IAM user of the local account, without wildcards.
var operatorUser = regexp.MustCompile(`^arn:aws:iam::` + AccountID + `:user/([\w+=,.@-]{1,64})$`)

// console builds the audit console against the stack's own API and Step Functions API. It reads as the first
// --operator that names one IAM user (make run's operator), signing as that user, through the operator routes; with
// none, as the unsigned caller "local" through the client routes, which owns the seeded accounts.
func (s *stack) console(apiURL string, cfg aws.Config, sfnURL string, machines []string) (*http.Server, error) {
	api := &transferclient.Client{Endpoint: apiURL}
	for _, op := range s.cfg.Operators {
		if m := operatorUser.FindStringSubmatch(op); m != nil {
			api.Operator = true
			api.Signer = &transferclient.SigV4Signer{Credentials: credentials.NewStaticCredentialsProvider(m[1], "local", ""), Region: Region}
			break
		}
	}
	sfnCfg := cfg.Copy()
	sfnCfg.HTTPClient = http.DefaultClient
	sfnClient := sfn.NewFromConfig(sfnCfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(sfnURL) })
	machine := ""
	for _, arn := range machines {
		if strings.Contains(arn, "Transfer") {
			machine = arn
			break
		}
	}
	c, err := console.New(console.Config{API: api, Operator: api.Operator, SFN: sfnClient, StateMachineArn: machine, Logger: s.logger})
	if err != nil {
		return nil, err
	}
	return httpserver.New(c, httpserver.Options{Timeouts: ConsoleTimeouts, ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}), nil
}
