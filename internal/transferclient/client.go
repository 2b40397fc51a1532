package transferclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a zero Client.
const (
	DefaultMaxAttempts   = 6
	DefaultBaseBackoff   = 250 * time.Millisecond
	DefaultMaxBackoff    = 8 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
	DefaultPollInterval  = 500 * time.Millisecond
	// DefaultAttemptTimeout is longer than API Gateway's 29 s integration limit, so a slow answer arrives as the
	// gateway's 504 (retried) rather than being cut short here.
	DefaultAttemptTimeout = 35 * time.Second
	maxPollInterval       = 5 * time.Second
	maxResponseBytes      = 8 << 20
)

// doer sends one HTTP request; *http.Client is one.
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

// signer signs a request in place before it is sent. payloadHash is the hex SHA-256 of the body and now is the
// signing time. It is called once per attempt.
type signer interface {
	Sign(ctx context.Context, r *http.Request, payloadHash string, now time.Time) error
}

// Client talks to the transfer API at Endpoint. The zero values of the optional fields are usable defaults; a Client
// is safe for concurrent use when its HTTP, Signer, Sleep and OnRetry are.
type Client struct {
	// Endpoint is the API's base URL, including any stage path: http://127.0.0.1:3000 or
	// https://abc123.execute-api.eu-west-1.amazonaws.com/v1.
	Endpoint string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP doer
	// Signer signs every attempt; nil sends requests unsigned.
	Signer signer
	// Now is the clock, for signing times, Retry-After dates and wait deadlines; nil means time.Now.
	Now func() time.Time
	// Sleep waits d or until ctx is done; nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0,1) that spreads backoffs; nil means math/rand/v2.
	Jitter func() float64
	// MaxAttempts bounds the requests sent for one call, first included; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// AttemptTimeout bounds one attempt, answer included; a timed-out attempt is retried. 0 means
	// DefaultAttemptTimeout.
	AttemptTimeout time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits; a longer one ends the call. 0 means
	// DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// OnRetry, when set, is told about each retry before the client waits.
	OnRetry func(Retry)
	// Operator sends every request to the operator routes: OperatorPrefix before each path (POST
	// /operator/transfers, GET /operator/accounts/{id}, …). There the caller has the operator's rights: open funding
	// accounts, assign owners, read any account or transfer, move money out of a funding account. API Gateway lets
	// only the principals IAM allows invoke them.
	Operator bool
}

// OperatorPrefix begins the path of every operator route, after the endpoint's stage path.
const OperatorPrefix = "/operator"

// Retry describes a retry about to happen.
type Retry struct {
	// Attempt is the number of the attempt that failed (1 for the first).
	Attempt int
	// Err is why it failed.
	Err error
	// Wait is how long the client waits before the next attempt.
	Wait time.Duration
}

// response is a complete answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

// Submit sends POST /transfers with the Idempotency-Key key. The body is encoded once and every attempt sends the
// same bytes with the same key, so a retry can only replay the first request, never make a second transfer. The key
// is sent in its structured-field form (a quoted sf-string), which the API unquotes; it must be 1 to 255 printable
// ASCII characters.
func (c *Client) Submit(ctx context.Context, key string, req SubmitRequest) (SubmitResult, error) {
	if err := ValidateIdempotencyKey(key); err != nil {
		return SubmitResult{}, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return SubmitResult{}, fmt.Errorf("encode transfer request: %w", err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Idempotency-Key", quoteSFString(key))
	res, attempts, err := c.do(ctx, http.MethodPost, "/transfers", nil, h, body)
	if err != nil {
		return SubmitResult{Attempts: attempts}, fmt.Errorf("submit transfer: %w", err)
	}
	t, err := decodeTransfer(res.body)
	if err != nil {
		return SubmitResult{Attempts: attempts}, fmt.Errorf("submit transfer: %w", err)
	}
	return SubmitResult{
		Transfer: t,
		Status:   res.status,
		Replayed: strings.EqualFold(res.header.Get("Idempotent-Replayed"), "true"),
		Attempts: attempts,
	}, nil
}

// Get returns the transfer as it stands now.
func (c *Client) Get(ctx context.Context, transferID string) (Transfer, error) {
	res, _, err := c.do(ctx, http.MethodGet, "/transfers/"+url.PathEscape(transferID), nil, nil, nil)
	if err != nil {
		return Transfer{}, fmt.Errorf("get transfer %s: %w", transferID, err)
	}
	t, err := decodeTransfer(res.body)
	if err != nil {
		return Transfer{}, fmt.Errorf("get transfer %s: %w", transferID, err)
	}
	return t, nil
}

// Wait polls the transfer until it is COMPLETED or FAILED and returns it. When the clock (c.Now) reaches deadline
// first, it returns the last transfer seen and ErrWaitTimeout. Polls start every DefaultPollInterval and slow down
// to 5 s.
func (c *Client) Wait(ctx context.Context, transferID string, deadline time.Time) (Transfer, error) {
	interval := DefaultPollInterval
	for {
		t, err := c.Get(ctx, transferID)
		if err != nil {
			return t, err
		}
		if t.Terminal() {
			return t, nil
		}
		left := deadline.Sub(c.now())
		if left <= 0 {
			return t, ErrWaitTimeout
		}
		if err := c.sleep(ctx, min(interval, left)); err != nil {
			return t, fmt.Errorf("wait for transfer %s: %w", transferID, err)
		}
		interval = min(interval*3/2, maxPollInterval)
	}
}

// History returns the transfer's audit trail, following nextToken until the last page. Events of all pages are
// joined in order; the ledger is taken from the first page that has one.
func (c *Client) History(ctx context.Context, transferID string) (History, error) {
	var h History
	token := ""
	for page := 1; ; page++ {
		var q url.Values
		if token != "" {
			q = url.Values{"nextToken": {token}}
		}
		res, _, err := c.do(ctx, http.MethodGet, "/transfers/"+url.PathEscape(transferID)+"/history", q, nil, nil)
		if err != nil {
			return History{}, fmt.Errorf("get history of %s (page %d): %w", transferID, page, err)
		}
		var p struct {
			History
			NextToken string `json:"nextToken"`
		}
		if err := json.Unmarshal(res.body, &p); err != nil {
			return History{}, fmt.Errorf("decode history of %s (page %d): %w", transferID, page, err)
		}
		if page == 1 {
			h.TransferID, h.ExecutionArn = p.TransferID, p.ExecutionArn
		}
		h.Events = append(h.Events, p.Events...)
		if h.Ledger == nil && len(p.Ledger) > 0 {
			h.Ledger = p.Ledger
		}
		if p.NextToken == "" {
			// Empty lists, not null, in JSON output.
			if h.Events == nil {
				h.Events = []Event{}
			}
			if h.Ledger == nil {
				h.Ledger = []LedgerLeg{}
			}
			return h, nil
		}
		if p.NextToken == token {
			return History{}, fmt.Errorf("get history of %s (page %d): the API repeated nextToken", transferID, page)
		}
		token = p.NextToken
	}
}

// Account returns an account's balance, currency and version.
func (c *Client) Account(ctx context.Context, accountID string) (Account, error) {
	res, _, err := c.do(ctx, http.MethodGet, "/accounts/"+url.PathEscape(accountID), nil, nil, nil)
	if err != nil {
		return Account{}, fmt.Errorf("get account %s: %w", accountID, err)
	}
	a, err := decodeAccount(res.body)
	if err != nil {
		return Account{}, fmt.Errorf("get account %s: %w", accountID, err)
	}
	return a, nil
}

// AssignOwner sends PUT /operator/accounts/{id}/owner: it gives the account, which has no owner, the owner named by
// ownerARN (a principal ARN, such as arn:aws:iam::123456789012:user/alice), and returns the account as operators
// see it. Assigning the owner it already has answers the same again, so the request is retried as a GET is. It is
// an operator route only: without Operator nothing is sent.
func (c *Client) AssignOwner(ctx context.Context, accountID, ownerARN string) (Account, error) {
	if !c.Operator {
		return Account{}, fmt.Errorf("assign owner of %s: an operator route: set Client.Operator", accountID)
	}
	body, err := json.Marshal(struct {
		Owner string `json:"owner"`
	}{ownerARN})
	if err != nil {
		return Account{}, fmt.Errorf("encode owner of %s: %w", accountID, err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	res, _, err := c.do(ctx, http.MethodPut, "/accounts/"+url.PathEscape(accountID)+"/owner", nil, h, body)
	if err != nil {
		return Account{}, fmt.Errorf("assign owner of %s: %w", accountID, err)
	}
	a, err := decodeAccount(res.body)
	if err != nil {
		return Account{}, fmt.Errorf("assign owner of %s: %w", accountID, err)
	}
	return a, nil
}

// OpenAccount sends POST /accounts with the Idempotency-Key key, as Submit does a transfer: every attempt sends the
// same bytes with the same key, so a retry can only replay the first request, never open a second account.
func (c *Client) OpenAccount(ctx context.Context, key string, req OpenAccountRequest) (OpenAccountResult, error) {
	if err := ValidateIdempotencyKey(key); err != nil {
		return OpenAccountResult{}, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return OpenAccountResult{}, fmt.Errorf("encode account request: %w", err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Idempotency-Key", quoteSFString(key))
	res, attempts, err := c.do(ctx, http.MethodPost, "/accounts", nil, h, body)
	if err != nil {
		return OpenAccountResult{Attempts: attempts}, fmt.Errorf("open account: %w", err)
	}
	a, err := decodeAccount(res.body)
	if err != nil {
		return OpenAccountResult{Attempts: attempts}, fmt.Errorf("open account: %w", err)
	}
	return OpenAccountResult{
		Account:  a,
		Status:   res.status,
		Replayed: strings.EqualFold(res.header.Get("Idempotent-Replayed"), "true"),
		Attempts: attempts,
	}, nil
}

// AccountTransfers returns one page of the account's transfers, newest first: up to limit entries (0: the API's
// default) after nextToken (empty: from the newest).
func (c *Client) AccountTransfers(ctx context.Context, accountID string, limit int, nextToken string) (AccountTransfers, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if nextToken != "" {
		q.Set("nextToken", nextToken)
	}
	res, _, err := c.do(ctx, http.MethodGet, "/accounts/"+url.PathEscape(accountID)+"/transfers", q, nil, nil)
	if err != nil {
		return AccountTransfers{}, fmt.Errorf("list transfers of account %s: %w", accountID, err)
	}
	var p struct {
		AccountID string            `json:"accountId"`
		Transfers []json.RawMessage `json:"transfers"`
		NextToken string            `json:"nextToken"`
	}
	if err := json.Unmarshal(res.body, &p); err != nil {
		return AccountTransfers{}, fmt.Errorf("decode transfers of account %s: %w", accountID, err)
	}
	out := AccountTransfers{AccountID: p.AccountID, NextToken: p.NextToken, Transfers: make([]AccountTransfer, 0, len(p.Transfers))}
	for _, raw := range p.Transfers {
		var t AccountTransfer
		if err := json.Unmarshal(raw, &t); err != nil {
			return AccountTransfers{}, fmt.Errorf("decode transfers of account %s: %w", accountID, err)
		}
		t.Raw = raw
		out.Transfers = append(out.Transfers, t)
	}
	return out, nil
}

// AllAccountTransfers follows nextToken from the newest entry to the oldest and returns every entry, newest first;
// limit is the page size (0: the API's default).
func (c *Client) AllAccountTransfers(ctx context.Context, accountID string, limit int) (AccountTransfers, error) {
	all := AccountTransfers{AccountID: accountID, Transfers: []AccountTransfer{}}
	token := ""
	for {
		p, err := c.AccountTransfers(ctx, accountID, limit, token)
		if err != nil {
			return AccountTransfers{}, err
		}
		all.Transfers = append(all.Transfers, p.Transfers...)
		if p.NextToken == "" {
			return all, nil
		}
		if p.NextToken == token {
			return AccountTransfers{}, fmt.Errorf("list transfers of account %s: the API repeated nextToken", accountID)
		}
		token = p.NextToken
	}
}

// decodeAccount decodes an account the API answered with and keeps its JSON.
func decodeAccount(b []byte) (Account, error) {
	var a Account
	if err := json.Unmarshal(b, &a); err != nil {
		return Account{}, fmt.Errorf("decode account: %w", err)
	}
	if a.AccountID == "" {
		return Account{}, errors.New("decode account: the answer has no accountId")
	}
	a.Raw = b
	return a, nil
}

func decodeTransfer(b []byte) (Transfer, error) {
	var t Transfer
	if err := json.Unmarshal(b, &t); err != nil {
		return Transfer{}, fmt.Errorf("decode transfer: %w", err)
	}
	if t.TransferID == "" || t.Status == "" {
		return Transfer{}, errors.New("decode transfer: the answer has no transferId or status")
	}
	t.Raw = b
	return t, nil
}

// do sends the request until it gets a final answer: a 2xx is returned, a permanent error is returned at once, and
// a temporary one is retried with the same headers and body until MaxAttempts. It returns the answer and the number
// of attempts.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, header http.Header, body []byte) (response, int, error) {
	u, err := c.url(path, query)
	if err != nil {
		return response{}, 0, err
	}
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	maxAttempts := c.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	sent := false // whether any attempt reached the API
	giveUp := func(attempt int, err error) (response, int, error) {
		return response{}, attempt, &RetryError{Attempts: attempt, Err: err, NotSent: !sent}
	}
	for attempt := 1; ; attempt++ {
		res, err := c.once(ctx, method, u, header, body, payloadHash)
		if err == nil {
			return res, attempt, nil
		}
		sent = sent || !unsent(err)
		if ctx.Err() != nil {
			return giveUp(attempt, errors.Join(ctx.Err(), err))
		}
		if !retryable(err) {
			return response{}, attempt, err
		}
		if attempt >= maxAttempts {
			return giveUp(attempt, err)
		}
		wait := c.backoff(attempt)
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			if apiErr.RetryAfter > c.maxRetryAfter() {
				return giveUp(attempt, err)
			}
			wait = max(wait, apiErr.RetryAfter)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return giveUp(attempt, err)
		}
		if c.OnRetry != nil {
			c.OnRetry(Retry{Attempt: attempt, Err: err, Wait: wait})
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return giveUp(attempt, errors.Join(serr, err))
		}
	}
}

// once sends one attempt. Errors are *APIError for non-2xx answers and wrapped transport errors otherwise.
func (c *Client) once(ctx context.Context, method string, u *url.URL, header http.Header, body []byte, payloadHash string) (response, error) {
	timeout := c.AttemptTimeout
	if timeout <= 0 {
		timeout = DefaultAttemptTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return response{}, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if c.Signer != nil {
		if err := c.Signer.Sign(ctx, req, payloadHash, c.now()); err != nil {
			return response{}, &signError{err: err}
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return response{}, err // a *url.Error, which names the method and URL
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return response{}, fmt.Errorf("%s %s: read answer: %w", method, u.Path, err)
	}
	if len(b) > maxResponseBytes {
		return response{}, &permanentError{fmt.Errorf("%s %s: answer larger than %d bytes", method, u.Path, maxResponseBytes)}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
	}
	return response{}, c.apiError(resp, b)
}

// apiError builds the *APIError of a non-2xx answer.
func (c *Client) apiError(resp *http.Response, b []byte) *APIError {
	e := &APIError{Status: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), c.now())}
	var p struct {
		Code    string       `json:"code"`
		Detail  string       `json:"detail"`
		Title   string       `json:"title"`
		Message string       `json:"message"`
		Errors  []FieldError `json:"errors"`
	}
	if json.Unmarshal(b, &p) == nil {
		e.Code, e.Detail, e.Errors = p.Code, p.Detail, p.Errors
		if e.Detail == "" {
			e.Detail = p.Message
		}
	}
	return e
}

// signError is a failure to sign, for example missing credentials; it is not retried.
type signError struct{ err error }

// Error says that signing failed and why.
func (e *signError) Error() string { return "sign request: " + e.err.Error() }

// Unwrap returns the signer's error.
func (e *signError) Unwrap() error { return e.err }

// permanentError is a transport-level failure that a retry cannot fix.
type permanentError struct{ err error }

// Error returns the underlying error's text.
func (e *permanentError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e *permanentError) Unwrap() error { return e.err }

// retryable reports whether an attempt's error may go away on a retry of the same request. Answers are retried when
// temporary (5xx, 429, 409 REQUEST_IN_PROGRESS); transport errors (refused or dropped connections, timeouts, a
// truncated answer) are retried, except certificate errors.
func retryable(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Temporary()
	}
	var se *signError
	var pe *permanentError
	if errors.As(err, &se) || errors.As(err, &pe) {
		return false
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return false
	}
	return true
}

// backoff is the wait after the attempt-th failure: exponential from DefaultBaseBackoff, capped at
// DefaultMaxBackoff, with "equal jitter" (half fixed, half random) so that many clients do not retry in step.
func (c *Client) backoff(attempt int) time.Duration {
	d := DefaultBaseBackoff << min(attempt-1, 10)
	d = min(d, DefaultMaxBackoff)
	j := rand.Float64
	if c.Jitter != nil {
		j = c.Jitter
	}
	return d/2 + time.Duration(j()*float64(d/2))
}

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP-date; it returns 0 when absent or invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > 24*3600 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

func (c *Client) url(path string, query url.Values) (*url.URL, error) {
	base, err := url.Parse(c.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", c.Endpoint, err)
	}
	if base.Scheme != "http" && base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want http(s)://host[:port][/stage]", c.Endpoint)
	}
	if c.Operator {
		path = OperatorPrefix + path
	}
	// path is already escaped (ids go through url.PathEscape), so RawPath keeps an escaped "/" inside an id.
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", path, err)
	}
	u := *base
	u.Path = strings.TrimSuffix(base.Path, "/") + unescaped
	u.RawPath = strings.TrimSuffix(base.EscapedPath(), "/") + path
	u.RawQuery = ""
	if query != nil {
		u.RawQuery = query.Encode()
	}
	return &u, nil
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) maxRetryAfter() time.Duration {
	if c.MaxRetryAfter > 0 {
		return c.MaxRetryAfter
	}
	return DefaultMaxRetryAfter
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// Sleep waits for d or until ctx ends, whichever comes first, and returns ctx's error in the second case: the
// Client's default Sleep.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ValidateIdempotencyKey checks what the API accepts as a key: 1 to 255 printable ASCII characters (0x21-0x7E).
func ValidateIdempotencyKey(key string) error {
	if len(key) == 0 || len(key) > 255 {
		return fmt.Errorf("idempotency key must be 1 to 255 characters, got %d", len(key))
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return fmt.Errorf("idempotency key: character %d is not printable ASCII (0x21-0x7E)", i+1)
		}
	}
	return nil
}

// quoteSFString renders key as an RFC 8941 sf-string: in quotes, with '"' and '\' escaped.
func quoteSFString(key string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(key) + `"`
}
