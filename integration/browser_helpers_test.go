package integration

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// screenshotDir is where the browser tests write their screenshots
// (git-ignored), so a reviewer can look at every page.
const screenshotDir = "screenshots"

// newBrowser starts one headless Chromium for a test and its subtests and
// returns a tab context. The browser ends with the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		t.Fatal("chromium is not installed at /usr/bin/chromium: `make test` installs Debian's chromium (as root)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	// The whole browser run is bounded.
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	abs, _ := filepath.Abs(screenshotDir)
	t.Logf("screenshots are written to %s", abs)
	return ctx
}

// run runs browser actions or fails the test.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// screenshot saves a full-page PNG of the current page as <name>.png.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(screenshotDir, name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tid is the CSS selector of a data-testid.
func tid(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

// textOf reads the text of the first element matching sel.
func textOf(t *testing.T, ctx context.Context, sel chromedp.CSS) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// ioCopy reads a response body into a builder.
func ioCopy(b *strings.Builder, resp *http.Response) (int64, error) {
	return io.Copy(b, resp.Body)
}

// clearInput empties the input with a data-testid.
func clearInput(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`document.querySelector('[data-testid="`+id+`"]').value = ""`)); err != nil {
		t.Fatalf("clear %s: %v", id, err)
	}
}

// waitJS polls a JavaScript condition in the page until it is true (bounded
// by the browser's context).
func waitJS(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	WaitFor(t, 10*time.Second, what, func() bool {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		return err == nil && ok
	})
}

// attrJS evaluates a JavaScript expression that gives a string.
func attrJS(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}
