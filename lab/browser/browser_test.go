package browser

import (
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// page is a small console: a status text, a button whose click changes it, and a link.
const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>lab browser</title></head>
<body>
<p id="status">waiting</p>
<button id="go" type="button">Approve</button>
<a id="docs" href="/docs">Docs</a>
<script>
document.getElementById("go").addEventListener("click", () => {
	document.getElementById("status").textContent = "approved";
});
</script>
</body>
</html>`

// serve starts a server for the test of the page at /, a page the link leads to at /docs, and broken at /broken.
func serve(t *testing.T, broken string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>docs</title></head><body><h1 id="docs-page">Docs</h1></body></html>`)
	})
	mux.HandleFunc("GET /broken", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, broken)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestKeyboardOnly drives the page with the keyboard only, as a user without a mouse would: Tab moves the focus to
// the button, Enter presses it, and the text it changes is read back; the screenshot is a PNG of the viewport; Tab
// again reaches the link, and Enter follows it.
func TestKeyboardOnly(t *testing.T) {
	srv := serve(t, "")
	ctx := New(t)

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("go"))); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("status")))
	if err != nil {
		t.Fatalf("read the status: %v", err)
	}
	if status != "waiting" {
		t.Fatalf("status before the button = %q, want %q", status, "waiting")
	}

	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatalf("press Tab: %v", err)
	}
	focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	if err != nil {
		t.Fatalf("read the focus: %v", err)
	}
	if focused != "go" {
		t.Fatalf("focused after Tab: %q, want the button %q", focused, "go")
	}

	if err := chromedp.Do(ctx,
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`//p[@id="status" and text()="approved"]`), // a plain string is a DOM search: XPath here
	); err != nil {
		t.Fatalf("press Enter and wait for the new status: %v", err)
	}

	path := Screenshot(t, ctx, t.TempDir(), "approved")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if got := img.Bounds().Size(); got.X != DefaultWidth || got.Y != DefaultHeight {
		t.Errorf("screenshot is %dx%d, want the viewport's %dx%d", got.X, got.Y, DefaultWidth, DefaultHeight)
	}

	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatalf("press Tab again: %v", err)
	}
	if focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`)); err != nil || focused != "docs" {
		t.Fatalf("focused after the second Tab: %q, %v; want the link %q", focused, err, "docs")
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("docs-page"))); err != nil {
		t.Fatalf("press Enter on the link and wait for its page: %v", err)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || loc != srv.URL+"/docs" {
		t.Errorf("location after following the link = %q, %v; want %q", loc, err, srv.URL+"/docs")
	}
}

// TestJSErrorsAreReported loads a page that logs a console error and throws an exception nothing catches: both are
// recorded, and FailOnJSErrors fails the test with each.
func TestJSErrorsAreReported(t *testing.T) {
	srv := serve(t, `<!doctype html><html><body><script>
console.log("fine");
console.error("bad state", 42);
throw new Error("boom");
</script></body></html>`)
	ctx := New(t, AllowJSErrors())

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/broken")); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	errs := JSErrors(ctx)
	want := []string{"console.error: bad state 42", "Uncaught Error: boom"}
	if len(errs) != len(want) {
		t.Fatalf("JSErrors = %q, want %d: %q", errs, len(want), want)
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i], w) {
			t.Errorf("JSErrors[%d] = %q, want it to start with %q", i, errs[i], w)
		}
	}

	rec := &recordingTB{TB: t}
	FailOnJSErrors(rec, ctx)
	if len(rec.errors) != 2 || !strings.Contains(rec.errors[1], "boom") {
		t.Errorf("FailOnJSErrors reported %q, want both errors", rec.errors)
	}
	rec.errors = nil
	FailOnJSErrors(rec, ctx)
	if len(rec.errors) != 0 {
		t.Errorf("FailOnJSErrors reported %q again", rec.errors)
	}
}

// TestJSErrorFailsTestByDefault checks that New, without AllowJSErrors, fails the test at its end on an uncaught
// exception: the test runs New with a recording TB, and a cleanup registered before New's, so run after them,
// checks what it recorded.
func TestJSErrorFailsTestByDefault(t *testing.T) {
	srv := serve(t, `<!doctype html><html><body><script>throw new TypeError("late");</script></body></html>`)
	rec := &recordingTB{TB: t}
	t.Cleanup(func() {
		if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "TypeError: late") {
			t.Errorf("at the end of the test New reported %q, want the TypeError", rec.errors)
		}
	})
	ctx := New(rec)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/broken")); err != nil {
		t.Fatalf("load the page: %v", err)
	}
}

// recordingTB records what a helper reports as an error instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestBinary(t *testing.T) {
	installed := map[string]string{
		"chromium":                  "/usr/bin/chromium",
		"google-chrome":             "/opt/google/chrome/google-chrome",
		"/opt/chromium/chrome":      "/opt/chromium/chrome",
		"chromium-from-environment": "/home/me/bin/chromium-from-environment",
	}
	tests := []struct {
		name      string
		env       string
		installed []string
		want      string
		wantErr   bool
	}{
		{name: "CHROMIUM_BIN path", env: "/opt/chromium/chrome", installed: []string{"/opt/chromium/chrome", "chromium"}, want: "/opt/chromium/chrome"},
		{name: "CHROMIUM_BIN name on PATH", env: "chromium-from-environment", installed: []string{"chromium-from-environment"}, want: "/home/me/bin/chromium-from-environment"},
		{name: "CHROMIUM_BIN missing is not overridden by PATH", env: "/nonexistent", installed: []string{"chromium"}, wantErr: true},
		{name: "chromium first", installed: []string{"google-chrome", "chromium"}, want: "/usr/bin/chromium"},
		{name: "google-chrome last", installed: []string{"google-chrome"}, want: "/opt/google/chrome/google-chrome"},
		{name: "none", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "CHROMIUM_BIN" {
					return tt.env
				}
				return ""
			}
			lookPath := func(name string) (string, error) {
				for _, n := range tt.installed {
					if n == name {
						return installed[name], nil
					}
				}
				return "", errors.New("not found")
			}
			got, err := Binary(getenv, lookPath)
			if tt.wantErr {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Binary() = %q, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Binary() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestUnavailable checks what a test without a browser does: skip, naming `make test`, or fail under CI.
func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name, ci string
		wantSkip bool
	}{
		{name: "developer", ci: "", wantSkip: true},
		{name: "CI", ci: "true", wantSkip: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &stoppingTB{TB: t}
			unavailable(rec, func(k string) string {
				if k == "CI" {
					return tt.ci
				}
				return ""
			}, ErrNotFound)
			if tt.wantSkip && (rec.skipped == "" || rec.failed != "" || !strings.Contains(rec.skipped, "make test")) {
				t.Errorf("skipped %q, failed %q; want a skip naming make test", rec.skipped, rec.failed)
			}
			if !tt.wantSkip && (rec.failed == "" || rec.skipped != "") {
				t.Errorf("skipped %q, failed %q; want a failure", rec.skipped, rec.failed)
			}
		})
	}
}

// stoppingTB records a skip or a fatal failure instead of stopping the test.
type stoppingTB struct {
	testing.TB
	skipped, failed string
}

func (s *stoppingTB) Skipf(format string, args ...any)  { s.skipped = fmt.Sprintf(format, args...) }
func (s *stoppingTB) Fatalf(format string, args ...any) { s.failed = fmt.Sprintf(format, args...) }
