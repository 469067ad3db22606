package handlers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
)

// The browser suite drives the real router in Debian's Chromium through chromedp. One
// browser serves the whole test binary: the first browser test starts it, TestMain stops it
// after the last (stopBrowser), and every test gets its own tab in its own browser context
// (cookies are not shared). Without a Chromium binary the browser tests skip, unless
// RUNSDESK_REQUIRE_BROWSER is set, which makes them fail instead.

// browserFlags are passed to Chromium besides chromedp's headless defaults.
var browserFlags = []chromedp.ExecAllocatorOption{
	chromedp.NoSandbox,
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("no-first-run", true),
	chromedp.WindowSize(1280, 900),
}

// browserStepTimeout bounds each browser step of a test (a navigation, a wait).
const browserStepTimeout = 15 * time.Second

// sharedBrowser is the test binary's one browser.
var sharedBrowser struct {
	once sync.Once
	ctx  context.Context
	stop context.CancelFunc
	err  error
}

// stopBrowser ends the shared browser, if one was started; TestMain calls it after the tests.
func stopBrowser() {
	if sharedBrowser.stop != nil {
		sharedBrowser.stop()
	}
}

// chromiumPath returns the Chromium binary to drive, or "" when there is none.
func chromiumPath() string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser(path string) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path))
	opts = append(opts, browserFlags...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	sharedBrowser.ctx = bctx
	sharedBrowser.stop = func() { bcancel(); acancel() }
	if err := chromedp.Do(bctx); err != nil {
		sharedBrowser.err = fmt.Errorf("start %s: %w", path, err)
	}
}

// tab is one test's browser tab on one test app.
type tab struct {
	t   *testing.T
	app *testApp
	ctx context.Context

	mu      sync.Mutex
	dialogs []string
}

// newTab opens a tab in a fresh browser context of the shared browser (starting it on first
// use). JavaScript dialogs are recorded (see dialogsOpened) and accepted.
func newTab(t *testing.T, app *testApp) *tab {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("RUNSDESK_REQUIRE_BROWSER") != "" {
			t.Fatal("RUNSDESK_REQUIRE_BROWSER is set but no Chromium was found: apt-get install -y chromium")
		}
		t.Skip("browser test skipped: no Chromium binary (apt-get install -y chromium; set RUNSDESK_REQUIRE_BROWSER=1 to make this a failure)")
	}
	sharedBrowser.once.Do(func() { startBrowser(path) })
	if sharedBrowser.err != nil {
		t.Fatalf("browser: %v", sharedBrowser.err)
	}
	tctx, cancel := chromedp.NewContext(sharedBrowser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(tctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	b := &tab{t: t, app: app, ctx: tctx}
	err := chromedp.Listen(tctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(d.Type)+": "+d.Message)
			b.mu.Unlock()
			go func() { _ = chromedp.Do(tctx, handleDialog(true)) }()
		}
	})
	if err != nil {
		t.Fatalf("listen for dialogs: %v", err)
	}
	return b
}

func handleDialog(accept bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
		return err
	})
}

// dialogsOpened returns the JavaScript dialogs the tab saw, as "type: message".
func (b *tab) dialogsOpened() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// do runs steps within browserStepTimeout and fails the test on error.
func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

// fail ends the test with a screenshot of the tab, for the artefacts.
func (b *tab) fail(what string, err error) {
	b.t.Helper()
	name := strings.NewReplacer("/", "-", " ", "-").Replace(b.t.Name()) + "-failure"
	b.screenshot(name)
	b.t.Fatalf("browser: %s: %v (screenshot %s)", what, err, name)
}

// eval evaluates a JavaScript expression in the page.
func evalIn[T any](b *tab, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.fail("evaluate "+expr, err)
	}
	return v
}

// open navigates to path on the test app.
func (b *tab) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.app.srv.URL+path))
}

// text returns the trimmed text of the first element matching css.
func (b *tab) text(css string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		b.fail("text of "+css, err)
	}
	return strings.TrimSpace(s)
}

// liveText is text for an element a live page may replace at any moment: it reads the text in
// one evaluation, "" while no element matches, where text's query and read are two steps a
// replacement can fall between.
func (b *tab) liveText(css string) string {
	b.t.Helper()
	return strings.TrimSpace(evalIn[string](b, fmt.Sprintf("document.querySelector(%s)?.textContent ?? ''", jsString(css))))
}

// count returns how many elements match css.
func (b *tab) count(css string) int {
	b.t.Helper()
	return evalIn[int](b, fmt.Sprintf("document.querySelectorAll(%s).length", jsString(css)))
}

// value returns the current value of the form control matching css.
func (b *tab) value(css string) string {
	b.t.Helper()
	return evalIn[string](b, fmt.Sprintf("document.querySelector(%s).value", jsString(css)))
}

// setValue replaces the value of the form control matching css, as pasting would.
func (b *tab) setValue(css, value string) {
	b.t.Helper()
	got := evalIn[string](b, fmt.Sprintf(`(e => { e.value = %s; e.dispatchEvent(new Event("input", {bubbles: true})); return e.value })(document.querySelector(%s))`,
		jsString(value), jsString(css)))
	if got != value {
		b.fail("set value of "+css, fmt.Errorf("value is %q", got))
	}
}

// activeID returns the id of the focused element.
func (b *tab) activeID() string {
	b.t.Helper()
	return evalIn[string](b, "document.activeElement ? document.activeElement.id : ''")
}

// signIn signs in as the test user of role and waits for the signed-in frame.
func (b *tab) signIn(role runtime.Role) {
	b.t.Helper()
	b.open("/login")
	b.do("sign in as "+string(role),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="username"]`), testUsers[role]),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="password"]`), testPassword),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)),
	)
}

// waitFor polls until cond holds after reloading path, or fails after the step timeout.
func (b *tab) waitFor(what, path string, cond func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(browserStepTimeout)
	for {
		b.open(path)
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			b.fail(what, errors.New("timed out"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// screenshot writes a full-page PNG of the tab to the artefacts directory
// ($RUNSDESK_ARTEFACTS, else testdata/artefacts), named name.png. Failing to take or write it
// is logged, not fatal.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := os.Getenv("RUNSDESK_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artefacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	file := filepath.Join(dir, name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot: %s", file)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
