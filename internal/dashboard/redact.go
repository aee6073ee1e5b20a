package dashboard

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"

	"github.com/laraworker/laraworker/internal/redact"
	"github.com/laraworker/laraworker/internal/visible"
)

// Secrets and hidden characters: every response but the static assets
// passes through here.
//
// Secrets are removed twice. First from every value a page or JSON
// endpoint shows, before html/template or encoding/json escapes it and
// before a template cuts it short (shown): a secret is gone whatever
// escaping comes after, and no truncated cell can show its first half.
// Then from the finished body (serveGuarded), in every escaping, for a
// value that reached it another way. The second pass skips secrets that
// are words of the dashboard's own markup or JSON keys (a DB password
// "password" would break the sign-in form) and secrets shorter than
// netMinLen (which could match inside the random CSRF token): those rely
// on the first.

// netMinLen is the shortest secret the finished body is searched for.
const netMinLen = 8

// newRedactor holds the secrets: Options.Secrets and the credentials.
func newRedactor(opt Options) *redact.Redactor {
	return redact.New(append(append([]string{}, opt.Secrets...), opt.Auth.Secrets()...)...)
}

// ownText is the dashboard's own text: its templates, and what its JSON
// and redirects hold besides values.
func ownText() []byte {
	var b bytes.Buffer
	_ = fs.WalkDir(files, "templates", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t, _ := fs.ReadFile(files, path)
			b.Write(t)
		}
		return nil
	})
	keys, _ := json.Marshal(seriesData{T: []int64{}, Done: []line{{Data: []int64{}}}, Failed: []line{}})
	b.Write(keys)
	b.WriteString(`<a href="">See Other</a>.` + "\n")
	return b.Bytes()
}

// newNet is the finished bodies' redactor. It says at start when a secret
// is left to the values' step: such a secret is removed wherever it occurs
// in a value, a queue or class name included.
func (s *Server) newNet() *redact.Redactor {
	net := s.red.Without(ownText(), netMinLen)
	if n := len(s.red.Secrets()) - len(net.Secrets()); n > 0 {
		s.opt.Logger.Warn().Int("secrets", n).Msgf("%d configured secret(s) are shorter than %d characters or words of the dashboard's own pages: "+
			"each is removed wherever it occurs in what a page shows (queue and class names too), which can make text unreadable; use longer passwords", n, netMinLen)
	}
	return net
}

// shown is the copy of v a template renders: every value redacted, the
// CSRF token and the navigation key (the dashboard's own) kept.
func (s *Server) shown(v *view) *view {
	out := s.red.Value(v).(*view)
	out.CSRF, out.Nav = v.CSRF, v.Nav
	return out
}

// clean removes every secret from a text that may reach a page or log.
func (s *Server) clean(text string) string { return s.red.String(text) }

// serveGuarded routes the request and writes its response body redacted
// and with hidden characters shown, as its Content-Type says.
func (s *Server) serveGuarded(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/assets/") {
		s.mux.ServeHTTP(w, r)
		return
	}
	g := &guardedWriter{ResponseWriter: w, status: http.StatusOK}
	s.mux.ServeHTTP(g, r)
	body := s.guardBody(w.Header().Get("Content-Type"), g.buf.Bytes())
	w.Header().Del("Content-Length")
	w.WriteHeader(g.status)
	_, _ = w.Write(body)
}

// guardBody redacts a response body: an HTML page or plain text as text,
// a JSON document inside its strings only.
func (s *Server) guardBody(contentType string, body []byte) []byte {
	switch {
	case strings.HasPrefix(contentType, "application/json"):
		return visible.JSON(s.net.JSON(body))
	case strings.HasPrefix(contentType, "text/html"):
		return visible.Bytes(s.net.Bytes(body))
	}
	return visible.Bytes(s.red.Bytes(body))
}

// guardedWriter holds a response until the handler is done.
type guardedWriter struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
	wrote  bool
}

func (g *guardedWriter) WriteHeader(code int) {
	if !g.wrote {
		g.status, g.wrote = code, true
	}
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	g.wrote = true
	return g.buf.Write(p)
}
