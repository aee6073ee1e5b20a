package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium (Debian's chromium package, installed by
// scripts/setup-browser.sh) driven through chromedp.
type browser struct {
	ctx  context.Context
	shot string // screenshot directory
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("LARAWORKER_E2E") != "" {
			t.Fatalf("chromium is not installed (scripts/setup-browser.sh installs it): %v", err)
		}
		t.Skip("chromium is not installed; run scripts/setup-browser.sh")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	dir := os.Getenv("LARAWORKER_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "laraworker-screenshots")
	} else if !filepath.IsAbs(dir) {
		if root, err := repoRoot(); err == nil {
			dir = filepath.Join(root, dir)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots go to %s", dir)
	return &browser{ctx: ctx, shot: dir}
}

// run runs chromedp actions in order, with a deadline.
func (b *browser) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// value runs one action that returns a value, with a deadline.
func value[T any](t *testing.T, b *browser, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// screenshot saves the whole page as NAME.png.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	png := value(t, b, chromedp.FullScreenshot(100))
	path := filepath.Join(b.shot, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// text returns the text of the first element matching the CSS selector.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	return strings.TrimSpace(value(t, b, chromedp.Text(chromedp.CSS(sel))))
}

// eval evaluates JavaScript in the page.
func eval[T any](t *testing.T, b *browser, js string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	return value(t, b, chromedp.Evaluate[T](js, opts...))
}

// freePort finds a TCP port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitHTTP waits until url answers with any status.
func waitHTTP(t *testing.T, url string, bg *background) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-bg.done:
			bg.done <- err
			t.Fatalf("%s exited: %v\n%s", strings.Join(bg.cmd.Args, " "), err, tail(bg.stderr.String()))
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s does not answer\n%s", url, tail(bg.stderr.String()))
}

// startDashboard runs `laraworker dashboard` on a free loopback port.
func (s *suite) startDashboard(t *testing.T, env []string, args ...string) (string, *background) {
	t.Helper()
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := s.lwCmd(append([]string{"dashboard", "--addr", addr}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	bg := s.start(t, cmd)
	base := "http://" + addr
	waitHTTP(t, base+"/assets/app.css", bg)
	return base, bg
}

// eventually retries check until it returns "" or d passes; the last
// complaint fails the test.
func eventually(t *testing.T, d time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", d, msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

var _ = fmt.Sprint
