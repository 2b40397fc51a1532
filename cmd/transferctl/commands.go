package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// Local checks mirror the API's validation (docs/api.md), so that a mistake is a usage error before anything is
// sent. The API stays the authority: it checks again.
var (
	accountIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	currencyPattern  = regexp.MustCompile(`^[A-Z]{3}$`)
	digitsPattern    = regexp.MustCompile(`^[0-9]+$`)
	integerPattern   = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	// arnPattern: an ARN, in printable ASCII without spaces (as IAM names are).
	arnPattern = regexp.MustCompile(`^arn:[\x21-\x7e]+$`)
)

const (
	maxAmount       = 100_000_000_000 // 10^11 minor units
	maxReferenceLen = 140
)

// prepare parses a command's arguments and checks the globals. It returns the positional arguments, or done with
// the exit code to return at once (after -h, or a usage error).
func (a *app) prepare(fs *flag.FlagSet, args []string) (pos []string, code int, done bool) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.usage()
			return nil, exitOK, true
		}
		return nil, a.usageError(err), true
	}
	if err := a.g.check(); err != nil {
		return nil, a.usageError(err), true
	}
	return pos, exitOK, false
}

func (a *app) submit(ctx context.Context, fs *flag.FlagSet, args []string) int {
	var (
		req         transferclient.SubmitRequest
		amount, key string
		wait        bool
	)
	fs.StringVar(&req.SourceAccountID, "from", "", "")
	fs.StringVar(&req.DestinationAccountID, "to", "", "")
	fs.StringVar(&amount, "amount", "", "")
	fs.StringVar(&req.Currency, "currency", "", "")
	fs.StringVar(&req.Reference, "reference", "", "")
	fs.StringVar(&key, "idempotency-key", "", "")
	fs.BoolVar(&wait, "wait", false, "")
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return a.usageError(fmt.Errorf("submit takes no arguments, got %q", pos))
	}
	var err error
	if req.Amount, err = parseAmount(amount); err != nil {
		return a.usageError(err)
	}
	if err := checkSubmit(req); err != nil {
		return a.usageError(err)
	}
	return a.withKeyedClient(ctx, key, func(ctx context.Context, c *transferclient.Client, key string, deadline time.Time) int {
		res, err := c.Submit(ctx, key, req)
		if err != nil {
			return a.reportKeyed(err, key, "the transfer may have been accepted", "create a second transfer", "no transfer was made")
		}
		t := res.Transfer
		if !a.g.quiet {
			switch {
			case res.Replayed:
				fmt.Fprintf(a.stderr, "replayed: this key already made transfer %s; nothing new was submitted\n", transferclient.Clean(t.TransferID))
			default:
				fmt.Fprintf(a.stderr, "accepted: transfer %s\n", transferclient.Clean(t.TransferID))
			}
		}
		if wait && !t.Terminal() {
			t, err = c.Wait(ctx, t.TransferID, deadline)
			if err != nil {
				return a.waitFailed(t, err)
			}
		}
		return a.printTransfer(t)
	})
}

func (a *app) get(ctx context.Context, fs *flag.FlagSet, args []string) int {
	var wait bool
	fs.BoolVar(&wait, "wait", false, "")
	return a.transferCommand(ctx, fs, args, "get", func(ctx context.Context, c *transferclient.Client, id string, deadline time.Time) int {
		var t transferclient.Transfer
		var err error
		if wait {
			t, err = c.Wait(ctx, id, deadline)
		} else {
			t, err = c.Get(ctx, id)
		}
		if err != nil {
			return a.waitFailed(t, err)
		}
		return a.printTransfer(t)
	})
}

// transferCommand runs name, a command taking one TRANSFER_ID: it parses the command line, makes the client and
// calls run with them, under --timeout (deadline is when it ends). A usage error, --help or no client ends the
// command before run, with its exit code.
func (a *app) transferCommand(ctx context.Context, fs *flag.FlagSet, args []string, name string,
	run func(ctx context.Context, c *transferclient.Client, id string, deadline time.Time) int) int {
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 || pos[0] == "" {
		return a.usageError(fmt.Errorf("%s takes one TRANSFER_ID", name))
	}
	return a.withClient(ctx, func(ctx context.Context, c *transferclient.Client, deadline time.Time) int {
		return run(ctx, c, pos[0], deadline)
	})
}

// waitFailed reports an error of Get or Wait; on ErrWaitTimeout it still prints the last transfer seen.
func (a *app) waitFailed(t transferclient.Transfer, err error) int {
	if errors.Is(err, transferclient.ErrWaitTimeout) {
		if code := a.printTransfer(t); code == exitError {
			return code
		}
		fmt.Fprintf(a.stderr, "transferctl: transfer %s is still %s after %s; check later with: transferctl get %s\n",
			transferclient.Clean(t.TransferID), transferclient.Clean(t.Status), a.g.timeout, transferclient.Clean(t.TransferID))
		return exitWaitTimeout
	}
	return a.report(err)
}

func (a *app) history(ctx context.Context, fs *flag.FlagSet, args []string) int {
	var relative bool
	fs.BoolVar(&relative, "relative", false, "")
	return a.transferCommand(ctx, fs, args, "history", func(ctx context.Context, c *transferclient.Client, id string, _ time.Time) int {
		h, err := c.History(ctx, id)
		if err != nil {
			return a.report(err)
		}
		if a.g.output == "json" {
			return a.printJSON(h)
		}
		// The record gives the timeline its first and last entries (accepted, settled) and the header its status.
		t, err := c.Get(ctx, id)
		if err != nil {
			return a.report(err)
		}
		if err := transferclient.WriteTimeline(a.stdout, h, &t, transferclient.TimelineFormat{Relative: relative}); err != nil {
			fmt.Fprintf(a.stderr, "transferctl: write timeline: %v\n", err)
			return exitError
		}
		return exitOK
	})
}

// accounts dispatches accounts get|create|assign-owner|transfers; any other first argument is an account id, so
// today's "accounts ACCOUNT_ID..." stays "accounts get ACCOUNT_ID...". An account named get, create, assign-owner or
// transfers is shown with "accounts get NAME".
func (a *app) accounts(ctx context.Context, fs *flag.FlagSet, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "get":
			return a.accountsGet(ctx, fs, args[1:])
		case "create":
			return a.accountsCreate(ctx, fs, args[1:])
		case "assign-owner":
			return a.accountsAssignOwner(ctx, fs, args[1:])
		case "transfers":
			return a.accountsTransfers(ctx, fs, args[1:], "accounts transfers")
		}
	}
	return a.accountsGet(ctx, fs, args)
}

// transfers dispatches transfers list.
func (a *app) transfers(ctx context.Context, fs *flag.FlagSet, args []string) int {
	if len(args) == 0 || args[0] != "list" {
		return a.usageError(errors.New("transfers takes the subcommand list: transfers list --account ACCOUNT_ID"))
	}
	var account string
	fs.StringVar(&account, "account", "", "")
	return a.accountsTransfers(ctx, fs, args[1:], "transfers list", &account)
}

// accountsCreate opens an account: POST /accounts with an Idempotency-Key, generated (and printed first) unless
// given, as submit does. --floor (a funding account's) and --owner (a customer account's) are fields of the
// operator route only, so they need --operator.
func (a *app) accountsCreate(ctx context.Context, fs *flag.FlagSet, args []string) int {
	var req transferclient.OpenAccountRequest
	var key, floor string
	fs.StringVar(&req.Currency, "currency", "", "")
	fs.StringVar(&req.AccountID, "id", "", "")
	fs.StringVar(&req.Kind, "kind", "", "")
	fs.StringVar(&floor, "floor", "", "")
	fs.StringVar(&req.Owner, "owner", "", "")
	fs.StringVar(&key, "idempotency-key", "", "")
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return a.usageError(fmt.Errorf("accounts create takes no arguments, got %q", pos))
	}
	var errs []error
	if !currencyPattern.MatchString(req.Currency) {
		errs = append(errs, fmt.Errorf("--currency %q: want three upper-case letters (ISO 4217), e.g. EUR", req.Currency))
	}
	if req.AccountID != "" && !accountIDPattern.MatchString(req.AccountID) {
		errs = append(errs, fmt.Errorf("--id %q: want 1 to 64 characters of A-Z a-z 0-9 _ -", req.AccountID))
	}
	if req.Kind != "" && req.Kind != transferclient.KindCustomer && req.Kind != transferclient.KindFunding {
		errs = append(errs, fmt.Errorf("--kind %q: want customer or funding", req.Kind))
	}
	funding := req.Kind == transferclient.KindFunding
	if isSet(fs, "floor") {
		n, err := parseFloor(floor)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !funding:
			errs = append(errs, errors.New("--floor is only for a funding account (--kind funding)"))
		case !a.g.operator:
			errs = append(errs, errors.New("--floor needs --operator: only an operator opens a funding account with a floor"))
		}
		req.Floor = &n
	}
	if isSet(fs, "owner") {
		err := checkOwner(req.Owner)
		switch {
		case err != nil:
			errs = append(errs, err)
		case funding:
			errs = append(errs, errors.New("--owner is only for a customer account: funding accounts have no owner"))
		case !a.g.operator:
			errs = append(errs, errors.New("--owner needs --operator: only an operator opens an account for another owner"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return a.usageError(err)
	}
	return a.withKeyedClient(ctx, key, func(ctx context.Context, c *transferclient.Client, key string, _ time.Time) int {
		res, err := c.OpenAccount(ctx, key, req)
		if err != nil {
			return a.reportKeyed(err, key, "the account may have been opened", "open a second account", "no account was opened")
		}
		if !a.g.quiet {
			id := transferclient.Clean(res.Account.AccountID)
			switch {
			case res.Replayed:
				fmt.Fprintf(a.stderr, "replayed: this key already opened account %s; nothing new was opened\n", id)
			case res.Status == http.StatusCreated:
				fmt.Fprintf(a.stderr, "opened: account %s\n", id)
			default:
				fmt.Fprintf(a.stderr, "already open: account %s exists with this currency and kind; nothing new was opened\n", id)
			}
		}
		if a.g.output == "json" {
			return a.printRaw(res.Account.Raw, res.Account)
		}
		return a.printAccounts([]transferclient.Account{res.Account})
	})
}

// accountsTransfers lists the transfers that touched an account: one page (--limit, the API's default otherwise),
// or every page with --all. account, when given, is the --account flag of transfers list; otherwise the account is
// the one positional argument.
func (a *app) accountsTransfers(ctx context.Context, fs *flag.FlagSet, args []string, name string, account ...*string) int {
	var limit int
	var all bool
	fs.IntVar(&limit, "limit", 0, "")
	fs.BoolVar(&all, "all", false, "")
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	var id string
	switch {
	case len(account) > 0 && len(pos) == 0:
		id = *account[0]
		if id == "" {
			return a.usageError(fmt.Errorf("%s needs --account ACCOUNT_ID", name))
		}
	case len(account) > 0:
		return a.usageError(fmt.Errorf("%s takes no arguments, got %q", name, pos))
	case len(pos) != 1:
		return a.usageError(fmt.Errorf("%s takes one ACCOUNT_ID", name))
	default:
		id = pos[0]
	}
	if !accountIDPattern.MatchString(id) {
		return a.usageError(fmt.Errorf("account id %q: want 1 to 64 characters of A-Z a-z 0-9 _ -", id))
	}
	if limit < 0 || limit > maxListLimit {
		return a.usageError(fmt.Errorf("--limit %d: want 1 to %d", limit, maxListLimit))
	}
	return a.withClient(ctx, func(ctx context.Context, c *transferclient.Client, _ time.Time) int {
		var page transferclient.AccountTransfers
		var err error
		if all {
			page, err = c.AllAccountTransfers(ctx, id, limit)
		} else {
			page, err = c.AccountTransfers(ctx, id, limit, "")
		}
		if err != nil {
			return a.report(err)
		}
		return a.printAccountTransfers(page, all)
	})
}

// maxListLimit is the API's largest page of an account's transfers (docs/api.md).
const maxListLimit = 50

// accountsAssignOwner gives an account without an owner its owner: PUT /operator/accounts/{id}/owner, with
// --operator only. The request can be repeated: assigning the owner the account already has answers the same.
func (a *app) accountsAssignOwner(ctx context.Context, fs *flag.FlagSet, args []string) int {
	var owner string
	fs.StringVar(&owner, "owner", "", "")
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	var errs []error
	switch {
	case len(pos) != 1:
		errs = append(errs, errors.New("accounts assign-owner takes one ACCOUNT_ID"))
	case !accountIDPattern.MatchString(pos[0]):
		errs = append(errs, fmt.Errorf("account id %q: want 1 to 64 characters of A-Z a-z 0-9 _ -", pos[0]))
	}
	if !isSet(fs, "owner") {
		errs = append(errs, errors.New("accounts assign-owner needs --owner ARN (the principal ARN of the new owner)"))
	} else if err := checkOwner(owner); err != nil {
		errs = append(errs, err)
	}
	if !a.g.operator {
		errs = append(errs, errors.New("accounts assign-owner needs --operator: it is an operator route (PUT /operator/accounts/{id}/owner)"))
	}
	if err := errors.Join(errs...); err != nil {
		return a.usageError(err)
	}
	return a.withClient(ctx, func(ctx context.Context, c *transferclient.Client, _ time.Time) int {
		acct, err := c.AssignOwner(ctx, pos[0], owner)
		if err != nil {
			return a.report(err)
		}
		if a.g.output == "json" {
			return a.printRaw(acct.Raw, acct)
		}
		return a.printAccounts([]transferclient.Account{acct})
	})
}

// isSet reports whether the flag name was given on fs, so that an empty or zero value given on purpose is checked.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseFloor reads --floor as the API reads floor: an integer from transferclient.MinFundingFloor to 0, in minor
// units, without leading zeros, a plus sign, decimals or exponents.
func parseFloor(s string) (int64, error) {
	msg := fmt.Errorf("--floor %q: want an integer of minor units from %d to 0", s, transferclient.MinFundingFloor)
	if !integerPattern.MatchString(s) {
		return 0, msg
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > 0 || n < transferclient.MinFundingFloor {
		return 0, msg
	}
	return n, nil
}

// checkOwner checks --owner: a principal ARN (arn:…), as the API takes it. The API checks which principals it
// accepts; an owner scope copied from the OWNER column (iam:arn:…) is refused with a hint rather than rewritten.
func checkOwner(s string) error {
	switch {
	case strings.HasPrefix(s, "iam:arn:"):
		return fmt.Errorf("--owner %q: want the principal ARN, without the owner scope's \"iam:\" prefix: %s", s, strings.TrimPrefix(s, "iam:"))
	case !arnPattern.MatchString(s):
		return fmt.Errorf("--owner %q: want a principal ARN, e.g. arn:aws:iam::123456789012:user/alice", s)
	}
	return nil
}

func (a *app) accountsGet(ctx context.Context, fs *flag.FlagSet, args []string) int {
	pos, code, done := a.prepare(fs, args)
	if done {
		return code
	}
	if len(pos) == 0 {
		return a.usageError(errors.New("accounts takes one or more ACCOUNT_IDs"))
	}
	for _, id := range pos {
		if !accountIDPattern.MatchString(id) {
			return a.usageError(fmt.Errorf("account id %q: want 1 to 64 characters of A-Z a-z 0-9 _ -", id))
		}
	}
	return a.withClient(ctx, func(ctx context.Context, c *transferclient.Client, _ time.Time) int {
		var found []transferclient.Account
		code := exitOK
		for _, id := range pos {
			acct, err := c.Account(ctx, id)
			if err != nil {
				if c := a.report(err); code == exitOK {
					code = c
				}
				continue
			}
			found = append(found, acct)
		}
		if out := a.printAccounts(found); out != exitOK {
			return out
		}
		return code
	})
}

// withClient makes the API client and runs the command's run with it under --timeout (withTimeout; deadline is when
// it ends). Without a client the command ends at once with its exit code.
func (a *app) withClient(ctx context.Context, run func(ctx context.Context, c *transferclient.Client, deadline time.Time) int) int {
	c, code := a.client(ctx)
	if code != exitOK {
		return code
	}
	ctx, cancel, deadline := a.withTimeout(ctx)
	defer cancel()
	return run(ctx, c, deadline)
}

// withTimeout bounds the command by --timeout. The returned deadline is on the injected clock, for Wait; the
// context's own deadline (on the real clock) stops a request that hangs.
func (a *app) withTimeout(ctx context.Context) (context.Context, context.CancelFunc, time.Time) {
	ctx, cancel := context.WithTimeout(ctx, a.g.timeout)
	return ctx, cancel, a.deps.now().Add(a.g.timeout)
}

// shellQuote renders s so that it can be pasted into a POSIX shell as one argument.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9._~:+=@%/,-]+$`)

// parseAmount reads --amount: a positive integer of minor units, at most 10^11. Decimals are refused, not
// converted: the tool does not guess a currency's exponent.
func parseAmount(s string) (int64, error) {
	switch {
	case s == "":
		return 0, errors.New("--amount is required (integer minor units, e.g. 1250 for 12.50 EUR)")
	case strings.ContainsAny(s, ".,"):
		return 0, fmt.Errorf("--amount %q: decimals are refused; give integer minor units (e.g. 1250 for 12.50 EUR)", s)
	case !digitsPattern.MatchString(s):
		return 0, fmt.Errorf("--amount %q: want a positive integer of minor units", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > maxAmount {
		return 0, fmt.Errorf("--amount %q: must be 1 to %d minor units", s, int64(maxAmount))
	}
	return n, nil
}

// checkSubmit checks the request fields as the API will.
func checkSubmit(r transferclient.SubmitRequest) error {
	var errs []error
	if !accountIDPattern.MatchString(r.SourceAccountID) {
		errs = append(errs, fmt.Errorf("--from %q: want 1 to 64 characters of A-Z a-z 0-9 _ -", r.SourceAccountID))
	}
	if !accountIDPattern.MatchString(r.DestinationAccountID) {
		errs = append(errs, fmt.Errorf("--to %q: want 1 to 64 characters of A-Z a-z 0-9 _ -", r.DestinationAccountID))
	}
	if r.SourceAccountID != "" && r.SourceAccountID == r.DestinationAccountID {
		errs = append(errs, errors.New("--from and --to must differ"))
	}
	if !currencyPattern.MatchString(r.Currency) {
		errs = append(errs, fmt.Errorf("--currency %q: want three upper-case letters (ISO 4217), e.g. EUR", r.Currency))
	}
	switch {
	case !utf8.ValidString(r.Reference):
		errs = append(errs, errors.New("--reference: not valid UTF-8"))
	case utf8.RuneCountInString(r.Reference) > maxReferenceLen:
		errs = append(errs, fmt.Errorf("--reference: at most %d characters", maxReferenceLen))
	case strings.ContainsFunc(r.Reference, transferclient.ForgesLines):
		errs = append(errs, errors.New("--reference: control characters, line separators and bidirectional controls are not allowed"))
	}
	return errors.Join(errs...)
}

// withKeyedClient checks the --idempotency-key of a creating command, or generates one, and runs the command's run
// with it and the API client (withClient). A generated key is printed before anything is sent, so that it survives a
// crash or Ctrl-C of this process.
func (a *app) withKeyedClient(ctx context.Context, key string, run func(ctx context.Context, c *transferclient.Client, key string, deadline time.Time) int) int {
	generated := key == ""
	if generated {
		key = a.deps.newKey()
	} else if err := transferclient.ValidateIdempotencyKey(key); err != nil {
		return a.usageError(fmt.Errorf("--idempotency-key: %w", err))
	}
	return a.withClient(ctx, func(ctx context.Context, c *transferclient.Client, deadline time.Time) int {
		if generated {
			fmt.Fprintf(a.stderr, "idempotency key: %s (to retry safely: --idempotency-key %s)\n", key, shellQuote(key))
		}
		return run(ctx, c, key, deadline)
	})
}

// reportKeyed reports a creating command's failure and tells the user what it means for the request sent with key:
// maybe made (say what, and that the same key cannot make a second one), or refused (say what was not made).
func (a *app) reportKeyed(err error, key, maybe, cannot, refused string) int {
	code := a.report(err)
	if retry := (*transferclient.RetryError)(nil); errors.As(err, &retry) && retry.NotSent {
		fmt.Fprintf(a.stderr, "the API could not be reached, so nothing was sent: %s.\n", refused)
		return code
	}
	switch code {
	case exitUnavailable, exitError:
		fmt.Fprintf(a.stderr, "the outcome is unknown: %s. Run the same command with --idempotency-key %s to find out; it cannot %s.\n", maybe, shellQuote(key), cannot)
	case exitRejected, exitNotFound:
		fmt.Fprintf(a.stderr, "the API rejected the request: %s.\n", refused)
	}
	return code
}
