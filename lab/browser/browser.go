// Package browser runs web pages in a real headless Chromium for the lab's tests, driven from Go with chromedp over
// the DevTools protocol: New starts a browser for one test and returns the context of its one tab, Screenshot saves
// what the tab shows, and the page's console errors and uncaught exceptions fail the test unless it allows them.
//
// The browser is the binary CHROMIUM_BIN names, which `make test` sets (tools/chromium.sh finds or installs Debian's
// chromium package), else chromium, chromium-browser or google-chrome on PATH. Without one a test skips with a
// message naming `make test`, except under CI=true, where that is a failure.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/transferflow/orchestrator/internal/syncio"
)

// The page's viewport: fixed, so that layouts and screenshots are the same from one
// run and machine to the next.
const (
	DefaultWidth  = 1280
	DefaultHeight = 900
)

// DefaultTimeout bounds the browser's start, and then everything a test does with the tab New returns.
const DefaultTimeout = 30 * time.Second

// closeTimeout bounds how long a test's cleanup waits for Chromium to exit.
const closeTimeout = 10 * time.Second

// ErrNotFound reports that there is no Chromium binary to run; `make test` installs one.
var ErrNotFound = errors.New("browser: no Chromium binary (CHROMIUM_BIN, or chromium, chromium-browser or google-chrome on PATH)")

// candidates are the names Binary looks for on PATH when CHROMIUM_BIN is empty, in tools/chromium.sh's order.
var candidates = []string{"chromium", "chromium-browser", "google-chrome"}

// Binary returns the Chromium binary to run: CHROMIUM_BIN when it is set (a path, or a name looked up on PATH),
// else the first of chromium, chromium-browser and google-chrome that lookPath finds. It installs nothing
// (tools/chromium.sh does, for `make test`); the error wraps ErrNotFound when there is no binary.
func Binary(getenv func(string) string, lookPath func(string) (string, error)) (string, error) {
	if v := getenv("CHROMIUM_BIN"); v != "" {
		path, err := lookPath(v)
		if err != nil {
			return "", fmt.Errorf("%w: CHROMIUM_BIN=%s: %v", ErrNotFound, v, err)
		}
		return path, nil
	}
	for _, name := range candidates {
		if path, err := lookPath(name); err == nil {
			return path, nil
		}
	}
	return "", ErrNotFound
}

// Option changes how New starts the browser.
type Option func(*config)

type config struct {
	width, height int
	timeout       time.Duration
	allowJSErrors bool
}

// Timeout sets how long the browser may take to start, and how long the tab's context lasts after it did (default
// DefaultTimeout). A test that drives a page for longer asks for more.
func Timeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// AllowJSErrors keeps the page's console errors and uncaught exceptions from failing the test; JSErrors still
// returns them, for a test that expects some.
func AllowJSErrors() Option {
	return func(c *config) { c.allowJSErrors = true }
}

// New starts a headless Chromium for the test and returns the chromedp context of its one tab, for chromedp.Run and
// chromedp.Do, its viewport DefaultWidth by DefaultHeight (set through the DevTools protocol: headless Chromium's
// window counts its invisible tool bars). The context ends after the timeout (Timeout),
// so that an action on a hung browser fails the test instead of hanging it; the browser, with a profile of its own
// in a temporary directory, is closed when the test ends. Unless AllowJSErrors is given, every console.error and
// uncaught exception of the page fails the test when it ends (FailOnJSErrors reports them sooner). Without a
// Chromium binary the test is skipped with a message naming `make test`, or fails under CI=true.
func New(t testing.TB, opts ...Option) context.Context {
	t.Helper()
	cfg := config{width: DefaultWidth, height: DefaultHeight, timeout: DefaultTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	bin, err := Binary(os.Getenv, exec.LookPath)
	if err != nil {
		unavailable(t, os.Getenv, err)
		return nil
	}

	profile := t.TempDir()
	output := &syncio.Buffer{} // chromedp writes to it from its own goroutine
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox, // Chromium refuses to start sandboxed as root, which containers and CI often are
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(cfg.width, cfg.height),
		chromedp.UserDataDir(profile),
		chromedp.CombinedOutput(output),
	)...)
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(tabCtx, closeTimeout)
		defer cancel()
		if err := chromedp.Cancel(closeCtx); err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("browser: close Chromium: %v", err)
		}
		cancelTab()
		cancelAlloc() // waits for the process to exit, before the profile's directory is removed
	})

	// The first action starts the browser and binds its life to the context it is given, so that context has no
	// deadline; a timer cancels it instead when the start takes too long.
	timer := time.AfterFunc(cfg.timeout, cancelTab)
	err = chromedp.Do(tabCtx, chromedp.EmulateViewport(int64(cfg.width), int64(cfg.height)))
	if !timer.Stop() {
		t.Fatalf("browser: %s did not start within %v; its output:\n%s", bin, cfg.timeout, tail(output.String()))
	}
	if err != nil {
		t.Fatalf("browser: start %s: %v; its output:\n%s", bin, err, tail(output.String()))
	}

	rec := &jsErrors{}
	if err := chromedp.Listen(tabCtx, rec.record); err != nil {
		t.Fatalf("browser: listen to the console: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.WithValue(tabCtx, jsErrorsKey{}, rec), cfg.timeout)
	t.Cleanup(cancel)
	if !cfg.allowJSErrors {
		t.Cleanup(func() { FailOnJSErrors(t, ctx) })
	}
	return ctx
}

// unavailable skips the test for the missing browser, or fails it when CI is set: CI must run every test.
func unavailable(t testing.TB, getenv func(string) string, err error) {
	t.Helper()
	if getenv("CI") != "" {
		t.Fatalf("%v", err)
		return
	}
	t.Skipf("browser test skipped: %v; `make test` installs Chromium", err)
}

// Screenshot saves a PNG of the tab's whole page, beyond the window if it is longer, as dir/name.png (creating dir)
// and returns its path.
func Screenshot(t testing.TB, ctx context.Context, dir, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG
	if err != nil {
		t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	return path
}

// JSErrors returns the console errors and uncaught exceptions of the tab of ctx (a context from New) so far, in
// order, one line each.
func JSErrors(ctx context.Context) []string {
	rec, _ := ctx.Value(jsErrorsKey{}).(*jsErrors)
	if rec == nil {
		return nil
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.errs...)
}

// FailOnJSErrors fails the test with each console error and uncaught exception of the tab of ctx (a context from
// New) that it has not reported before. New calls it when the test ends, unless AllowJSErrors was given.
func FailOnJSErrors(t testing.TB, ctx context.Context) {
	t.Helper()
	rec, _ := ctx.Value(jsErrorsKey{}).(*jsErrors)
	if rec == nil {
		t.Fatalf("browser: FailOnJSErrors needs a context from browser.New")
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, e := range rec.errs[rec.reported:] {
		t.Errorf("browser: the page logged a JavaScript error: %s", e)
	}
	rec.reported = len(rec.errs)
}

type jsErrorsKey struct{}

// jsErrors collects the page's console errors and uncaught exceptions. record runs on chromedp's goroutine that
// reads the browser's messages, so it only appends, under the lock.
type jsErrors struct {
	mu       sync.Mutex
	errs     []string
	reported int
}

func (r *jsErrors) record(ev any) {
	var line string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		line = exceptionText(ev.ExceptionDetails)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		line = "console.error: " + consoleText(ev.Args)
	default:
		return
	}
	r.mu.Lock()
	r.errs = append(r.errs, line)
	r.mu.Unlock()
}

// exceptionText is an uncaught exception as the DevTools console shows it ("Uncaught Error: boom"), with where it
// was thrown.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "exception"
	}
	text := d.Text
	if d.Exception != nil {
		desc, _, _ := strings.Cut(remoteText(d.Exception), "\n") // the first line; the rest is the stack
		text = strings.TrimSpace(text + " " + desc)
	}
	if d.URL != "" {
		text += fmt.Sprintf(" (%s:%d:%d)", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return text
}

// consoleText joins the arguments of a console call as the DevTools console does, without its formatting verbs.
func consoleText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		parts = append(parts, remoteText(a))
	}
	return strings.Join(parts, " ")
}

// remoteText is one value of the page: a string as it is, any other value by its description or JSON.
func remoteText(o *runtime.RemoteObject) string {
	if o == nil {
		return "null"
	}
	if o.Type == runtime.RemoteObjectTypeString {
		var s string
		if err := json.Unmarshal([]byte(o.Value), &s); err == nil {
			return s
		}
	}
	switch {
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case o.Description != "":
		return o.Description
	case len(o.Value) > 0:
		return string(o.Value)
	}
	return string(o.Type)
}

// tail returns the last lines of the browser's output, enough to see why it did not start.
func tail(output string) string {
	lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
