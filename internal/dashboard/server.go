package dashboard

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/httpguard"
	"github.com/laraworker/laraworker/internal/redact"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

//go:embed assets templates
var files embed.FS

// Options configure a dashboard.
type Options struct {
	// Tables are the app's failed_jobs table and, for a database queue,
	// its jobs table, which the snapshot reads.
	Tables snapshot.Tables
	// Jobs reads the pending jobs of a queue that has no jobs table (a
	// Redis queue: redisjobs.New); nil reads Tables.Jobs.
	Jobs snapshot.JobSource
	// Store is the queue connection's store: the Failed page's retries
	// and forgets, the Batches page's list and cancels.
	Store jobqueue.Store
	Fleet *fleet.Store
	// PauseCache is the app's default cache store, where Laravel keeps
	// its queue pauses (queue:pause), and Connection the queue connection
	// served: the pages show those pauses beside laraworker's own. Nil:
	// not shown.
	PauseCache jobqueue.Cache
	Connection string
	// Snapshot is the background reader; Run it. New builds one (from
	// Tables, Jobs and Fleet) when nil.
	Snapshot *snapshot.Snapshot
	// Auth is required on every request when configured.
	Auth Auth
	// ReadOnly serves no state-changing request at all.
	ReadOnly bool
	// HidePayloads shows no payload, command or exception text: only
	// class, queue, ids, attempts and times.
	HidePayloads bool
	// Encrypter decrypts encrypted commands for display (APP_KEY); nil
	// shows them as encrypted.
	Encrypter *payload.Encrypter
	// RetryHook rewrites payloads as `queue:retry` does (console passes
	// the one `laraworker retry` uses).
	RetryHook jobqueue.RetryHook
	// Secrets (DB and Redis passwords, APP_KEY, AWS keys, ...) are removed
	// from every value a page, JSON endpoint or log line shows, in any
	// escaping (and a "base64:" key's other spellings); the credentials
	// in Auth too.
	Secrets []string
	Logger  zerolog.Logger
	// Version is shown in the footer.
	Version string
	// TrustedProxies are the reverse proxies (addresses or ranges) whose
	// X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host headers are
	// believed: the client's address the sign-in limiter counts, whether
	// the session cookie is Secure, the origin a change must come from.
	TrustedProxies []netip.Prefix
	// SessionIdle and SessionLifetime end a token sign-in this long after
	// its last request, and this long after it began (0:
	// DefaultSessionIdle, DefaultSessionLifetime).
	SessionIdle, SessionLifetime time.Duration

	// clock is the sessions' and the sign-in limiter's time (tests); nil:
	// the real clock.
	clock clock.Clock

	// Left, when set, tells what the worker's claims leave in place for
	// PHP workers (a Redis store's LeftNow, when the dashboard runs
	// beside the worker): the overview lists it under the queues.
	Left func() []jobqueue.LeftJobs
}

// Server is the dashboard's HTTP handler.
type Server struct {
	opt   Options
	snap  *snapshot.Snapshot
	auth  *authenticator
	pages map[string]*template.Template
	mux   *http.ServeMux
	now   func() time.Time
	// red removes every secret, net those the finished bodies are
	// searched for (redact.go).
	red, net *redact.Redactor
	// queues are the queue names seen so far (queues.go).
	queues knownQueues
}

// New builds the dashboard. Serve it on an address CheckBind accepts,
// from an http.Server whose headers and reads are bounded
// (ReadHeaderTimeout, ReadTimeout, MaxHeaderBytes: the CLI's are 5 s, 30 s
// and 32 KiB): the handler bounds request bodies itself, not headers.
func New(opt Options) (*Server, error) {
	if opt.Store == nil || opt.Fleet == nil {
		return nil, errors.New("dashboard: New needs the queue's store and a fleet store")
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	clk := opt.clock
	if clk == nil {
		clk = clock.System(nil)
	}
	s := &Server{opt: opt, now: time.Now, auth: &authenticator{
		auth: opt.Auth, key: key, proxies: httpguard.Proxies(opt.TrustedProxies), log: opt.Logger,
		sessions: newSessions(clk.Now, opt.SessionIdle, opt.SessionLifetime),
		limiter:  httpguard.NewLimiter(clk.Now, httpguard.ClientPolicy, httpguard.GlobalPolicy),
	}, red: newRedactor(opt)}
	s.snap = opt.Snapshot
	if s.snap == nil {
		snap, err := snapshot.New(snapshot.Config{Tables: opt.Tables, Jobs: opt.Jobs, Fleet: opt.Fleet,
			PauseCache: opt.PauseCache, Connection: opt.Connection, Logger: opt.Logger, Clean: s.clean})
		if err != nil {
			return nil, fmt.Errorf("dashboard: %w", err)
		}
		s.snap = snap
	}
	if !opt.HidePayloads {
		s.snap.ReadTags()
	}
	if err := s.parseTemplates(); err != nil {
		return nil, err
	}
	s.net = s.newNet()
	s.routes()
	return s, nil
}

// Snapshot is the reader the pages show; run it with Snapshot().Run.
func (s *Server) Snapshot() *snapshot.Snapshot { return s.snap }

func (s *Server) routes() {
	m := http.NewServeMux()
	assets, _ := fs.Sub(files, "assets")
	m.Handle("GET /assets/", http.StripPrefix("/assets/", cacheForever(http.FileServerFS(assets))))
	m.HandleFunc("GET /{$}", s.page(s.overview))
	m.HandleFunc("GET /running", s.page(s.running))
	m.HandleFunc("GET /jobs", s.page(s.jobs))
	m.HandleFunc("GET /jobs/{id}", s.page(s.job))
	m.HandleFunc("GET /failed", s.page(s.failedList))
	m.HandleFunc("GET /failed/{id}", s.page(s.failedJob))
	m.HandleFunc("GET /failed/uuid/{uuid}", s.failedByUUID)
	m.HandleFunc("GET /control", s.page(s.control))
	m.HandleFunc("GET /stats", s.page(s.stats))
	m.HandleFunc("GET /recent", s.page(s.recent))
	m.HandleFunc("GET /batches", s.page(s.batches))
	m.HandleFunc("GET /batches/{id}", s.page(s.batch))
	m.HandleFunc("GET /api/series", s.series)
	m.HandleFunc("GET /login", s.loginForm)
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.logout)
	m.HandleFunc("POST /failed/retry", s.change(s.retry))
	m.HandleFunc("POST /failed/forget", s.change(s.forget))
	m.HandleFunc("POST /control/pause", s.change(s.pause))
	m.HandleFunc("POST /control/resume", s.change(s.resume))
	m.HandleFunc("POST /batches/cancel", s.change(s.cancelBatch))
	m.HandleFunc("POST /batches/retry", s.change(s.retryBatch))
	s.mux = m
}

// ServeHTTP checks the host, the credentials and, for a change, its
// origin, form and CSRF token, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: no URL leaves for another site either
	// way, but under no-referrer the browser sends "Origin: null" with the
	// dashboard's own forms, which sameOrigin refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if !s.opt.Auth.Configured() && !httpguard.LoopbackHost(r.Host) {
		http.Error(w, "this dashboard answers only to localhost names (no credentials are configured)", http.StatusForbidden)
		return
	}
	public := strings.HasPrefix(r.URL.Path, "/assets/") || r.URL.Path == "/login"
	var v verdict
	if !public {
		if v = s.auth.check(r); !v.ok {
			if v.wait > 0 {
				tooMany(w, v.wait)
			} else {
				s.unauthorized(w, r)
			}
			return
		}
	}
	if !safeMethod(r.Method) && !s.changeAllowed(w, r, v) {
		return
	}
	s.serveGuarded(w, r.WithContext(context.WithValue(r.Context(), verdictKey{}, v)))
}

// changeAllowed checks a state-changing request: from this dashboard's
// origin, a bounded form, and (but for signing in) the CSRF token of its
// session. It answers a refusal itself.
func (s *Server) changeAllowed(w http.ResponseWriter, r *http.Request, v verdict) bool {
	if err := s.sameOrigin(r); err != nil {
		http.Error(w, "refused: "+err.Error(), http.StatusForbidden)
		return false
	}
	if !s.readForm(w, r) {
		return false
	}
	if r.URL.Path != "/login" && !s.csrfOK(r, v) {
		http.Error(w, "missing or wrong CSRF token: reload the page and try again", http.StatusForbidden)
		return false
	}
	return true
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	if s.opt.Auth.Token != "" && r.URL.Path == "/logout" {
		s.logout(w, r) // the session has ended already: clear its cookie
		return
	}
	if s.opt.Auth.Token != "" {
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="laraworker"`)
	} else {
		w.Header().Set("WWW-Authenticate", `Basic realm="laraworker", charset="UTF-8"`)
	}
	http.Error(w, "authentication required", http.StatusUnauthorized)
}

// change wraps a state-changing handler: refused in read-only mode.
func (s *Server) change(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opt.ReadOnly {
			http.Error(w, "this dashboard is read-only", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

func cacheForever(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		h.ServeHTTP(w, r)
	})
}

// requestCtx bounds every page's reads.
func requestCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 10*time.Second)
}
