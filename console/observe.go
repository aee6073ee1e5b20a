package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/internal/dashboard"
	"github.com/laraworker/laraworker/internal/httpguard"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

// --metrics-addr and --pprof-addr follow the dashboard's rule: a
// loopback address, or a credential. Their credential is a bearer token
// (Prometheus sends one: `authorization: credentials_file`), read from
// the environment or a file, never from a flag.
const (
	envMetricsToken     = "LARAWORKER_METRICS_TOKEN"
	envMetricsTokenFile = "LARAWORKER_METRICS_TOKEN_FILE"
)

// Write timeouts: a page or /metrics is written well within a minute; a
// pprof profile runs as long as asked (?seconds=).
const (
	pageWriteTimeout    = time.Minute
	metricsWriteTimeout = time.Minute
)

// observeSetup is where /metrics and pprof are served, and the token
// that guards them.
type observeSetup struct {
	metricsAddr, pprofAddr string // host:port; "": not served
	token                  string
	limiter                *httpguard.Limiter
	log                    zerolog.Logger
}

// readObserveFlags reads the metrics token and checks the two addresses
// (flag values; "" when not given) before anything is opened: a
// non-loopback address without a token is a usage error.
func readObserveFlags(c *cli.Context, metrics, pprof string, log zerolog.Logger) (observeSetup, error) {
	o := observeSetup{log: log, limiter: httpguard.NewLimiter(nil, httpguard.ClientPolicy, httpguard.GlobalPolicy)}
	if metrics == "" && pprof == "" {
		return o, nil
	}
	token, err := loadMetricsToken(os.Environ())
	if err != nil {
		return o, cli.Exit(c.Command.Name+": "+err.Error(), 1)
	}
	o.token = token
	if token != "" {
		output.Secrets(c.App).Add(token) // a log line or an error never shows it
	}
	for _, a := range []struct {
		flag, value string
		to          *string
	}{{"metrics-addr", metrics, &o.metricsAddr}, {"pprof-addr", pprof, &o.pprofAddr}} {
		if a.value == "" {
			continue
		}
		addr, err := listenAddr(a.flag, a.value)
		if err != nil {
			return o, cmdline.UsageError("%s: %v", c.Command.Name, err)
		}
		if !dashboard.IsLoopback(addr) && token == "" {
			return o, cmdline.UsageError("%s: --%s %s is not a loopback address: set %s (or %s, a file holding it) and give the scraper the same token (Prometheus: authorization: credentials_file), or bind 127.0.0.1",
				c.Command.Name, a.flag, addr, envMetricsToken, envMetricsTokenFile)
		}
		*a.to = addr
	}
	return o, nil
}

// loadMetricsToken reads the token from the environment or from the
// file envMetricsTokenFile names (mode 600, the token on its own).
func loadMetricsToken(environ []string) (string, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	token, file := env[envMetricsToken], env[envMetricsTokenFile]
	switch {
	case token != "" && file != "":
		return "", fmt.Errorf("set %s or %s, not both", envMetricsToken, envMetricsTokenFile)
	case file != "":
		st, err := os.Stat(file)
		if err != nil {
			return "", fmt.Errorf("%s: %w", envMetricsTokenFile, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("%s %s is readable by others (mode %v): chmod 600 it", envMetricsTokenFile, file, st.Mode().Perm())
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s: %w", envMetricsTokenFile, err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return "", fmt.Errorf("%s %s is empty", envMetricsTokenFile, file)
		}
	}
	if token != "" && len(token) < 16 {
		return "", errors.New("the metrics token must have at least 16 characters")
	}
	return token, nil
}

type reasonKey struct{}

// showReason: the request may read why /healthz fails (the reason can
// name tables and settings); without it, /healthz answers the status
// alone.
func showReason(ctx context.Context) bool { v, _ := ctx.Value(reasonKey{}).(bool); return v }

// guard puts the rest of the rule on a handler. Without a token, only
// localhost Host names are answered (a DNS-rebinding page sends its own
// name). With one, every path needs `Authorization: Bearer TOKEN`,
// checked through the guess limiter, except /healthz, which answers its
// status to anyone (probes) and its reason only with the token.
func (o observeSetup) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10) // nothing here reads a body
		if o.token == "" {
			if !httpguard.LoopbackHost(r.Host) {
				http.Error(w, "this server answers only to localhost names (no "+envMetricsToken+" is set)", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reasonKey{}, true)))
			return
		}
		ok, wait := o.bearer(r)
		switch {
		case wait > 0:
			w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
			http.Error(w, "too many wrong tokens", http.StatusTooManyRequests)
		case ok || r.URL.Path == "/healthz":
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reasonKey{}, ok)))
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="laraworker"`)
			http.Error(w, "authentication required: Authorization: Bearer ("+envMetricsToken+")", http.StatusUnauthorized)
		}
	})
}

// bearer checks r's bearer token; a request without one is no guess.
func (o observeSetup) bearer(r *http.Request) (ok bool, wait time.Duration) {
	tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return false, 0
	}
	client := httpguard.Proxies(nil).ClientKey(r)
	att, wait := o.limiter.Begin(client)
	if att == nil {
		return false, wait
	}
	ok = subtle.ConstantTimeCompare([]byte(tok), []byte(o.token)) == 1
	if d, _ := att.Done(ok); d > 0 {
		o.log.Warn().Str("client", client).Dur("locked_for", d).Msg("metrics: too many wrong tokens: checks wait")
	}
	return ok, 0
}
