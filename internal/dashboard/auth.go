package dashboard

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/httpguard"
	"github.com/rs/zerolog"
)

// Auth is how a request proves who sent it: a bearer token, or basic
// credentials. The zero value means none is configured, which only a
// loopback address allows (CheckBind).
type Auth struct {
	Token          string
	User, Password string
}

// Configured reports whether any credential is set.
func (a Auth) Configured() bool { return a.Token != "" || a.User != "" }

// Secrets are the credential values, to keep out of pages and logs.
func (a Auth) Secrets() []string {
	var out []string
	for _, s := range []string{a.Token, a.Password} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Environment variables (and auth file keys) that hold credentials. There
// is no flag for them: a flag's value shows in `ps`.
const (
	EnvToken    = "LARAWORKER_DASHBOARD_TOKEN"
	EnvUser     = "LARAWORKER_DASHBOARD_USER"
	EnvPassword = "LARAWORKER_DASHBOARD_PASSWORD"
	EnvAuthFile = "LARAWORKER_DASHBOARD_AUTH_FILE"
)

// LoadAuth reads the credentials from environ ("K=V" entries) and from
// the auth file it names (EnvAuthFile), a file of the same KEY=VALUE
// lines; the environment wins. The file must not be readable by group or
// others.
func LoadAuth(environ []string) (Auth, error) {
	vals := map[string]string{}
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if path := env[EnvAuthFile]; path != "" {
		if err := readAuthFile(path, vals); err != nil {
			return Auth{}, err
		}
	}
	for _, k := range []string{EnvToken, EnvUser, EnvPassword} {
		if v, ok := env[k]; ok && v != "" {
			vals[k] = v
		}
	}
	a := Auth{Token: vals[EnvToken], User: vals[EnvUser], Password: vals[EnvPassword]}
	switch {
	case a.Token != "" && a.User != "":
		return Auth{}, errors.New("dashboard: set a token or a user and password, not both")
	case (a.User == "") != (a.Password == ""):
		return Auth{}, fmt.Errorf("dashboard: %s and %s go together", EnvUser, EnvPassword)
	case a.Token != "" && len(a.Token) < 16:
		return Auth{}, fmt.Errorf("dashboard: %s must have at least 16 characters", EnvToken)
	case strings.Contains(a.User, ":"):
		return Auth{}, fmt.Errorf("dashboard: %s must not contain ':'", EnvUser)
	}
	return a, nil
}

func readAuthFile(path string, vals map[string]string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("dashboard: auth file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("dashboard: auth file %s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dashboard: auth file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || (k != EnvToken && k != EnvUser && k != EnvPassword) {
			// The line is not echoed: it may be a secret.
			return fmt.Errorf("dashboard: auth file %s line %d: want %s=, %s= or %s=", path, n, EnvToken, EnvUser, EnvPassword)
		}
		vals[k] = strings.TrimSpace(v)
	}
	return sc.Err()
}

// IsLoopback reports whether a listen address (HOST:PORT) accepts only
// connections from this machine.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckBind refuses to serve a non-loopback address without credentials.
func CheckBind(addr string, a Auth) error {
	if IsLoopback(addr) || a.Configured() {
		return nil
	}
	return fmt.Errorf("dashboard: %s is not a loopback address: set %s, or %s and %s (in the environment or in the file %s names)",
		addr, EnvToken, EnvUser, EnvPassword, EnvAuthFile)
}

const sessionCookie = "laraworker_session"

// authenticator checks requests against Auth.
type authenticator struct {
	auth Auth
	// key is this process's secret: CSRF tokens are HMACs under it, so no
	// one can make one without reading a page of this dashboard.
	key      []byte
	sessions *sessions
	limiter  *httpguard.Limiter
	proxies  httpguard.Proxies
	log      zerolog.Logger
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// verdict is what a request's credentials say.
type verdict struct {
	ok bool
	// bind is what the request's CSRF token is bound to: its session, the
	// credential it carries, or (no credentials) the process alone.
	bind string
	// session is the session id, when signed in with the session cookie.
	session string
	// wait > 0: the limiter refused to check the credentials; try again
	// after it.
	wait time.Duration
}

// check reads r's credentials. A credential that could be a guess (a
// bearer token, a basic password) is checked through the limiter; a
// session id is 256 random bits, not worth guessing.
func (a *authenticator) check(r *http.Request) verdict {
	switch {
	case !a.auth.Configured():
		return verdict{ok: true, bind: "open"}
	case a.auth.Token != "":
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			ok, wait := a.guess(r, func() bool { return equal(tok, a.auth.Token) })
			return verdict{ok: ok, bind: "bearer", wait: wait}
		}
		c, err := r.Cookie(sessionCookie)
		if err == nil && a.sessions.touch(c.Value) {
			return verdict{ok: true, bind: "session\x00" + c.Value, session: c.Value}
		}
		return verdict{}
	default:
		u, p, ok := r.BasicAuth()
		if !ok {
			return verdict{}
		}
		ok, wait := a.guess(r, func() bool {
			// Both compared, so the time taken does not tell which was wrong.
			uok, pok := equal(u, a.auth.User), equal(p, a.auth.Password)
			return uok && pok
		})
		return verdict{ok: ok, bind: "basic\x00" + u, wait: wait}
	}
}

// guess runs one credential check through the limiter: refused (wait >
// 0) while r's client, or everyone, is locked out.
func (a *authenticator) guess(r *http.Request, right func() bool) (ok bool, wait time.Duration) {
	client := a.proxies.ClientKey(r)
	att, wait := a.limiter.Begin(client)
	if att == nil {
		return false, wait
	}
	ok = right()
	if d, global := att.Done(ok); d > 0 {
		if global {
			a.log.Warn().Dur("locked_for", d).Msg("dashboard: too many wrong credentials from all clients together: every credential check waits")
		} else {
			a.log.Warn().Str("client", client).Dur("locked_for", d).Msg("dashboard: too many wrong credentials from one client: its checks wait")
		}
	}
	return ok, 0
}

// csrfToken is the token a form must carry for a request bound to bind.
func (a *authenticator) csrfToken(bind string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte("csrf\x00" + bind))
	return hex.EncodeToString(m.Sum(nil))
}
