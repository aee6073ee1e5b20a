package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
)

// maxBulk bounds one retry or forget request (the page says how many
// are left).
const maxBulk = 10000

// target is what a retry or forget form names: explicit ids, or every
// failed job of a class (optionally of one queue).
type target struct {
	IDs          []int64
	Class, Queue string
}

func parseTarget(r *http.Request) (target, error) {
	if err := r.ParseForm(); err != nil {
		return target{}, err
	}
	t := target{Class: r.PostForm.Get("class"), Queue: r.PostForm.Get("queue")}
	for _, v := range r.PostForm["id"] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return target{}, fmt.Errorf("not a failed job id: %q", v)
		}
		t.IDs = append(t.IDs, id)
	}
	switch {
	case len(t.IDs) > 0 && t.Class != "":
		return target{}, errors.New("give ids or a class, not both")
	case len(t.IDs) == 0 && t.Class == "":
		return target{}, errors.New("select failed jobs first")
	case len(t.IDs) > maxBulk:
		return target{}, fmt.Errorf("at most %d jobs at once", maxBulk)
	}
	return t, nil
}

// resolve lists the ids a target means now.
func (s *Server) resolve(t target) []int64 {
	if len(t.IDs) > 0 {
		return t.IDs
	}
	ids, _ := s.snap.FailedIDs(snapshot.FailedFilter{Class: t.Class, Queue: t.Queue}, 0, maxBulk)
	return ids
}

// confirmData is the confirmation page of a retry or forget.
type confirmData struct {
	Action  string // "retry" or "forget"
	Target  target
	Count   int
	Preview []snapshot.FailedRow
}

func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	s.bulk(w, r, "retry", func(ctx context.Context, uuids []string) (int, int, error) {
		results, err := s.opt.Store.Retry(ctx, uuids, s.opt.RetryHook)
		ok := 0
		for _, res := range results {
			if res.Err == nil {
				ok++
			} else {
				s.opt.Logger.Warn().Str("uuid", res.Failed.UUID).Str("error", s.clean(res.Err.Error())).Msg("dashboard retry failed")
			}
		}
		return ok, len(uuids) - ok, err
	})
}

func (s *Server) forget(w http.ResponseWriter, r *http.Request) {
	s.bulk(w, r, "forget", func(ctx context.Context, uuids []string) (int, int, error) {
		ok := 0
		for _, u := range uuids {
			done, err := s.opt.Store.Forget(ctx, u)
			if err != nil {
				return ok, len(uuids) - ok, err
			}
			if done {
				ok++
			}
		}
		return ok, len(uuids) - ok, nil
	})
}

// bulk confirms, then applies a retry or forget to the target's failed
// jobs through package laravel's queue:retry / queue:forget operations.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request, action string, apply func(ctx context.Context, uuids []string) (ok, failed int, err error)) {
	t, err := parseTarget(r)
	if err != nil {
		http.Error(w, s.clean(err.Error()), http.StatusBadRequest)
		return
	}
	ids := s.resolve(t)
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
	defer cancel()
	if r.PostForm.Get("confirm") != "yes" {
		s.page(func(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
			v.Title, v.Nav = "Confirm "+action, "failed"
			d := confirmData{Action: action, Target: t, Count: len(ids)}
			preview := ids[:min(len(ids), 20)]
			rows, err := s.snap.Failed().Page(ctx, 1<<62, preview, "", 0, len(preview))
			if err != nil {
				return "", err
			}
			for i := range rows {
				rows[i].Payload, rows[i].Exception = nil, ""
			}
			d.Preview = rows
			v.Data = d
			return "confirm", nil
		})(w, r)
		return
	}
	uuids, err := s.snap.Failed().UUIDs(ctx, ids)
	if err != nil {
		http.Error(w, s.clean(err.Error()), http.StatusInternalServerError)
		return
	}
	var list []string
	var done []int64
	for _, id := range ids {
		if u := uuids[id]; u != "" {
			list = append(list, u)
			done = append(done, id)
		}
	}
	ok, failed, err := apply(ctx, list)
	failed += len(ids) - len(list) // gone meanwhile
	s.snap.ForgetFailed(done)
	s.snap.Kick()
	if err != nil {
		http.Error(w, s.clean(err.Error()), http.StatusInternalServerError)
		return
	}
	key := map[string]string{"retry": "retried", "forget": "forgotten"}[action]
	http.Redirect(w, r, "/failed?"+url.Values{key: {strconv.Itoa(ok)}, "errors": {strconv.Itoa(failed)}}.Encode(), http.StatusSeeOther)
}

func (s *Server) pause(w http.ResponseWriter, r *http.Request) { s.setPause(w, r, true) }

func (s *Server) resume(w http.ResponseWriter, r *http.Request) { s.setPause(w, r, false) }

func (s *Server) setPause(w http.ResponseWriter, r *http.Request, on bool) {
	scope, target := r.PostFormValue("scope"), r.PostFormValue("target")
	ctx, cancel := requestCtx(r)
	defer cancel()
	var err error
	if on {
		err = s.opt.Fleet.SetPause(ctx, scope, target, s.now())
	} else if scope != fleet.ScopeWorker && scope != fleet.ScopeQueue {
		err = fleet.ErrBadScope
	} else {
		err = s.opt.Fleet.ClearPause(ctx, scope, target)
	}
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, fleet.ErrBadScope) {
			status = http.StatusBadRequest
		}
		http.Error(w, s.clean(err.Error()), status)
		return
	}
	s.snap.Kick()
	key := "resumed"
	if on {
		key = "paused"
	}
	http.Redirect(w, r, "/control?"+key+"=1", http.StatusSeeOther)
}
