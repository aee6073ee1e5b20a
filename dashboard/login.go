package dashboard

import (
	"net/http"
	"time"

	"github.com/laraworker/laraworker/dashboard/snapshot"
)

// Signing in with the token: a form, and the session cookie it sets.

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	if s.opt.Auth.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	v := &view{Title: "Sign in", Version: s.opt.Version, Sum: &snapshot.Summary{}}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = s.pages["login"].ExecuteTemplate(w, "layout", v)
}

// login exchanges the token for a session cookie (an HMAC of the token,
// valid until this process ends). Login needs no CSRF token: it changes
// nothing but the caller's own cookie, and only for the right token.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.opt.Auth.Token == "" || !equal(r.PostFormValue("token"), s.opt.Auth.Token) {
		time.Sleep(500 * time.Millisecond) // slows guessing
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.auth.session, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
