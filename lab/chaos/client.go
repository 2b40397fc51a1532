package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// Client limits. A real client keeps a request until it has an answer: when transferclient's own retries run out
// (the stack is down for a restart), the campaign's client waits and sends the same request again, up to
// maxRounds times.
const (
	maxRounds    = 40
	roundPause   = time.Second
	attempts     = 4
	waitTerminal = 4 * time.Minute
	role         = "chaos-payments"
	// roleOwner owns the campaign's accounts: the role its clients sign as, named as API Gateway reports a session
	// of it (any session: the owner is the role).
	roleOwner     = "arn:aws:sts::000000000000:assumed-role/" + role + "/seed"
	codeKeyReused = "IDEMPOTENCY_KEY_REUSED"
)

// router sends every request to the stack that is up now: the clients address one endpoint, as real ones address
// a DNS name, and each restart moves the stack to new ports.
type router struct {
	hc   *http.Client
	host atomic.Pointer[string]
}

// Do sends r to the current stack.
func (rt *router) Do(r *http.Request) (*http.Response, error) {
	if h := rt.host.Load(); h != nil {
		r.URL.Host = *h
		r.Host = *h
	}
	return rt.hc.Do(r)
}

// driver is the campaign's clients and what they saw.
type driver struct {
	plan     Plan
	rt       *router
	onAccept func() // called at each key's first 2xx answer
	sessions atomic.Int64

	mu          sync.Mutex
	accepted    map[string][]string // key → the transfer ids its 2xx answers named
	firstReplay map[string][]byte   // key → the first replay answer after its transfer ended
	retries     map[string]int      // by cause: HTTP status or "transport"
	rounds      int
	unanswered  int
	notTerminal int
	anomalies   []Violation
}

func newDriver(plan Plan, rt *router, onAccept func()) *driver {
	return &driver{plan: plan, rt: rt, onAccept: onAccept, accepted: map[string][]string{},
		firstReplay: map[string][]byte{}, retries: map[string]int{}}
}

// client returns an API client signing as a new session of the campaign's role (the gateway reads the role from the
// session token and the session from the access key id, docs/local-stack.md), with the given attempts and attempt
// timeout (0: the defaults).
func (d *driver) client(maxAttempts int, attemptTimeout time.Duration) *transferclient.Client {
	session := d.sessions.Add(1)
	creds := credentials.NewStaticCredentialsProvider(fmt.Sprintf("ASIACHAOS%011d", session), "chaos-secret", role)
	return &transferclient.Client{
		Endpoint:       "http://chaos.stack",
		HTTP:           d.rt,
		Signer:         &transferclient.SigV4Signer{Credentials: creds, Region: "us-east-1"},
		MaxAttempts:    maxAttempts,
		AttemptTimeout: attemptTimeout,
		OnRetry:        d.retried,
	}
}

func (d *driver) retried(r transferclient.Retry) {
	cause := "transport"
	var apiErr *transferclient.APIError
	if errors.As(r.Err, &apiErr) {
		cause = strconv.Itoa(apiErr.Status)
	}
	d.mu.Lock()
	d.retries[cause]++
	d.mu.Unlock()
}

func (d *driver) anomaly(check, subject, format string, args ...any) {
	d.mu.Lock()
	d.anomalies = append(d.anomalies, Violation{Check: check, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	d.mu.Unlock()
}

// answered records a 2xx answer for key.
func (d *driver) answered(key string, res transferclient.SubmitResult) {
	d.mu.Lock()
	ids := d.accepted[key]
	first := len(ids) == 0
	known := false
	for _, id := range ids {
		known = known || id == res.Transfer.TransferID
	}
	if !known {
		d.accepted[key] = append(ids, res.Transfer.TransferID)
	}
	d.mu.Unlock()
	if first && d.onAccept != nil {
		d.onAccept()
	}
}

// submit sends the request until it has an answer: transferclient's retries, then rounds of them while the stack
// restarts. A 2xx is recorded; a permanent error is returned as it is.
func (d *driver) submit(ctx context.Context, key string, req transferclient.SubmitRequest) (transferclient.SubmitResult, error) {
	var err error
	for round := 0; round < maxRounds; round++ {
		if round > 0 {
			d.mu.Lock()
			d.rounds++
			d.mu.Unlock()
			if serr := sleep(ctx, roundPause); serr != nil {
				return transferclient.SubmitResult{}, serr
			}
		}
		var res transferclient.SubmitResult
		res, err = d.client(attempts, 0).Submit(ctx, key, req)
		if err == nil {
			d.answered(key, res)
			return res, nil
		}
		var apiErr *transferclient.APIError
		if errors.As(err, &apiErr) && !apiErr.Temporary() {
			return res, err
		}
	}
	return transferclient.SubmitResult{}, fmt.Errorf("no answer after %d rounds: %w", maxRounds, err)
}

// run plays transfer t: its action, the wait for its end, and a replay of the ended transfer.
func (d *driver) run(ctx context.Context, t Transfer) {
	key, req := d.plan.Key(t.Index), request(t)
	var res transferclient.SubmitResult
	var err error
	switch t.Action {
	case ActTimeoutReplay:
		// The first attempt is cut off after a few milliseconds, as a client with a short timeout does; it may or
		// may not have reached the stack. Then the same request again.
		if first, ferr := d.client(1, t.CutAfter).Submit(ctx, key, req); ferr == nil {
			d.answered(key, first)
		}
		res, err = d.submit(ctx, key, req)
	case ActDuplicate:
		var wg sync.WaitGroup
		var other transferclient.SubmitResult
		var oerr error
		wg.Go(func() { other, oerr = d.submit(ctx, key, req) })
		res, err = d.submit(ctx, key, req)
		wg.Wait()
		if err != nil && oerr == nil {
			res, err = other, nil
		}
	default:
		res, err = d.submit(ctx, key, req)
	}
	if err != nil {
		d.refused(key, err)
		return
	}
	switch t.Action {
	case ActOtherPayload:
		changed := req
		changed.Amount++
		_, cerr := d.submit(ctx, key, changed)
		var apiErr *transferclient.APIError
		switch {
		case cerr == nil:
			d.anomaly(CheckExecutionPerKey, key, "the same key with another amount was accepted")
		case errors.As(cerr, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity && apiErr.Code == codeKeyReused:
		case errors.As(cerr, &apiErr):
			d.anomaly(CheckAnswer, key, "the same key with another amount: %v, want 422 %s", cerr, codeKeyReused)
		}
	case ActNewSession:
		again, aerr := d.submit(ctx, key, req) // every submit signs as a new session of the role
		if aerr == nil && again.Transfer.TransferID != res.Transfer.TransferID {
			d.anomaly(CheckExecutionPerKey, key, "a new session of the role got transfer %s, the first %s",
				again.Transfer.TransferID, res.Transfer.TransferID)
		}
	}
	if !d.wait(ctx, res.Transfer) {
		d.mu.Lock()
		d.notTerminal++
		d.mu.Unlock()
		return
	}
	if body, ok := d.replay(ctx, key, req); ok {
		d.mu.Lock()
		d.firstReplay[key] = body
		d.mu.Unlock()
	}
}

// request is transfer t's body.
func request(t Transfer) transferclient.SubmitRequest {
	return transferclient.SubmitRequest{SourceAccountID: t.Source, DestinationAccountID: t.Destination,
		Amount: t.Amount, Currency: t.Currency, Reference: "chaos " + strconv.Itoa(t.Index)}
}

// refused records a request that got no 2xx answer.
func (d *driver) refused(key string, err error) {
	var apiErr *transferclient.APIError
	if errors.As(err, &apiErr) {
		d.anomaly(CheckAnswer, key, "a valid request refused: %v", err)
		return
	}
	d.mu.Lock()
	d.unanswered++
	d.mu.Unlock()
}

// wait polls the transfer until it ended, through restarts, for at most waitTerminal.
func (d *driver) wait(ctx context.Context, t transferclient.Transfer) bool {
	deadline := time.Now().Add(waitTerminal)
	for !t.Terminal() {
		got, err := d.client(attempts, 0).Wait(ctx, t.TransferID, deadline)
		if err == nil {
			return true
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false
		}
		if serr := sleep(ctx, roundPause); serr != nil {
			return false
		}
		if got.TransferID != "" {
			t = got
		}
	}
	return true
}

// replay sends the request again after the transfer ended and returns the answer's bytes, which must be a 200.
func (d *driver) replay(ctx context.Context, key string, req transferclient.SubmitRequest) ([]byte, bool) {
	res, err := d.submit(ctx, key, req)
	if err != nil {
		return nil, false
	}
	if res.Status != http.StatusOK || !res.Replayed {
		d.anomaly(CheckReplay, key, "a replay of an ended transfer answered %d (replayed %t), want 200", res.Status, res.Replayed)
	}
	return res.Transfer.Raw, true
}

// sleep is transferclient.Sleep: it waits for d or until ctx ends.
var sleep = transferclient.Sleep
