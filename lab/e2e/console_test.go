package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/lab/browser"
)

var updateConsoleImage = flag.Bool("update-console-image", false, "copy the completed transfer's screenshot to docs/images/console-transfer.png, the README's image")

// consoleShots is where TestConsole writes its screenshots, one per page it checks.
func consoleShots() string { return filepath.Join(root, "bin", "console-screenshots") }

// readmeImage is the README's picture of the console, a screenshot TestConsole took (-update-console-image).
const readmeImage = "docs/images/console-transfer.png"

// TestConsole drives the stack's audit console in headless Chromium, as a person would: a transfer that timed out
// and was settled by the reconciler, watched live until it settles; a completed one (drawing, path, timeline, legs,
// balances, outcome event); a failed one with its cause; an account; the list, a new transfer appearing on it without
// a reload; and the list walked with the keyboard alone. Each page's screenshot goes to bin/console-screenshots.
func TestConsole(t *testing.T) {
	t.Parallel()
	// The first CREDIT takes 8 s, past the executions' 5 s timeout: that transfer times out, and the reconciler
	// settles it. Every other transfer ends within milliseconds.
	s := startStack(t, "--console-addr", "127.0.0.1:0", "--execution-timeout", "5s", "--fault", "credit:delay=8s:times=1:leg=CREDIT")
	console := readyField(s, "console")
	if console == "" {
		t.Fatal("the ready line names no console=")
	}
	ctx := browser.New(t, browser.Timeout(3*time.Minute))
	shots := consoleShots()
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(js string, out any) { t.Helper(); evaluate(t, ctx, js, out) }
	// waitFor polls a JavaScript condition in the page until it holds.
	waitFor := func(what, js string, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			var ok bool
			eval("Boolean("+js+")", &ok)
			if ok {
				return
			}
			if time.Now().After(deadline) {
				var html string
				eval("document.querySelector('main') ? document.querySelector('main').innerText.slice(0, 2000) : ''", &html)
				t.Fatalf("%s: not within %v; the page shows:\n%s", what, within, html)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// A timed-out transfer, watched live from the moment it is accepted: its status changes on the page, without a
	// reload, when the reconciler settles it.
	timedOut := s.submitAccepted("timed out", "console-timeout", transferBody("acc-alice", "acc-bob", 700, "EUR"))
	run("open the running transfer", chromedp.Navigate(console+"/transfers/"+timedOut), chromedp.WaitVisible(chromedp.CSS("#status")))
	var status string
	eval("document.querySelector('#status').dataset.status", &status)
	if status != "IN_PROGRESS" {
		t.Fatalf("the transfer shows %s at first, want IN_PROGRESS (the CREDIT is delayed 8 s)", status)
	}
	eval("window.consoleLoaded = 'first load'", new(string))
	waitFor("the transfer page shows the CREDIT running", "document.querySelector('#current') && document.querySelector('#current').textContent == 'Credit'", 15*time.Second)
	waitFor("the live status change to FAILED", "document.querySelector('#status').dataset.status == 'FAILED'", 60*time.Second)
	var loaded string
	eval("window.consoleLoaded || 'reloaded'", &loaded)
	if loaded != "first load" {
		t.Error("the page was reloaded to show the new status; it should update in place")
	}
	var cause string
	eval("document.querySelector('#failure').textContent", &cause)
	if !strings.Contains(cause, "TIMED_OUT") {
		t.Errorf("the timed-out transfer's cause reads %q, want TIMED_OUT", cause)
	}
	browser.Screenshot(t, ctx, shots, "transfer-timed-out")

	// A completed transfer: the drawing marks its path, the timeline is in time order, the legs show the balances
	// before and after, and the outcome event is the one published.
	completed := s.submitAccepted("completed", "console-completed", transferBody("acc-alice", "acc-bob", 1250, "EUR"))
	s.waitCompleted("completed", completed)
	alice := s.do(http.MethodGet, "/accounts/acc-alice", nil, nil).Body["balance"].(float64)
	bob := s.do(http.MethodGet, "/accounts/acc-bob", nil, nil).Body["balance"].(float64)
	run("open the completed transfer", chromedp.Navigate(console+"/transfers/"+completed), chromedp.WaitVisible(chromedp.CSS("#drawing")))
	var checks struct {
		Status         string
		Debit, Credit  bool
		Edge, Refund   bool
		Times          []string
		DebitBefore    string
		DebitAfter     string
		CreditBefore   string
		CreditAfter    string
		DetailType     string
		Outcome        string
		ExecutionLinks int
		DrawingLabel   string
	}
	eval(`(() => {
		const q = (s) => document.querySelector(s);
		const text = (s) => q(s) ? q(s).textContent.trim() : '';
		return {
			Status: q('#status').dataset.status,
			Debit: !!q('#drawing g.state.visited[data-state="Debit"]'),
			Credit: !!q('#drawing g.state.visited[data-state="Credit"]'),
			Edge: !!q('#drawing .edge.visited[data-from="Debit"][data-to="Credit"]'),
			Refund: !!q('#drawing g.state.visited[data-state="Refund"]'),
			Times: [...document.querySelectorAll('#timeline tbody tr td:first-child')].map(td => td.textContent),
			DebitBefore: text('#legs tr[data-leg="DEBIT"] .before'), DebitAfter: text('#legs tr[data-leg="DEBIT"] .after'),
			CreditBefore: text('#legs tr[data-leg="CREDIT"] .before'), CreditAfter: text('#legs tr[data-leg="CREDIT"] .after'),
			DetailType: text('#detail-type'), Outcome: text('#outcome'),
			ExecutionLinks: document.querySelectorAll('a[href^="/execution?arn="]').length,
		DrawingLabel: q('#drawing svg[role="img"]') ? q('#drawing svg').getAttribute('aria-label') : '',
		};
	})()`, &checks)
	if checks.Status != "COMPLETED" || !checks.Debit || !checks.Credit || !checks.Edge || checks.Refund {
		t.Errorf("completed transfer's drawing: %+v; want Debit and Credit visited, the edge between them, Refund not", checks)
	}
	if len(checks.Times) < 6 || !slices.IsSorted(checks.Times) {
		t.Errorf("timeline times %v: want at least accepted, started, two states, two legs, in order", checks.Times)
	}
	eur := func(minor float64) string { return fmt.Sprintf("%d.%02d EUR", int64(minor)/100, int64(minor)%100) }
	if checks.DebitBefore != eur(alice+1250) || checks.DebitAfter != eur(alice) || checks.CreditBefore != eur(bob-1250) || checks.CreditAfter != eur(bob) {
		t.Errorf("balances: DEBIT %s → %s, CREDIT %s → %s; want %s → %s and %s → %s (the accounts now: alice %v, bob %v)",
			checks.DebitBefore, checks.DebitAfter, checks.CreditBefore, checks.CreditAfter, eur(alice+1250), eur(alice), eur(bob-1250), eur(bob), alice, bob)
	}
	if !strings.Contains(checks.DrawingLabel, "Debit") || checks.ExecutionLinks == 0 {
		t.Errorf("the drawing's text alternative is %q (want one that names the states entered); %d links to the execution", checks.DrawingLabel, checks.ExecutionLinks)
	}
	if checks.DetailType != "Transfer Completed" || !strings.Contains(checks.Outcome, `"transferId": "`+completed+`"`) {
		t.Errorf("outcome event: %q %q", checks.DetailType, checks.Outcome)
	}
	shot := browser.Screenshot(t, ctx, shots, "transfer-completed")
	if *updateConsoleImage {
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, readmeImage), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A failed transfer shows its cause, and the Catch that led to it.
	failed := s.submitAccepted("failed", "console-failed", transferBody("acc-erin", "acc-bob", 100, "EUR"))
	if tr := s.waitTerminal(failed, settle); tr["status"] != "FAILED" {
		t.Fatalf("the transfer out of an empty account = %v, want FAILED", tr)
	}
	run("open the failed transfer", chromedp.Navigate(console+"/transfers/"+failed), chromedp.WaitVisible(chromedp.CSS("#failure")))
	var failure struct {
		Cause                string
		Caught, Path, Credit bool
	}
	eval(`({
		Cause: document.querySelector('#failure').textContent,
		Caught: !!document.querySelector('#drawing g.state.caught[data-state="Debit"]'),
		Path: !!document.querySelector('#drawing .edge.catch.visited[data-from="Debit"][data-to="InsufficientFunds"]'),
		Credit: !!document.querySelector('#drawing g.state.visited[data-state="Credit"]'),
	})`, &failure)
	if !strings.Contains(failure.Cause, "INSUFFICIENT_FUNDS") || !failure.Caught || !failure.Path || failure.Credit {
		t.Errorf("failed transfer: %+v; want the cause INSUFFICIENT_FUNDS, Debit's Catch marked and taken, Credit not visited", failure)
	}
	browser.Screenshot(t, ctx, shots, "transfer-failed")

	// An account: its balance as the API has it, and its transfers.
	run("open the account", chromedp.Navigate(console+"/accounts/acc-alice"), chromedp.WaitVisible(chromedp.CSS("#balance")))
	var account struct {
		Minor     string
		Transfers []string
	}
	eval(`({Minor: document.querySelector('#balance').dataset.minor,
		Transfers: [...document.querySelectorAll('#entries tbody tr[data-transfer]')].map(tr => tr.dataset.transfer)})`, &account)
	if account.Minor != fmt.Sprint(int64(alice)) || !slices.Contains(account.Transfers, completed) {
		t.Errorf("account page: balance %s, transfers %v; want %v and %s among them", account.Minor, account.Transfers, int64(alice), completed)
	}
	browser.Screenshot(t, ctx, shots, "account")

	// The list, newest first; a transfer submitted while it is open appears without a reload.
	run("open the list", chromedp.Navigate(console+"/transfers"), chromedp.WaitVisible(chromedp.CSS("#transfers")))
	eval("window.consoleLoaded = 'first load'", new(string))
	var rows []string
	eval(`[...document.querySelectorAll('#transfers tbody tr[data-transfer]')].map(tr => tr.dataset.transfer)`, &rows)
	var a11y struct {
		Unlabeled []string
		Lang      string
		Skip      bool
	}
	eval(`({Unlabeled: [...document.querySelectorAll('input, select, button')].filter(e => !(e.closest('label') ||
			e.getAttribute('aria-label') || (e.tagName == 'BUTTON' && e.textContent.trim()))).map(e => e.outerHTML),
		Lang: document.documentElement.lang, Skip: !!document.querySelector('a.skip[href="#main"]')})`, &a11y)
	if len(a11y.Unlabeled) > 0 || a11y.Lang != "en" || !a11y.Skip {
		t.Errorf("list page: controls without a label %v, lang %q, skip link %v", a11y.Unlabeled, a11y.Lang, a11y.Skip)
	}
	if len(rows) < 3 || rows[0] != failed || !slices.Contains(rows, completed) || !slices.Contains(rows, timedOut) {
		t.Errorf("list rows %v: want the failed transfer first (newest), then the completed and timed-out ones", rows)
	}
	live := s.submitAccepted("live", "console-live", transferBody("acc-bob", "acc-alice", 300, "EUR"))
	waitFor("the new transfer on the list", `document.querySelector('#transfers tr[data-transfer="`+live+`"]')`, 20*time.Second)
	eval("window.consoleLoaded || 'reloaded'", &loaded)
	if loaded != "first load" {
		t.Error("the list was reloaded to show the new transfer; it should update in place")
	}
	browser.Screenshot(t, ctx, shots, "transfers")

	// The keyboard alone: Tab reaches a transfer on the list, Enter opens it.
	run("focus the page", chromedp.Navigate(console+"/transfers"), chromedp.WaitVisible(chromedp.CSS("#transfers")))
	var focused string
	for range 40 {
		run("press Tab", chromedp.KeyEvent(kb.Tab))
		eval(`document.activeElement && document.activeElement.classList.contains('tid') ? document.activeElement.textContent : ''`, &focused)
		if focused != "" {
			break
		}
	}
	if focused == "" {
		t.Fatal("40 presses of Tab never reached a transfer on the list")
	}
	run("press Enter", chromedp.KeyEvent(kb.Enter))
	waitFor("Enter opens the focused transfer", `location.pathname == '/transfers/`+focused+`' && document.querySelector('#status')`, 10*time.Second)
}

// evaluate runs the JavaScript expression in the page of ctx and decodes its value, JSON-encoded by the browser,
// into out.
func evaluate(t testing.TB, ctx context.Context, js string, out any) {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage]("JSON.stringify(("+js+") ?? null)"))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		t.Fatalf("%s: %v (%s)", js, err, raw)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: %v (%s)", js, err, text)
	}
}

// TestREADMEShowsTheConsole: the README's picture of the console is a screenshot TestConsole took (a PNG of the
// browser's viewport width), and the README shows it.
func TestREADMEShowsTheConsole(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "("+readmeImage+")") {
		t.Errorf("README.md does not show %s", readmeImage)
	}
	f, err := os.Open(filepath.Join(root, readmeImage))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 24)
	if _, err := io.ReadFull(f, head); err != nil || string(head[1:4]) != "PNG" {
		t.Fatalf("%s is not a PNG", readmeImage)
	}
	width := int(head[16])<<24 | int(head[17])<<16 | int(head[18])<<8 | int(head[19])
	if width != browser.DefaultWidth {
		t.Errorf("%s is %d pixels wide; TestConsole's screenshots are %d (go test ./lab/e2e -run TestConsole -update-console-image)", readmeImage, width, browser.DefaultWidth)
	}
}

// BenchmarkConsoleTransferPage loads a completed transfer's page from the stack's console, as a browser's first
// request does: the record, its history, the definition, the drawing and the legs' balances, all through the API
// and Step Functions. It reports the median of the loads as ms/median; run with -benchtime=100x for 100 loads.
func BenchmarkConsoleTransferPage(b *testing.B) {
	s := startStack(b, "--console-addr", "127.0.0.1:0")
	id := s.submitAccepted("bench", "console-bench", transferBody("acc-alice", "acc-bob", 1250, "EUR"))
	s.waitCompleted("bench", id)
	url := readyField(s, "console") + "/transfers/" + id
	var took []time.Duration
	ctx := context.Background()
	for b.Loop() {
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms/median")
}

// TestConsoleCommand runs `transferctl console` against a stack, as against a deployed one: every request signed
// with the caller's credentials. Signed as the operator, it reads any transfer and account through the operator
// routes; signed as a client who owns nothing, the same transfer is a 404, as the API answers that client.
func TestConsoleCommand(t *testing.T) {
	t.Parallel()
	bin := transferctlPath(t)
	s := startStack(t)
	id := s.submitAccepted("console command", "console-command", transferBody("acc-alice", "acc-bob", 1250, "EUR"))
	s.waitCompleted("console command", id)

	serve := func(user string, extra ...string) string {
		t.Helper()
		args := append([]string{"--endpoint", s.API, "--sign", "true"}, extra...)
		args = append(args, "console", "--addr", "127.0.0.1:0", "--sfn-endpoint", s.SFN)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AWS_ACCESS_KEY_ID=" + user,
			"AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		var stderr syncio.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); _ = cmd.Wait() })
		line, err := bufio.NewReader(out).ReadString('\n')
		addr, ok := strings.CutPrefix(strings.TrimSpace(line), "console=")
		if err != nil || !ok {
			t.Fatalf("transferctl console printed %q (%v), want console=http://…\n%s", line, err, stderr.String())
		}
		return addr
	}
	page := func(base, path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	operator := serve("operator", "--operator")
	code, body := page(operator, "/transfers/"+id)
	if code != http.StatusOK || !strings.Contains(body, `data-status="COMPLETED"`) || !strings.Contains(body, `data-leg="DEBIT"`) ||
		!strings.Contains(body, `data-state="Debit"`) {
		t.Errorf("operator's transfer page: %d, want the completed transfer with its legs and drawing\n%.2000s", code, body)
	}
	if code, body := page(operator, "/accounts/acc-alice"); code != http.StatusOK || !strings.Contains(body, "iam:"+localCaller) {
		t.Errorf("operator's account page: %d, want the account with its owner (the operator view)\n%.2000s", code, body)
	}
	if code, body := page(operator, "/transfers"); code != http.StatusOK || !strings.Contains(body, `data-transfer="`+id+`"`) {
		t.Errorf("operator's list: %d, want the transfer on it\n%.2000s", code, body)
	}

	stranger := serve("mallory")
	if code, body := page(stranger, "/transfers/"+id); code != http.StatusNotFound || !strings.Contains(body, "TRANSFER_NOT_FOUND") {
		t.Errorf("a stranger's transfer page: %d, want 404 TRANSFER_NOT_FOUND\n%.2000s", code, body)
	}
}
