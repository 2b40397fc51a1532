package saminvoke

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/localaws/internal/httpserver"
	"github.com/transferflow/orchestrator/localaws/runtimeapi"
)

// initLimit is how long Lambda lets a function initialise (its INIT phase) before it gives up on it.
const initLimit = 10 * time.Second

// The causes that end an invocation before the runtime answered it.
var (
	errTimedOut = errors.New("the invocation timed out")
	errExited   = errors.New("the runtime process exited")
)

// sandbox runs a built function binary for one invocation, as a Lambda execution environment does: it serves the
// Runtime API (localaws/runtimeapi) to the process, hands it the event once it asks for one, and enforces the
// function's Timeout (the process is killed, and the invocation fails with Sandbox.Timedout) and, where the
// operating system reports a process's memory (Linux), its MemorySize (the process is killed as soon as its
// resident memory exceeds it, and the invocation fails with Runtime.OutOfMemory).
type sandbox struct {
	bootstrap string
	env       []string // without AWS_LAMBDA_RUNTIME_API, which the sandbox adds
	timeout   time.Duration
	memoryMB  int
	arn       string
	initLimit time.Duration
	// logs receives the process's standard output and error, and the START, END and REPORT lines.
	logs  io.Writer
	newID func() string
}

// result is an invocation's outcome.
type result struct {
	requestID string
	// output is the function's response, or the error document Lambda returns for a failed invocation.
	output []byte
	// errorType names the error of a failed invocation; empty when the function answered.
	errorType string
	// status is the REPORT line's Status for a platform error: "timeout" or "error" (empty for a response or a
	// function error, which the function reported itself).
	status         string
	init, duration time.Duration
	maxMemory      int64 // bytes
}

// platformError makes r an error the platform reports, {"errorType","errorMessage"}, with Lambda's message format.
func (r *result) platformError(errorType, message, status string) {
	r.errorType, r.status = errorType, status
	r.output, _ = json.Marshal(struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}{errorType, fmt.Sprintf("RequestId: %s Error: %s", r.requestID, message)})
}

// exited makes r the error of a runtime process that ended without answering.
func (r *result) exited(ps *os.ProcessState, outOfMemory bool) {
	switch {
	case outOfMemory:
		r.platformError("Runtime.OutOfMemory", "Runtime exited with error: "+ps.String(), "error")
	case ps.Success():
		r.platformError("Runtime.ExitError", "Runtime exited without providing a reason", "error")
	default:
		r.platformError("Runtime.ExitError", "Runtime exited with error: "+ps.String(), "error")
	}
}

// report is Lambda's REPORT line. Billed Duration is rounded up to the millisecond and, as for every function on an
// OS-only runtime, includes the Init Duration.
func (r *result) report(memoryMB int) string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	fields := []string{
		"REPORT RequestId: " + r.requestID,
		fmt.Sprintf("Duration: %.2f ms", ms(r.duration)),
		fmt.Sprintf("Billed Duration: %d ms", int64(math.Ceil(ms(r.duration+r.init)))),
		fmt.Sprintf("Memory Size: %d MB", memoryMB),
		fmt.Sprintf("Max Memory Used: %d MB", (r.maxMemory+1<<20-1)>>20),
		fmt.Sprintf("Init Duration: %.2f ms", ms(r.init)),
	}
	if r.status != "" {
		fields = append(fields, "Status: "+r.status)
		if r.status == "error" {
			fields = append(fields, "Error Type: "+r.errorType)
		}
	}
	return strings.Join(fields, "\t")
}

// invoke starts the process, waits for it to initialise, invokes it once with event and stops it. An error is the
// sandbox's own (the process could not start, ctx ended); whatever the function did is in the result.
func (sb *sandbox) invoke(ctx context.Context, event []byte) (res result, err error) {
	logs := syncio.NewWriter(sb.logs)
	res.requestID = sb.newID()
	api := runtimeapi.NewServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("runtime api: %w", err)
	}
	hs := httpserver.New(api, httpserver.Options{Timeouts: sb.httpTimeouts(), MaxBody: runtimeapi.MaxPayloadSize + 1,
		OnBodyTimeout: runtimeTimeout})
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()

	cmd := exec.Command(sb.bootstrap)
	cmd.Dir = filepath.Dir(sb.bootstrap)
	cmd.Env = append(slices.Clone(sb.env), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String())
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = sysProcAttr()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("start %s: %w", sb.bootstrap, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var outOfMemory atomic.Bool
	watchCtx, stopWatching := context.WithCancel(ctx)
	go watchMemory(watchCtx, cmd.Process.Pid, int64(sb.memoryMB)<<20, func() {
		outOfMemory.Store(true)
		_ = cmd.Process.Kill()
	})
	defer func() {
		stopWatching()
		_ = cmd.Process.Kill()
		<-exited
		res.maxMemory = peakRSS(cmd.ProcessState)
		if err == nil {
			fmt.Fprintf(logs, "END RequestId: %s\n%s\n", res.requestID, res.report(sb.memoryMB))
		}
	}()

	ready, err := sb.initialise(ctx, api, exited, &outOfMemory, cmd, start, &res)
	fmt.Fprintf(logs, "START RequestId: %s Version: $LATEST\n", res.requestID)
	if err != nil || !ready {
		return res, err
	}

	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(sb.timeout, func() { cancel(errTimedOut) })
	defer timer.Stop()
	go func() {
		select {
		case <-exited:
			cancel(errExited)
		case <-ictx.Done():
		}
	}()
	began := time.Now()
	resp, err := api.Invoke(ictx, runtimeapi.Invocation{
		RequestID: res.requestID, Payload: event, Deadline: began.Add(sb.timeout), FunctionArn: sb.arn, TraceID: traceID(began),
	})
	res.duration = time.Since(began)
	var fe *runtimeapi.FunctionError
	switch {
	case err == nil:
		res.output = resp.Payload
	case errors.As(err, &fe):
		res.errorType, res.output = fe.Type, fe.Document()
	case errors.Is(err, errTimedOut):
		res.duration = sb.timeout
		message := fmt.Sprintf("Task timed out after %.2f seconds", sb.timeout.Seconds())
		fmt.Fprintf(logs, "%s %s %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), res.requestID, message)
		res.platformError("Sandbox.Timedout", message, "timeout")
	case errors.Is(err, errExited):
		<-exited
		res.exited(cmd.ProcessState, outOfMemory.Load())
	default:
		return res, err
	}
	return res, nil
}

// Timeouts of the Runtime API server. The runtime asks for the event at the end of its initialisation and gets it
// at once, and posts its answer (at most 6 MB, over loopback) before the function's timeout, so the write timeout
// covers both with a margin: initialisation, then the invocation, then 30 s.
func (sb *sandbox) httpTimeouts() httpserver.Timeouts {
	return httpserver.Timeouts{Header: 10 * time.Second, Body: 30 * time.Second, Write: sb.initLimit + sb.timeout + 30*time.Second,
		Idle: 2 * time.Minute}
}

// runtimeTimeout answers a runtime whose request body did not arrive in time, in the Runtime API's error shape.
func runtimeTimeout(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestTimeout)
	_, _ = io.WriteString(w, `{"errorMessage":"the request body did not arrive in time","errorType":"RequestTimeout"}`)
}

// initialise waits for the runtime's first request for an invocation, up to initLimit. When the runtime posts an
// initialisation error, exits or runs out of time instead, ready is false and res holds the failure.
func (sb *sandbox) initialise(ctx context.Context, api *runtimeapi.Server, exited <-chan struct{}, outOfMemory *atomic.Bool,
	cmd *exec.Cmd, start time.Time, res *result) (ready bool, err error) {
	limit := time.NewTimer(sb.initLimit)
	defer limit.Stop()
	select {
	case <-api.Ready():
		res.init = time.Since(start)
		return true, nil
	case <-api.InitFailed():
	case <-exited:
	case <-limit.C:
		res.init = sb.initLimit
		res.platformError("Sandbox.Timedout", fmt.Sprintf("Init phase timed out after %.2f seconds", sb.initLimit.Seconds()), "timeout")
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
	res.init = time.Since(start)
	if fe := api.InitError(); fe != nil {
		res.errorType, res.status, res.output = fe.Type, "error", fe.Document()
		return false, nil
	}
	res.exited(cmd.ProcessState, outOfMemory.Load())
	return false, nil
}

// traceID is an X-Ray trace header for an invocation that began at t, not sampled.
func traceID(t time.Time) string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", t.Unix(), hex.EncodeToString(b[:12]), hex.EncodeToString(b[12:]))
}
