package enginebench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnapi"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnengine/instantaws"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// motoSide is moto's server (moto_server, from the virtual environment make bench-engine-deps installs) with its
// Step Functions execution switched on: moto then runs state machines with the ASL interpreter it vendors from
// LocalStack, instead of only recording them.
type motoSide struct {
	cmd     *exec.Cmd
	url     string
	version string
}

// errMotoNotInstalled reports that moto's virtual environment is missing.
var errMotoNotInstalled = errors.New("moto is not installed")

// motoReady bounds how long moto's server may take to answer after it starts (a few seconds on 2 cores).
const motoReady = 60 * time.Second

// startMoto starts moto_server from the virtual environment venv on a free port of the loopback interface and
// switches its Step Functions execution on (POST /moto-api/config).
func startMoto(ctx context.Context, venv string) (*motoSide, error) {
	bin := filepath.Join(venv, "bin", "moto_server")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w: no %s (make bench-engine-deps installs it)", errMotoNotInstalled, bin)
	}
	out, err := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), "-c",
		"import importlib.metadata as m; print(m.version('moto'))").Output()
	if err != nil {
		return nil, fmt.Errorf("read moto's version: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "-H", "127.0.0.1", "-p", port)
	cmd.WaitDelay = 5 * time.Second
	// moto logs every request on standard error: nothing to keep.
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	m := &motoSide{cmd: cmd, url: "http://127.0.0.1:" + port, version: strings.TrimSpace(string(out))}
	if err := m.configure(ctx); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// configure waits for the server to answer, then switches Step Functions execution on.
func (m *motoSide) configure(ctx context.Context) error {
	body := `{"stepfunctions": {"execute_state_machine": true}}`
	deadline := time.Now().Add(motoReady)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url+"/moto-api/config", strings.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				return fmt.Errorf("moto: POST /moto-api/config answered %s", resp.Status)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("moto's server did not answer within %s: %w", motoReady, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// close stops the server.
func (m *motoSide) close() {
	_ = m.cmd.Process.Signal(os.Interrupt)
	_ = m.cmd.Wait()
}

// freePort returns a port of the loopback interface that nothing listens on.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port), nil
}

// apiSide runs executions of one state machine through a Step Functions API and the aws-sdk-go-v2 client, as a user
// would: StartExecution, then DescribeExecution until the execution closes. The same client, polling and definition
// serve our engine's API and moto's.
type apiSide struct {
	c     *sfn.Client
	arn   string
	input string
}

// newAPISide creates the definition's state machine on the API at url.
func newAPISide(ctx context.Context, url string, d definition) (*apiSide, error) {
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, sfnapi.WithoutHostPrefix)
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(d.machineName),
		Definition: aws.String(d.asl), RoleArn: aws.String(roleArn)})
	if err != nil {
		return nil, fmt.Errorf("create state machine: %w", err)
	}
	return &apiSide{c: c, arn: aws.ToString(sm.StateMachineArn), input: d.input}, nil
}

// wrongAnswer is an execution that did not succeed: the engine answered differently from AWS, not the harness.
type wrongAnswer struct{ status, error, cause string }

func (w *wrongAnswer) Error() string {
	return fmt.Sprintf("the execution ended %s %s %s", w.status, w.error, w.cause)
}

// run completes n executions with at most conc in flight and returns the output of one of them.
func (a *apiSide) run(ctx context.Context, n, conc int) (string, error) {
	return runMany(ctx, n, conc, a.one)
}

// Polling of DescribeExecution: at once, then after pollFirst, doubling up to pollMax.
const (
	pollFirst = time.Millisecond
	pollMax   = 16 * time.Millisecond
)

// one starts an execution and polls it until it closes.
func (a *apiSide) one(ctx context.Context) (string, error) {
	// A name for every execution: moto names one started without a name "None", and refuses the next as
	// ExecutionAlreadyExists.
	x, err := a.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(a.arn), Input: aws.String(a.input),
		Name: aws.String(sfnengine.NewUUID())})
	if err != nil {
		return "", err
	}
	wait := pollFirst
	for {
		d, err := a.c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		if err != nil {
			return "", err
		}
		switch d.Status {
		case types.ExecutionStatusRunning, types.ExecutionStatusPendingRedrive:
		case types.ExecutionStatusSucceeded:
			return aws.ToString(d.Output), nil
		default:
			return "", &wrongAnswer{status: string(d.Status), error: aws.ToString(d.Error), cause: aws.ToString(d.Cause)}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, pollMax)
	}
}

// motoVerdict is what came of moto on one definition: a rate, or why there is none.
type motoVerdict struct {
	secs float64
	note string // non-empty: no rate (wrong answer, failure, or not run)
}

// judge records the outcome of a timed or warm-up run of moto: a wrong answer or any failure ends moto's part
// on the definition with a note, and its time is not counted.
func (v *motoVerdict) judge(out string, err error, want string, secs float64) {
	var w *wrongAnswer
	switch {
	case v.note != "":
	case errors.As(err, &w):
		v.note = "wrong: " + w.Error()
	case err != nil:
		v.note = "failed: " + err.Error()
	default:
		if e := sameOutput(want, []byte(out)); e != nil {
			v.note = fmt.Sprintf("wrong: output %s, want %s", out, want)
			return
		}
		v.secs += secs
	}
}

// apiPeers are the engines compared through the Step Functions API: ours (localaws/stepfunctions, its integrations
// answering at once as in-process) and moto's server, nil when moto is not installed (note says so).
type apiPeers struct {
	ours *stepfunctions.Server
	moto *motoSide
	note string
}

// defaultMotoVenv is where make bench-engine-deps links moto's virtual environment.
const defaultMotoVenv = "lab/bench/engine/.venv-moto"

// startPeers starts our engine's API and moto's server from venv (default defaultMotoVenv, relative to root).
func startPeers(ctx context.Context, root, venv string) (*apiPeers, error) {
	if venv == "" {
		venv = defaultMotoVenv
	}
	if !filepath.IsAbs(venv) {
		venv = filepath.Join(root, venv)
	}
	ours, err := stepfunctions.Run(stepfunctions.WithEngineOptions(sfnengine.Options{Lambda: instantaws.Lambda{},
		DynamoDB: instantaws.DynamoDB{}, EventBridge: instantaws.EventBridge{}}))
	if err != nil {
		return nil, err
	}
	p := &apiPeers{ours: ours}
	p.moto, err = startMoto(ctx, venv)
	if errors.Is(err, errMotoNotInstalled) {
		p.note = "not run: " + err.Error()
		return p, nil
	}
	if err != nil {
		ours.Close()
		return nil, err
	}
	return p, nil
}

// sides creates the definition's state machine on both APIs. moto is nil, and note says why, when moto cannot run
// the definition or is not installed.
func (p *apiPeers) sides(ctx context.Context, d definition) (ours, moto *apiSide, note string, err error) {
	if ours, err = newAPISide(ctx, p.ours.URL(), d); err != nil {
		return nil, nil, "", fmt.Errorf("our engine through its API: %w", err)
	}
	switch {
	case p.moto == nil:
		return ours, nil, p.note, nil
	case d.motoSkip != "":
		return ours, nil, "not run: " + d.motoSkip, nil
	}
	if moto, err = newAPISide(ctx, p.moto.url, d); err != nil {
		return ours, nil, "failed: " + err.Error(), nil
	}
	return ours, moto, "", nil
}

// close stops both servers.
func (p *apiPeers) close() {
	p.ours.Close()
	if p.moto != nil {
		p.moto.close()
	}
}
