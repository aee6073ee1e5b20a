package dashboard

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
)

// Signing in with the token: a form that starts a session, and signing
// out, which ends it.

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	if s.opt.Auth.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	v := &view{Title: "Sign in", Version: s.opt.Version, Sum: &snapshot.Summary{}}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = s.pages["login"].ExecuteTemplate(w, "layout", v)
}

// login exchanges the token for a new session. Its form carries no CSRF
// token (there is no session yet), but the request must come from this
// dashboard's origin like every change (ServeHTTP), and the token is
// checked through the limiter.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.opt.Auth.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	ok, wait := s.auth.guess(r, func() bool { return equal(r.PostForm.Get("token"), s.opt.Auth.Token) })
	switch {
	case wait > 0:
		tooMany(w, wait)
		return
	case !ok:
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	// A new id at every sign-in: an id planted in the browser before
	// (session fixation) never becomes a signed-in session.
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.auth.sessions.end(c.Value)
	}
	id := s.auth.sessions.create()
	http.SetCookie(w, s.sessionCookie(r, id, int(s.auth.sessions.life/time.Second)))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the request's session (server side: the cookie's value is
// worthless from now on) and clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if v := verdictOf(r.Context()); v.session != "" {
		s.auth.sessions.end(v.session)
	}
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// sessionCookie is the session cookie holding id; Secure when the
// browser reached us over TLS (here or at a trusted proxy).
func (s *Server) sessionCookie(r *http.Request, id string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: sessionCookie, Value: id, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.auth.proxies.Secure(r)}
}

// tooMany answers a request the limiter refused.
func tooMany(w http.ResponseWriter, wait time.Duration) {
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	http.Error(w, fmt.Sprintf("too many wrong credentials: try again in %d s", secs), http.StatusTooManyRequests)
}

type verdictKey struct{}

// verdictOf is the verdict ServeHTTP put in the request's context.
func verdictOf(ctx context.Context) verdict {
	v, _ := ctx.Value(verdictKey{}).(verdict)
	return v
}
