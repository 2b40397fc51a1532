package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	ivyARN = "arn:aws:iam::123456789012:user/ivy"
	// ivyAccount is a customer account as an operator sees it: with its owner's scope.
	ivyAccount = `{"accountId":"acc-ivy","kind":"customer","currency":"EUR","balance":1250,"version":2,"createdAt":"2026-11-21T10:00:00.000Z",` +
		`"updatedAt":"2026-11-21T10:00:01.000Z","owner":"iam:` + ivyARN + `","links":{"self":"/operator/accounts/acc-ivy","transfers":"/operator/accounts/acc-ivy/transfers"}}`
	// shopAccount is a funding account as an operator sees it: with its floor, without owner.
	shopAccount = `{"accountId":"funding-shop","kind":"funding","currency":"EUR","balance":-5000,"version":2,"createdAt":"2026-11-21T10:00:00.000Z",` +
		`"updatedAt":"2026-11-21T10:00:01.000Z","floor":-1000000,"links":{"self":"/operator/accounts/funding-shop","transfers":"/operator/accounts/funding-shop/transfers"}}`
	// legacyAccount is a customer account without owner (opened before accounts had owners), as an operator sees it.
	legacyAccount = `{"accountId":"acc-old","kind":"customer","currency":"EUR","balance":300,"version":4,"createdAt":"2026-11-20T10:00:00.000Z",` +
		`"updatedAt":"2026-11-20T10:00:00.000Z","links":{"self":"/operator/accounts/acc-old","transfers":"/operator/accounts/acc-old/transfers"}}`
)

func TestOperatorUsageErrors(t *testing.T) {
	create := []string{"accounts", "create", "--currency", "EUR"}
	op := func(a ...string) []string { return append([]string{"--operator"}, a...) }
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"--floor without --operator", args(create, "--kind", "funding", "--floor", "-5"), "--floor needs --operator"},
		{"--owner without --operator", args(create, "--owner", ivyARN), "--owner needs --operator"},
		{"--floor of a customer account", op(args(create, "--floor", "-5")...), "--floor is only for a funding account (--kind funding)"},
		{"--floor above 0", op(args(create, "--kind", "funding", "--floor", "5")...), `--floor "5": want an integer of minor units from -1000000000000000 to 0`},
		{"--floor below -10^15", op(args(create, "--kind", "funding", "--floor", "-1000000000000001")...), "from -1000000000000000 to 0"},
		{"--floor with decimals", op(args(create, "--kind", "funding", "--floor", "-1.5")...), `--floor "-1.5"`},
		{"--floor with an exponent", op(args(create, "--kind", "funding", "--floor", "-1e3")...), `--floor "-1e3"`},
		{"--floor with a leading zero", op(args(create, "--kind", "funding", "--floor", "-05")...), `--floor "-05"`},
		{"--floor with a plus sign", op(args(create, "--kind", "funding", "--floor", "+0")...), `--floor "+0"`},
		{"--floor empty", op(args(create, "--kind", "funding", "--floor", "")...), `--floor ""`},
		{"--owner of a funding account", op(args(create, "--kind", "funding", "--owner", ivyARN)...), "funding accounts have no owner"},
		{"--owner as an owner scope", op(args(create, "--owner", "iam:"+ivyARN)...), `without the owner scope's "iam:" prefix: ` + ivyARN},
		{"--owner not an ARN", op(args(create, "--owner", "ivy")...), "want a principal ARN"},
		{"--owner empty", op(args(create, "--owner", "")...), "want a principal ARN"},
		{"--owner with a space", op(args(create, "--owner", "arn:aws:iam::123456789012:user/i vy")...), "want a principal ARN"},
		{"--owner with a control character", op(args(create, "--owner", "arn:aws:iam::123456789012:user/ivy\n")...), "want a principal ARN"},
		{"every mistake at once", args(create, "--kind", "funding", "--floor", "1", "--owner", ivyARN), "from -1000000000000000 to 0\n--owner is only for a customer account: funding accounts have no owner"},
		{"assign-owner without --operator", []string{"accounts", "assign-owner", "acc-ivy", "--owner", ivyARN}, "accounts assign-owner needs --operator"},
		{"assign-owner without --owner", op("accounts", "assign-owner", "acc-ivy"), "needs --owner ARN"},
		{"assign-owner with a bad --owner", op("accounts", "assign-owner", "acc-ivy", "--owner", "iam:"+ivyARN), `without the owner scope's "iam:" prefix`},
		{"assign-owner without an account", op("accounts", "assign-owner", "--owner", ivyARN), "takes one ACCOUNT_ID"},
		{"assign-owner with two accounts", op("accounts", "assign-owner", "acc-ivy", "acc-jo", "--owner", ivyARN), "takes one ACCOUNT_ID"},
		{"assign-owner with a bad account id", op("accounts", "assign-owner", "acc/ivy", "--owner", ivyARN), `account id "acc/ivy"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			newHarness(t, nil).wantUsageError(tc.args, tc.want)
		})
	}
}

// TestOperatorRoutes runs every command that calls the API with --operator, before and after the command name:
// each request goes to the operator route.
func TestOperatorRoutes(t *testing.T) {
	routes := map[string][]reply{
		"POST /operator/transfers":                      {{status: 202, body: transferBody("tr_1", "IN_PROGRESS")}},
		"GET /operator/transfers/tr_1":                  {{status: 200, body: transferBody("tr_1", "COMPLETED")}},
		"GET /operator/transfers/tr_1/history":          {{status: 200, body: `{"transferId":"tr_1","executionArn":"arn:x","events":[],"ledger":[]}`}},
		"GET /operator/accounts/acc-ivy":                {{status: 200, body: ivyAccount}},
		"GET /operator/accounts/funding-shop":           {{status: 200, body: shopAccount}},
		"POST /operator/accounts":                       {{status: 201, body: shopAccount}},
		"GET /operator/accounts/acc-ivy/transfers":      {{status: 200, body: `{"accountId":"acc-ivy","transfers":[]}`}},
		"PUT /operator/accounts/acc-ivy/owner":          {{status: 200, body: ivyAccount}},
		"GET /operator/accounts/funding-shop/transfers": {{status: 200, body: `{"accountId":"funding-shop","transfers":[]}`}},
	}
	tests := []struct {
		name     string
		args     []string
		wantReqs []string
	}{
		{"submit", args(submitArgs, "--idempotency-key", "k1"), []string{"POST /operator/transfers"}},
		{"submit --wait", args(submitArgs, "--idempotency-key", "k1", "--wait"), []string{"POST /operator/transfers", "GET /operator/transfers/tr_1"}},
		{"get", []string{"get", "tr_1"}, []string{"GET /operator/transfers/tr_1"}},
		{"get --wait", []string{"get", "tr_1", "--wait"}, []string{"GET /operator/transfers/tr_1"}},
		{"history", []string{"history", "tr_1"}, []string{"GET /operator/transfers/tr_1/history", "GET /operator/transfers/tr_1"}},
		{"accounts get", []string{"accounts", "get", "acc-ivy", "funding-shop"}, []string{"GET /operator/accounts/acc-ivy", "GET /operator/accounts/funding-shop"}},
		{"accounts ACCOUNT_ID", []string{"accounts", "funding-shop"}, []string{"GET /operator/accounts/funding-shop"}},
		{"accounts create", []string{"accounts", "create", "--currency", "EUR", "--id", "funding-shop", "--kind", "funding", "--idempotency-key", "k2"}, []string{"POST /operator/accounts"}},
		{"accounts transfers", []string{"accounts", "transfers", "acc-ivy", "--all"}, []string{"GET /operator/accounts/acc-ivy/transfers"}},
		{"transfers list", []string{"transfers", "list", "--account", "funding-shop"}, []string{"GET /operator/accounts/funding-shop/transfers"}},
		{"accounts assign-owner", []string{"accounts", "assign-owner", "acc-ivy", "--owner", ivyARN}, []string{"PUT /operator/accounts/acc-ivy/owner"}},
	}
	for _, tc := range tests {
		for _, where := range []string{"before", "after"} {
			t.Run(tc.name+"/--operator "+where, func(t *testing.T) {
				h := newHarness(t, routes)
				a := append([]string{"--operator"}, tc.args...)
				if where == "after" {
					a = args(tc.args, "--operator")
				}
				if code := h.run(a...); code != exitOK {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, h.stdout.String(), h.stderr.String())
				}
				var got []string
				for _, r := range h.api.requests() {
					got = append(got, r.method+" "+r.path)
				}
				if strings.Join(got, "\n") != strings.Join(tc.wantReqs, "\n") {
					t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantReqs, "\n"))
				}
			})
		}
	}
}

// TestOperatorAccountsOutput: the operator view adds FLOOR and OWNER ("-" for none); a client's table is as before;
// JSON is the API's, owner and floor included.
func TestOperatorAccountsOutput(t *testing.T) {
	clientView := `{"accountId":"acc-ivy","kind":"customer","currency":"EUR","balance":1250,"version":2,"updatedAt":"2026-11-21T10:00:01.000Z"}`
	tests := []struct {
		name   string
		routes map[string][]reply
		args   []string
		want   string
	}{
		{"operator: accounts get", map[string][]reply{
			"GET /operator/accounts/acc-ivy":      {{status: 200, body: ivyAccount}},
			"GET /operator/accounts/funding-shop": {{status: 200, body: shopAccount}},
			"GET /operator/accounts/acc-old":      {{status: 200, body: legacyAccount}},
		}, []string{"--operator", "accounts", "get", "acc-ivy", "funding-shop", "acc-old"}, "" +
			"ACCOUNT       BALANCE (minor units)  CURRENCY  KIND      VERSION  UPDATED                   FLOOR     OWNER\n" +
			"acc-ivy       1250                   EUR       customer  2        2026-11-21T10:00:01.000Z  -         iam:arn:aws:iam::123456789012:user/ivy\n" +
			"funding-shop  -5000                  EUR       funding   2        2026-11-21T10:00:01.000Z  -1000000  -\n" +
			"acc-old       300                    EUR       customer  4        2026-11-20T10:00:00.000Z  -         -\n"},
		{"operator: an account without owner still shows the columns", map[string][]reply{
			"GET /operator/accounts/acc-old": {{status: 200, body: legacyAccount}},
		}, []string{"accounts", "acc-old", "--operator"}, "" +
			"ACCOUNT  BALANCE (minor units)  CURRENCY  KIND      VERSION  UPDATED                   FLOOR  OWNER\n" +
			"acc-old  300                    EUR       customer  4        2026-11-20T10:00:00.000Z  -      -\n"},
		{"operator: assign-owner prints the account", map[string][]reply{
			"PUT /operator/accounts/acc-ivy/owner": {{status: 200, body: ivyAccount}},
		}, []string{"--operator", "accounts", "assign-owner", "acc-ivy", "--owner", ivyARN}, "" +
			"ACCOUNT  BALANCE (minor units)  CURRENCY  KIND      VERSION  UPDATED                   FLOOR  OWNER\n" +
			"acc-ivy  1250                   EUR       customer  2        2026-11-21T10:00:01.000Z  -      iam:arn:aws:iam::123456789012:user/ivy\n"},
		{"client: the table as before", map[string][]reply{
			"GET /accounts/acc-ivy": {{status: 200, body: clientView}},
		}, []string{"accounts", "acc-ivy"}, "" +
			"ACCOUNT  BALANCE (minor units)  CURRENCY  KIND      VERSION  UPDATED\n" +
			"acc-ivy  1250                   EUR       customer  2        2026-11-21T10:00:01.000Z\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.routes)
			if code := h.run(tc.args...); code != exitOK {
				t.Fatalf("exit %d: %s", code, h.stderr.String())
			}
			if got := h.stdout.String(); got != tc.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}

	t.Run("json: the API's objects", func(t *testing.T) {
		h := newHarness(t, map[string][]reply{"GET /operator/accounts/acc-ivy": {{status: 200, body: ivyAccount}},
			"GET /operator/accounts/funding-shop": {{status: 200, body: shopAccount}}})
		if code := h.run("--operator", "accounts", "get", "acc-ivy", "funding-shop", "--output", "json"); code != exitOK {
			t.Fatalf("exit %d: %s", code, h.stderr.String())
		}
		var got []map[string]any
		if err := json.Unmarshal(h.stdout.Bytes(), &got); err != nil {
			t.Fatalf("stdout %s: %v", h.stdout.String(), err)
		}
		if len(got) != 2 || got[0]["owner"] != "iam:"+ivyARN || got[1]["floor"] != -1000000.0 || got[1]["links"] == nil {
			t.Errorf("stdout = %v", got)
		}
	})
}

func TestOperatorCreateBody(t *testing.T) {
	tests := []struct {
		name     string
		extra    []string
		wantBody string
	}{
		{"funding with a floor", []string{"--id", "funding-shop", "--kind", "funding", "--floor", "-1000000"},
			`{"accountId":"funding-shop","currency":"EUR","kind":"funding","floor":-1000000}`},
		{"a floor of 0", []string{"--id", "funding-shop", "--kind", "funding", "--floor", "0"},
			`{"accountId":"funding-shop","currency":"EUR","kind":"funding","floor":0}`},
		{"a floor of -10^15", []string{"--kind", "funding", "--floor", "-1000000000000000"},
			`{"currency":"EUR","kind":"funding","floor":-1000000000000000}`},
		{"funding without a floor: the API's default", []string{"--kind", "funding"}, `{"currency":"EUR","kind":"funding"}`},
		{"customer with an owner", []string{"--id", "acc-ivy", "--owner", ivyARN}, `{"accountId":"acc-ivy","currency":"EUR","owner":"` + ivyARN + `"}`},
		{"customer without owner", []string{"--id", "acc-ivy"}, `{"accountId":"acc-ivy","currency":"EUR"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, map[string][]reply{"POST /operator/accounts": {{status: 201, body: shopAccount}}})
			if code := h.run(args([]string{"--operator", "accounts", "create", "--currency", "EUR", "--idempotency-key", "k"}, tc.extra...)...); code != exitOK {
				t.Fatalf("exit %d: %s", code, h.stderr.String())
			}
			if got := string(h.api.requests()[0].body); got != tc.wantBody {
				t.Errorf("body = %s, want %s", got, tc.wantBody)
			}
		})
	}
}

// TestOperatorExitCodes: the refusals an operator, or a client that needs one, meets.
func TestOperatorExitCodes(t *testing.T) {
	assign := []string{"--operator", "accounts", "assign-owner", "acc-ivy", "--owner", ivyARN}
	accessDenied := reply{status: 403, body: problem(403, "ACCESS_DENIED", "User: arn:aws:iam::000000000000:user/local is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:us-east-1:000000000000:local/local/PUT/operator/accounts/acc-ivy/owner")}
	tests := []struct {
		name       string
		routes     map[string][]reply
		args       []string
		want       int
		wantStderr []string
	}{
		{"assign-owner: no such account", nil, assign, exitNotFound, []string{"assign owner of acc-ivy: 404 Not Found"}},
		{"assign-owner: another owner", map[string][]reply{"PUT /operator/accounts/acc-ivy/owner": {{status: 409, body: problem(409, "ACCOUNT_HAS_OWNER", "the account already has another owner")}}},
			assign, exitRejected, []string{"409 Conflict ACCOUNT_HAS_OWNER: the account already has another owner"}},
		{"assign-owner: a funding account", map[string][]reply{"PUT /operator/accounts/acc-ivy/owner": {{status: 409, body: problem(409, "FUNDING_ACCOUNT", "a funding account has no owner: operators hold it")}}},
			assign, exitRejected, []string{"409 Conflict FUNDING_ACCOUNT"}},
		{"assign-owner: not an operator", map[string][]reply{"PUT /operator/accounts/acc-ivy/owner": {accessDenied}},
			assign, exitRejected, []string{"403 Forbidden ACCESS_DENIED: User: arn:aws:iam::000000000000:user/local is not authorized",
				"hint: this principal may not invoke the operator routes", "make run's operator is AWS_ACCESS_KEY_ID=operator AWS_SECRET_ACCESS_KEY=local transferctl --sign true --operator"}},
		{"a client opening a funding account", map[string][]reply{"POST /accounts": {{status: 403, body: problem(403, "OPERATOR_REQUIRED", "opening a funding account takes the operator capability: POST /operator/accounts")}}},
			[]string{"accounts", "create", "--currency", "EUR", "--kind", "funding", "--idempotency-key", "k"}, exitRejected,
			[]string{"403 Forbidden OPERATOR_REQUIRED", "hint: this takes the operator routes: run it with --operator", "no account was opened"}},
		{"a client on an operator route", map[string][]reply{"GET /operator/transfers/tr_1": {accessDenied}},
			[]string{"--operator", "get", "tr_1"}, exitRejected, []string{"ACCESS_DENIED", "hint: this principal may not invoke the operator routes"}},
		{"an operator route the API lacks", map[string][]reply{"GET /operator/transfers/tr_1": {{status: 403, body: `{"message":"Missing Authentication Token"}`}}},
			[]string{"--operator", "get", "tr_1"}, exitRejected, []string{"hint: API Gateway refused the request; check --endpoint"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.routes)
			if code := h.run(tc.args...); code != tc.want {
				t.Errorf("exit = %d, want %d\nstderr:\n%s", code, tc.want, h.stderr.String())
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(h.stderr.String(), w) {
					t.Errorf("stderr does not contain %q:\n%s", w, h.stderr.String())
				}
			}
			if h.stdout.Len() != 0 {
				t.Errorf("stdout: %s", h.stdout.String())
			}
		})
	}
}
