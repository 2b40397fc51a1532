package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"

	"github.com/transferflow/orchestrator/internal/transferclient"
)

// printTransfer writes the transfer (the API's JSON with --output json) and returns exitTransferFailed for a FAILED
// transfer, exitOK otherwise.
func (a *app) printTransfer(t transferclient.Transfer) int {
	if a.g.output == "json" {
		if code := a.printRaw(t.Raw, t); code != exitOK {
			return code
		}
	} else {
		c := transferclient.Clean
		tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "transfer\t%s\n", c(t.TransferID))
		fmt.Fprintf(tw, "status\t%s\n", c(t.Status))
		fmt.Fprintf(tw, "from\t%s\n", c(t.SourceAccountID))
		fmt.Fprintf(tw, "to\t%s\n", c(t.DestinationAccountID))
		fmt.Fprintf(tw, "amount\t%d %s (minor units)\n", t.Amount, c(t.Currency))
		if t.Reference != "" {
			fmt.Fprintf(tw, "reference\t%s\n", c(t.Reference))
		}
		fmt.Fprintf(tw, "created\t%s\n", c(t.CreatedAt))
		if t.CompletedAt != "" {
			fmt.Fprintf(tw, "completed\t%s\n", c(t.CompletedAt))
		} else if t.UpdatedAt != "" {
			fmt.Fprintf(tw, "updated\t%s\n", c(t.UpdatedAt))
		}
		if t.Failure != nil {
			fmt.Fprintf(tw, "failure\t%s: %s\n", c(t.Failure.Code), c(t.Failure.Message))
		}
		if t.ExecutionArn != "" {
			fmt.Fprintf(tw, "execution\t%s\n", c(t.ExecutionArn))
		}
		if err := tw.Flush(); err != nil {
			fmt.Fprintf(a.stderr, "transferctl: write output: %v\n", err)
			return exitError
		}
	}
	if t.Status == transferclient.StatusFailed {
		return exitTransferFailed
	}
	return exitOK
}

// printAccounts writes the accounts as a table, or as a JSON array of the API's objects. The operator view (with
// --operator, or whenever the API shows an owner or a floor) adds FLOOR (a funding account's) and OWNER (the owner's
// caller scope), "-" where the account has none.
func (a *app) printAccounts(accts []transferclient.Account) int {
	if a.g.output == "json" {
		raws := make([]json.RawMessage, 0, len(accts))
		for _, acct := range accts {
			raws = append(raws, acct.Raw)
		}
		return a.printJSON(raws)
	}
	if len(accts) == 0 {
		return exitOK
	}
	c := transferclient.Clean
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	operatorView := a.g.operator
	for _, acct := range accts {
		operatorView = operatorView || acct.Owner != "" || acct.Floor != nil
	}
	header := "ACCOUNT\tBALANCE (minor units)\tCURRENCY\tKIND\tVERSION\tUPDATED"
	if operatorView {
		header += "\tFLOOR\tOWNER"
	}
	fmt.Fprintln(tw, header)
	for _, acct := range accts {
		kind := acct.Kind
		if kind == "" {
			kind = transferclient.KindCustomer
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s", c(acct.AccountID), acct.Balance, c(acct.Currency), c(kind), acct.Version, c(acct.UpdatedAt))
		if operatorView {
			floor := "-"
			if acct.Floor != nil {
				floor = strconv.FormatInt(*acct.Floor, 10)
			}
			fmt.Fprintf(tw, "\t%s\t%s", floor, c(orDash(acct.Owner)))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(a.stderr, "transferctl: write output: %v\n", err)
		return exitError
	}
	return exitOK
}

// printAccountTransfers writes an account's transfers as a table, newest first, with the next page's token on
// stderr; or, with --output json, the API's page ({"accountId", "transfers", "nextToken"?}), every page's entries
// joined under one object with --all.
func (a *app) printAccountTransfers(p transferclient.AccountTransfers, all bool) int {
	if a.g.output == "json" {
		raws := make([]json.RawMessage, 0, len(p.Transfers))
		for _, t := range p.Transfers {
			raws = append(raws, t.Raw)
		}
		out := struct {
			AccountID string            `json:"accountId"`
			Transfers []json.RawMessage `json:"transfers"`
			NextToken string            `json:"nextToken,omitempty"`
		}{p.AccountID, raws, p.NextToken}
		return a.printJSON(out)
	}
	c := transferclient.Clean
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTRANSFER\tLEG\tAMOUNT (minor units)\tCURRENCY\tCOUNTERPARTY\tSTATUS\tREFERENCE")
	for _, t := range p.Transfers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+d\t%s\t%s\t%s\t%s\n", c(t.CreatedAt), c(t.TransferID), c(t.Leg), t.Amount, c(t.Currency),
			c(orDash(t.CounterpartyAccountID)), c(orDash(t.Status)), c(orDash(t.Reference)))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(a.stderr, "transferctl: write output: %v\n", err)
		return exitError
	}
	if p.NextToken != "" && !all && !a.g.quiet {
		fmt.Fprintln(a.stderr, "more transfers follow: add --all to list every page")
	}
	return exitOK
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printRaw writes the API's JSON indented, or v encoded when there is no raw JSON.
func (a *app) printRaw(raw json.RawMessage, v any) int {
	if raw == nil {
		return a.printJSON(v)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		fmt.Fprintf(a.stderr, "transferctl: the API's answer is not JSON: %v\n", err)
		return exitError
	}
	buf.WriteByte('\n')
	if _, err := a.stdout.Write(buf.Bytes()); err != nil {
		fmt.Fprintf(a.stderr, "transferctl: write output: %v\n", err)
		return exitError
	}
	return exitOK
}

// printJSON writes v as indented JSON on stdout.
func (a *app) printJSON(v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(a.stderr, "transferctl: encode output: %v\n", err)
		return exitError
	}
	if _, err := a.stdout.Write(append(b, '\n')); err != nil {
		fmt.Fprintf(a.stderr, "transferctl: write output: %v\n", err)
		return exitError
	}
	return exitOK
}

// Codes of 403s that report a missing operator capability: the API's, for a request only an operator may make on
// a client route, and API Gateway's, for a principal IAM does not allow on a route (an operator route, for a client).
const (
	codeOperatorRequired = "OPERATOR_REQUIRED"
	codeAccessDenied     = "ACCESS_DENIED"
)

// gatewayRefusals are the codes of API Gateway's own 403s: template.yaml's gateway responses, and no code at all
// from an API deployed without them ({"message": …}).
var gatewayRefusals = map[string]bool{"": true, "MISSING_AUTHENTICATION_TOKEN": true, "INVALID_SIGNATURE": true,
	"EXPIRED_TOKEN": true, codeAccessDenied: true}

// report writes an error of the client to stderr, with the invalid fields of a VALIDATION_ERROR and a hint for API
// Gateway's 403s, and returns its exit code. An API nothing answered at gets its hint once, at the end of the run
// (hintUnreachable).
func (a *app) report(err error) int {
	fmt.Fprintf(a.stderr, "transferctl: %s\n", describe(err))
	if retry := (*transferclient.RetryError)(nil); errors.As(err, &retry) && retry.NotSent {
		a.unreachable = true
	}
	var apiErr *transferclient.APIError
	if errors.As(err, &apiErr) {
		for _, fe := range apiErr.Errors {
			fmt.Fprintf(a.stderr, "  %s: %s\n", transferclient.Clean(fe.Field), transferclient.Clean(fe.Message))
		}
		switch {
		case apiErr.Status == http.StatusForbidden && apiErr.Code == codeOperatorRequired:
			fmt.Fprintln(a.stderr, "hint: this takes the operator routes: run it with --operator, signed as a principal allowed on them")
		case apiErr.Status == http.StatusForbidden && apiErr.Code == codeAccessDenied && a.g.operator:
			// API Gateway refused the route: the principal does not have the operator policy, or the API's resource
			// policy does not name it.
			hint := "hint: this principal may not invoke the operator routes (an operator needs TransferOperatorPolicy and a place in the stack's OperatorPrincipalArns); sign (--sign) with an operator's credentials, or drop --operator to act as a client"
			if u, err := url.Parse(a.g.endpoint); err == nil && isLoopback(u.Hostname()) {
				hint += "; make run's operator is AWS_ACCESS_KEY_ID=operator AWS_SECRET_ACCESS_KEY=local transferctl --sign true --operator …"
			}
			fmt.Fprintln(a.stderr, hint)
		case apiErr.Status == http.StatusForbidden && gatewayRefusals[apiErr.Code]:
			// API Gateway's own 403: an unknown path ("Missing Authentication Token"), or a missing or bad signature.
			fmt.Fprintln(a.stderr, "hint: API Gateway refused the request; check --endpoint (with the stage path: /v1 for this template), and for an IAM-protected API the AWS credentials, --region and --sign")
		}
	}
	return exitCode(err)
}

// hintUnreachable says what to check when no attempt of a request reached the API: for a loopback endpoint, whether
// the local stack is running; for another, the endpoint.
func (a *app) hintUnreachable() {
	hint := "hint: nothing answered at " + a.g.endpoint + "; check --endpoint (or TRANSFERCTL_ENDPOINT)"
	if u, err := url.Parse(a.g.endpoint); err == nil && isLoopback(u.Hostname()) {
		hint = "hint: nothing answered at " + a.g.endpoint + ": is the local stack running? (make run starts it; --endpoint or TRANSFERCTL_ENDPOINT names another)"
	}
	fmt.Fprintln(a.stderr, hint)
}
