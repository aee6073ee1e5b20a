package dashboard

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
)

// view is what every page template gets.
type view struct {
	Title        string
	Nav          string
	CSRF         string
	SignedIn     bool // by a session: the page offers to sign out
	ReadOnly     bool
	HidePayloads bool
	Sum          *snapshot.Summary
	Now          time.Time
	Version      string
	Notice       string
	Data         any
}

// pageFunc renders one page: the template name and its data.
type pageFunc func(w http.ResponseWriter, r *http.Request, v *view) (string, error)

// errNotFound renders as 404 (a source's own "not found" too).
var errNotFound = snapshot.ErrNotFound

// errRedirected: the page function answered with a redirect.
var errRedirected = errors.New("redirected")

func (s *Server) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who := verdictOf(r.Context())
		v := &view{CSRF: s.auth.csrfToken(who.bind), SignedIn: who.session != "", ReadOnly: s.opt.ReadOnly, HidePayloads: s.opt.HidePayloads,
			Sum: s.snap.Current(), Now: s.now(), Version: s.opt.Version, Notice: notice(r.URL.Query())}
		name, err := fn(w, r, v)
		if errors.Is(err, errRedirected) {
			return
		}
		if err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, errNotFound) {
				status = http.StatusNotFound
			} else {
				s.opt.Logger.Warn().Str("error", s.clean(err.Error())).Str("path", r.URL.Path).Msg("dashboard page failed")
			}
			v.Title, v.Data = "Error", err.Error()
			s.render(w, status, "error", v)
			return
		}
		s.render(w, http.StatusOK, name, v)
	}
}

// render executes page name with v's values redacted (shown).
func (s *Server) render(w http.ResponseWriter, status int, name string, v *view) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", s.shown(v)); err != nil {
		s.opt.Logger.Error().Err(err).Str("page", name).Msg("dashboard template failed")
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// notice turns the result codes a redirect carries into a sentence; the
// page never echoes free text from the URL.
func notice(q url.Values) string {
	n := func(k string) int { v, _ := strconv.Atoi(q.Get(k)); return v }
	switch {
	case q.Has("retried"):
		return fmt.Sprintf("%d failed job(s) pushed back onto their queue; %d could not be.", n("retried"), n("errors"))
	case q.Has("forgotten"):
		return fmt.Sprintf("%d failed job(s) deleted; %d not found.", n("forgotten"), n("errors"))
	case q.Has("paused"):
		return "Pause requested: Go workers apply it within seconds."
	case q.Has("resumed"):
		return "Resume requested: Go workers apply it within seconds."
	case q.Has("cancelled"):
		return "Batch cancelled, as Batch::cancel() does: its jobs that check $this->batch()->cancelled() skip their work."
	case q.Has("batchretried"):
		return fmt.Sprintf("%d failed job(s) of the batch pushed back onto their queue; %d could not be.", n("batchretried"), n("errors"))
	}
	return ""
}
