package dashboard

import (
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/laraworker/laraworker/internal/httpguard"
)

// Cross-site request forgery. A page of another origin on the same site
// (another port of this host, a sibling subdomain) can make the browser
// send this dashboard's cookies, and can plant cookies of its own here; it
// cannot read this dashboard's pages. So a state-changing request must
// (1) come from this dashboard's own origin, as the browser says in
// Origin or Sec-Fetch-Site, and (2) carry the CSRF token of its page: an
// HMAC, under a secret of this process, of the session (or credential)
// the request is made with, which no cookie another page plants can match.

// safeMethod: a request that changes nothing (every route but the POSTs).
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sameOrigin refuses a request that another origin's page may have sent:
// Origin must be this dashboard's own; without Origin, Sec-Fetch-Site
// must say same-origin. "Origin: null" (a sandboxed page, or a form sent
// with no-referrer from another origin) is refused: it could be anyone.
func (s *Server) sameOrigin(r *http.Request) error {
	own := s.auth.proxies.Origin(r)
	origin, site := r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")
	switch {
	case origin == "null":
		return errors.New("the page that sent this request hides its origin (Origin: null): changes are taken only from this dashboard's own pages")
	case origin != "" && httpguard.NormalizeOrigin(origin) != own:
		return fmt.Errorf("this request comes from %q, not from this dashboard (%s); behind a reverse proxy, name it with --trusted-proxy and have it pass the Host (or X-Forwarded-Host) and X-Forwarded-Proto", origin, own)
	case origin == "" && site != "same-origin":
		return fmt.Errorf("a change needs an Origin header naming this dashboard (%s) or Sec-Fetch-Site: same-origin; a script sends Origin: %s", own, own)
	case site != "" && site != "same-origin":
		return fmt.Errorf("the browser says this request comes from another origin (Sec-Fetch-Site: %s)", site)
	}
	return nil
}

// Body limits: a sign-in form holds a token; a change form at most
// maxBulk ids.
const (
	loginBodyMax  = 8 << 10
	changeBodyMax = 1 << 20
)

// readForm reads a state-changing request's form, bounded: the body of
// /login to loginBodyMax, others to changeBodyMax. It answers the error
// itself and reports whether to go on.
func (s *Server) readForm(w http.ResponseWriter, r *http.Request) bool {
	limit := int64(changeBodyMax)
	if r.URL.Path == "/login" {
		limit = loginBodyMax
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt != "application/x-www-form-urlencoded" {
			http.Error(w, "send the form as application/x-www-form-urlencoded", http.StatusUnsupportedMediaType)
			return false
		}
	}
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body over %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "unreadable form", http.StatusBadRequest)
		}
		return false
	}
	return true
}

// csrfOK reports whether r carries the CSRF token of its session.
func (s *Server) csrfOK(r *http.Request, v verdict) bool {
	sent := r.Header.Get("X-CSRF-Token")
	if sent == "" {
		sent = r.PostForm.Get("_csrf")
	}
	return v.ok && equal(sent, s.auth.csrfToken(v.bind))
}
