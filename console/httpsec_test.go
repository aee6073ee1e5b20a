package console

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/testapp"
)

// The HTTP security of the servers the binary runs (issue 38): the
// dashboard's sign-in (bounded bodies, the guess limiter, sign-out, TLS,
// trusted proxies) and the bind rule, Host check and token of
// --metrics-addr and --pprof-addr, each against `laraworker` itself.

const dashToken = "console-token-0123456789"

// process is a laraworker started by a test, stopped at its end.
type process struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// startLW starts the binary with a clean environment plus env.
func startLW(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(laraworkerBinary(t), args...), done: make(chan struct{})}
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	p.cmd.Stderr = p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
	})
	return p
}

// waitHTTP waits until url answers (any status) through c.
func (p *process) waitHTTP(t *testing.T, c *http.Client, url string) {
	t.Helper()
	waitFor(t, 20*time.Second, url+" to answer", func() bool {
		select {
		case <-p.done:
			t.Fatalf("laraworker exited: %s", p.output())
		default:
		}
		resp, err := c.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
}

// runLW runs the binary to its end (at most 30 s) and returns its
// output and exit status.
func runLW(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, laraworkerBinary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("laraworker %s still ran after 30 s: %s", strings.Join(args, " "), out)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// dashboardApp is the SQLite app with laraworker's tables; its .env.
func dashboardApp(t *testing.T) string {
	t.Helper()
	dir, _ := testapp.SqliteApp(t)
	env := filepath.Join(dir, ".env")
	if out, code := runLW(t, nil, "tables", "--env", env); code != 0 {
		t.Fatalf("tables: %s", out)
	}
	return env
}

// noRedirect is a client that keeps cookies out of it and shows
// redirects.
func noRedirect() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// postForm posts a form with extra headers (pairs).
func postForm(t *testing.T, c *http.Client, u string, form url.Values, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// procKB reads a field (VmRSS, VmHWM) of /proc/PID/status, in kB.
func procKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// inParallel runs n copies of do at once and counts their results.
func inParallel(n int, do func() int) map[int]int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	got := map[int]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st := do()
			mu.Lock()
			got[st]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return got
}

// TestDashboardSignInBodiesKeepMemoryBounded: 24 parallel 9 MB POST
// /login (no credentials needed to send them) are refused with 413, and
// the process's peak RSS grows by under 32 MB (issue 38: 37 -> 422 MB).
func TestDashboardSignInBodiesKeepMemoryBounded(t *testing.T) {
	env := dashboardApp(t)
	addr := freeAddr(t)
	p := startLW(t, []string{"LARAWORKER_DASHBOARD_TOKEN=" + dashToken}, "dashboard", "--env", env, "--addr", addr)
	base := "http://" + addr
	p.waitHTTP(t, noRedirect(), base+"/assets/app.css")
	before := procKB(t, p.cmd.Process.Pid, "VmRSS")
	body := "token=" + strings.Repeat("x", 9<<20)
	got := inParallel(24, func() int {
		req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", base)
		resp, err := noRedirect().Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	})
	peak := procKB(t, p.cmd.Process.Pid, "VmHWM")
	t.Logf("RSS before %d MB, peak %d MB; answers %v", before>>10, peak>>10, got)
	if got[http.StatusRequestEntityTooLarge] != 24 {
		t.Errorf("24 parallel 9 MB sign-ins: %v, want 24 x 413", got)
	}
	if peak-before > 32<<10 {
		t.Errorf("the peak RSS grew by %d MB during 24 parallel 9 MB sign-ins", (peak-before)>>10)
	}
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]{64})">`)

// TestDashboardGuessLimitAndSignOut: parallel wrong tokens, at /login and
// as bearer tokens, are compared at most 5 times, the rest refused with
// 429; the right token signs in once the lockout ends; signing out ends
// the session on the server, so its cookie replayed is refused.
func TestDashboardGuessLimitAndSignOut(t *testing.T) {
	env := dashboardApp(t)
	addr := freeAddr(t)
	p := startLW(t, []string{"LARAWORKER_DASHBOARD_TOKEN=" + dashToken}, "dashboard", "--env", env, "--addr", addr)
	base := "http://" + addr
	c := noRedirect()
	p.waitHTTP(t, c, base+"/assets/app.css")
	got := inParallel(40, func() int {
		return postForm(t, noRedirect(), base+"/login", url.Values{"token": {"wrong-token-0123456"}}, "Origin", base).StatusCode
	})
	if got[401] > 5 || got[429] < 35 {
		t.Errorf("40 parallel wrong sign-ins: %v, want at most 5 compared (401), the rest 429", got)
	}
	var session string
	waitFor(t, 10*time.Second, "the right token to sign in after the lockout", func() bool {
		resp := postForm(t, c, base+"/login", url.Values{"token": {dashToken}}, "Origin", base)
		for _, ck := range resp.Cookies() {
			if ck.Name == "laraworker_session" && resp.StatusCode == 303 {
				session = ck.Value
			}
		}
		return session != ""
	})
	got = inParallel(20, func() int {
		req, _ := http.NewRequest("GET", base+"/api/series", nil)
		req.Header.Set("Authorization", "Bearer wrong-token-0123456")
		resp, err := noRedirect().Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	})
	if got[401] > 5 || got[429] < 15 {
		t.Errorf("20 parallel wrong bearer tokens: %v, want at most 5 compared (401), the rest 429", got)
	}

	get := func(cookie string) *http.Response {
		req, _ := http.NewRequest("GET", base+"/", nil)
		req.AddCookie(&http.Cookie{Name: "laraworker_session", Value: cookie})
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get(session)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfMeta.FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("signed in: %d, CSRF token found %v", resp.StatusCode, m != nil)
	}
	req, _ := http.NewRequest("POST", base+"/logout", strings.NewReader("_csrf="+string(m[1])))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.AddCookie(&http.Cookie{Name: "laraworker_session", Value: session})
	if resp, err := c.Do(req); err != nil || resp.StatusCode != 303 {
		t.Fatalf("POST /logout: %v %v", err, resp)
	}
	if resp := get(session); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Errorf("the signed-out cookie replayed: %d %s, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key (mode 600)
// and returns their paths and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "laraworker test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// sessionCookieOf is the session cookie a sign-in response sets.
func sessionCookieOf(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, ck := range resp.Cookies() {
		if ck.Name == "laraworker_session" {
			return ck
		}
	}
	t.Fatalf("sign-in: %d, no session cookie", resp.StatusCode)
	return nil
}

// TestDashboardServesTLS: with --tls-cert and --tls-key the dashboard
// serves HTTPS on a real listener (a certificate made by the test) and
// the session cookie is Secure; plain HTTP gets no page; the flags are
// checked at start.
func TestDashboardServesTLS(t *testing.T) {
	env := dashboardApp(t)
	certFile, keyFile, pool := selfSigned(t)
	addr := freeAddr(t)
	p := startLW(t, []string{"LARAWORKER_DASHBOARD_TOKEN=" + dashToken}, "dashboard", "--env", env, "--addr", addr, "--tls-cert", certFile, "--tls-key", keyFile)
	c := noRedirect()
	c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	base := "https://" + addr
	p.waitHTTP(t, c, base+"/assets/app.css")
	ck := sessionCookieOf(t, postForm(t, c, base+"/login", url.Values{"token": {dashToken}}, "Origin", base))
	if !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Errorf("over TLS the session cookie is %+v, want Secure, HttpOnly, SameSite=Strict", ck)
	}
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.AddCookie(ck)
	if resp, err := c.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET / signed in over TLS: %v %v", err, resp)
	}
	if st, body := httpGet("http://" + addr + "/"); st == 200 || strings.Contains(body, "laraworker") {
		t.Errorf("plain HTTP to the TLS port: %d %.100s", st, body)
	}
	if !strings.Contains(p.output(), `"addr":"https://`+addr) {
		t.Errorf("the start-up line does not say https: %s", p.output())
	}

	if out, code := runLW(t, nil, "dashboard", "--env", env, "--addr", freeAddr(t), "--tls-cert", certFile); code != 2 || !strings.Contains(out, "--tls-cert and --tls-key go together") {
		t.Errorf("--tls-cert alone: exit %d\n%s", code, out)
	}
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runLW(t, nil, "dashboard", "--env", env, "--addr", freeAddr(t), "--tls-cert", certFile, "--tls-key", keyFile); code != 1 || !strings.Contains(out, "readable by others") {
		t.Errorf("a world-readable key: exit %d\n%s", code, out)
	}
}

// TestDashboardTrustedProxy: behind the proxy --trusted-proxy names,
// X-Forwarded-Proto: https makes the session cookie Secure (and the
// page's origin https); from anyone else the header is ignored.
func TestDashboardTrustedProxy(t *testing.T) {
	env := dashboardApp(t)
	addr := freeAddr(t)
	p := startLW(t, []string{"LARAWORKER_DASHBOARD_TOKEN=" + dashToken}, "dashboard", "--env", env, "--addr", addr, "--trusted-proxy", "127.0.0.1")
	base := "http://" + addr
	c := noRedirect()
	p.waitHTTP(t, c, base+"/assets/app.css")
	if ck := sessionCookieOf(t, postForm(t, c, base+"/login", url.Values{"token": {dashToken}}, "Origin", "https://"+addr, "X-Forwarded-Proto", "https")); !ck.Secure {
		t.Errorf("behind a trusted proxy saying https: %+v, want Secure", ck)
	}
	other := freeAddr(t)
	q := startLW(t, []string{"LARAWORKER_DASHBOARD_TOKEN=" + dashToken}, "dashboard", "--env", env, "--addr", other, "--trusted-proxy", "10.9.8.7")
	q.waitHTTP(t, c, "http://"+other+"/assets/app.css")
	if ck := sessionCookieOf(t, postForm(t, c, "http://"+other+"/login", url.Values{"token": {dashToken}}, "Origin", "http://"+other, "X-Forwarded-Proto", "https")); ck.Secure {
		t.Errorf("X-Forwarded-Proto from an untrusted peer made the cookie Secure")
	}
	if out, code := runLW(t, nil, "dashboard", "--env", env, "--addr", freeAddr(t), "--trusted-proxy", "proxy.example"); code != 2 || !strings.Contains(out, `--trusted-proxy "proxy.example": want an IP address`) {
		t.Errorf("--trusted-proxy proxy.example: exit %d\n%s", code, out)
	}
}

// TestMetricsBindRule: --metrics-addr and --pprof-addr on a non-loopback
// address without a metrics token stop the command at start with a usage
// error naming the token; so does a token too short or in a file others
// can read.
func TestMetricsBindRule(t *testing.T) {
	env := dashboardApp(t)
	work := []string{"work", "--env", env, "--route", `App\Jobs\A=noop`}
	for _, args := range [][]string{
		append(append([]string{}, work...), "--metrics-addr", "0.0.0.0:"+port(t)),
		append(append([]string{}, work...), "--pprof-addr", "0.0.0.0:"+port(t)),
		{"dashboard", "--env", env, "--addr", freeAddr(t), "--metrics-addr", "0.0.0.0:" + port(t)},
	} {
		out, code := runLW(t, nil, args...)
		if code != 2 || !strings.Contains(out, "is not a loopback address: set LARAWORKER_METRICS_TOKEN") {
			t.Errorf("%s: exit %d, want 2 naming LARAWORKER_METRICS_TOKEN\n%s", strings.Join(args, " "), code, out)
		}
	}
	metrics := append(append([]string{}, work...), "--metrics-addr", "0.0.0.0:"+port(t))
	if out, code := runLW(t, []string{"LARAWORKER_METRICS_TOKEN=short"}, metrics...); code != 1 || !strings.Contains(out, "at least 16 characters") {
		t.Errorf("a short token: exit %d\n%s", code, out)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("metrics-token-0123456789\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runLW(t, []string{"LARAWORKER_METRICS_TOKEN_FILE=" + file}, metrics...); code != 1 || !strings.Contains(out, "chmod 600") || strings.Contains(out, "metrics-token-0123456789") {
		t.Errorf("a token file others can read: exit %d\n%s", code, out)
	}
}

func port(t *testing.T) string {
	_, p, _ := net.SplitHostPort(freeAddr(t))
	return p
}

// status GETs u with a Host and headers (pairs) and returns the status
// and body.
func status(t *testing.T, u, host string, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsRefuseForeignHosts: on loopback without a token, /metrics,
// /healthz and pprof answer only localhost Host names (a DNS-rebinding
// page sends its own: issue 38 read the queue names with Host:
// evil.example).
func TestMetricsRefuseForeignHosts(t *testing.T) {
	env := dashboardApp(t)
	maddr, paddr := freeAddr(t), freeAddr(t)
	p := startLW(t, nil, "work", "--env", env, "--route", `App\Jobs\A=noop`, "--metrics-addr", maddr, "--pprof-addr", paddr)
	p.waitHTTP(t, noRedirect(), "http://"+maddr+"/healthz")
	for _, u := range []string{"http://" + maddr + "/metrics", "http://" + maddr + "/healthz", "http://" + paddr + "/debug/pprof/heap?debug=1"} {
		if st, body := status(t, u, "evil.example"); st != 403 || strings.Contains(body, "laraworker_") {
			t.Errorf("%s with Host: evil.example: %d, want 403", u, st)
		}
		_, port, _ := net.SplitHostPort(strings.Split(strings.TrimPrefix(u, "http://"), "/")[0])
		if st, _ := status(t, u, "localhost:"+port); st != 200 {
			t.Errorf("%s with Host: localhost: %d, want 200", u, st)
		}
	}
}

// TestMetricsToken: with LARAWORKER_METRICS_TOKEN (or the file
// LARAWORKER_METRICS_TOKEN_FILE names) a non-loopback address is
// served, and /metrics and pprof need `Authorization: Bearer TOKEN`, as
// Prometheus sends it; /healthz answers its status without it.
func TestMetricsToken(t *testing.T) {
	env := dashboardApp(t)
	const token = "metrics-token-0123456789"
	mport, pport := port(t), port(t)
	p := startLW(t, []string{"LARAWORKER_METRICS_TOKEN=" + token}, "work", "--env", env, "--route", `App\Jobs\A=noop`,
		"--metrics-addr", "0.0.0.0:"+mport, "--pprof-addr", "0.0.0.0:"+pport)
	m, pp := "http://127.0.0.1:"+mport, "http://127.0.0.1:"+pport
	p.waitHTTP(t, noRedirect(), m+"/healthz")
	for _, u := range []string{m + "/metrics", pp + "/debug/pprof/heap?debug=1"} {
		if st, _ := status(t, u, ""); st != 401 {
			t.Errorf("%s without the token: %d, want 401", u, st)
		}
		if st, _ := status(t, u, "", "Authorization", "Bearer wrong-token-0123456"); st != 401 {
			t.Errorf("%s with a wrong token: %d, want 401", u, st)
		}
		if st, body := status(t, u, "evil.example", "Authorization", "Bearer "+token); st != 200 || body == "" {
			t.Errorf("%s with the token: %d", u, st)
		}
	}
	if st, body := status(t, m+"/metrics", "", "Authorization", "Bearer "+token); !strings.Contains(body, "laraworker_jobs_total") {
		t.Errorf("/metrics with the token: %d, no laraworker_jobs_total", st)
	}
	if st, body := status(t, m+"/healthz", ""); st != 200 || body != "ok\n" {
		t.Errorf("/healthz without the token: %d %q", st, body)
	}
	if strings.Contains(strings.Join(p.cmd.Args, " "), token) {
		t.Error("the token is in argv")
	}
	// Guesses of the token are limited as the dashboard's are.
	got := inParallel(20, func() int {
		st, _ := status(t, m+"/metrics", "", "Authorization", "Bearer wrong-token-0123456")
		return st
	})
	if got[401] > 5 || got[429] < 15 {
		t.Errorf("20 parallel wrong metrics tokens: %v, want at most 5 compared (401), the rest 429", got)
	}

	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	faddr := freeAddr(t)
	f := startLW(t, []string{"LARAWORKER_METRICS_TOKEN_FILE=" + file}, "dashboard", "--env", env, "--addr", freeAddr(t), "--metrics-addr", faddr)
	f.waitHTTP(t, noRedirect(), "http://"+faddr+"/healthz")
	if st, _ := status(t, "http://"+faddr+"/metrics", ""); st != 401 {
		t.Errorf("dashboard /metrics without the file's token: %d", st)
	}
	// The dashboard's gauges appear with its first snapshot, after the
	// server answers: wait for them.
	var st int
	var body string
	ok := testwait.Poll(30*time.Second, func() bool {
		st, body = status(t, "http://"+faddr+"/metrics", "", "Authorization", "Bearer "+token)
		return st == 200 && strings.Contains(body, "# TYPE laraworker_fleet_")
	})
	if !ok {
		t.Errorf("dashboard /metrics with the file's token: %d %.300s", st, body)
	}
}
