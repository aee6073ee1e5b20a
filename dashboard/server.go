package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/laraworker/laraworker/dashboard/snapshot"
	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
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
	// Failed retries and forgets failed jobs (the Failed page's actions).
	Failed jobqueue.FailedJobs
	// Batches lists and cancels job batches (the Batches page); nil: the
	// store has none, and the page says so.
	Batches jobqueue.BatchAdmin
	Fleet   *fleet.Store
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
	// Secrets (DB password, APP_KEY, ...) are removed from every text a
	// page or log shows.
	Secrets []string
	Logger  zerolog.Logger
	// Version is shown in the footer.
	Version string
}

// Server is the dashboard's HTTP handler.
type Server struct {
	opt   Options
	snap  *snapshot.Snapshot
	auth  *authenticator
	pages map[string]*template.Template
	mux   *http.ServeMux
	now   func() time.Time
}

// New builds the dashboard. Serve it on an address CheckBind accepts.
func New(opt Options) (*Server, error) {
	if opt.Failed == nil || opt.Fleet == nil {
		return nil, errors.New("dashboard: New needs the queue's failed jobs and a fleet store")
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	s := &Server{opt: opt, auth: newAuthenticator(opt.Auth, key), now: time.Now}
	s.snap = opt.Snapshot
	if s.snap == nil {
		snap, err := snapshot.New(snapshot.Config{Tables: opt.Tables, Jobs: opt.Jobs, Fleet: opt.Fleet, Logger: opt.Logger, Clean: s.clean})
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
	m.HandleFunc("POST /failed/retry", s.change(s.retry))
	m.HandleFunc("POST /failed/forget", s.change(s.forget))
	m.HandleFunc("POST /control/pause", s.change(s.pause))
	m.HandleFunc("POST /control/resume", s.change(s.resume))
	m.HandleFunc("POST /batches/cancel", s.change(s.cancelBatch))
	m.HandleFunc("POST /batches/retry", s.change(s.retryBatch))
	s.mux = m
}

// ServeHTTP checks the host, credentials and (for POST) the CSRF token,
// then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !s.opt.Auth.Configured() && !loopbackHost(r) {
		http.Error(w, "this dashboard answers only to localhost names (no credentials are configured)", http.StatusForbidden)
		return
	}
	public := strings.HasPrefix(r.URL.Path, "/assets/") || r.URL.Path == "/login"
	if !public && !s.auth.ok(r) {
		s.unauthorized(w, r)
		return
	}
	if r.Method == http.MethodPost && r.URL.Path != "/login" && !s.csrfOK(r) {
		http.Error(w, "missing or wrong CSRF token: reload the page and try again", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
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

const csrfCookie = "laraworker_csrf"

// csrfToken returns the request's CSRF token, setting a new cookie when
// it has none. The token is random per browser; a state-changing request
// must echo it in a form field or header (double submit): another site
// can make the browser send the cookie but cannot read it.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return tok
}

func (s *Server) csrfOK(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) != 64 {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != "null" {
		if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
			return false
		}
	}
	sent := r.Header.Get("X-CSRF-Token")
	if sent == "" {
		sent = r.PostFormValue("_csrf")
	}
	return subtle.ConstantTimeCompare([]byte(sent), []byte(c.Value)) == 1
}

// change wraps a state-changing handler: refused in read-only mode.
func (s *Server) change(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opt.ReadOnly {
			http.Error(w, "this dashboard is read-only", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		h(w, r)
	}
}

// clean removes every secret from a text that may reach a page or log.
func (s *Server) clean(text string) string {
	for _, sec := range append(s.opt.Secrets, s.opt.Auth.Secrets()...) {
		if sec != "" {
			text = strings.ReplaceAll(text, sec, "[redacted]")
		}
	}
	return text
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
