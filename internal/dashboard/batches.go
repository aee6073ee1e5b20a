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
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
)

// The batches pages: Laravel's job batches (job_batches) as Horizon lists
// them (DatabaseBatchRepository::get: by id, newest first, a page at a
// time), one batch with its failed jobs, and two changes, each after a
// confirmation page: cancel (Batch::cancel()) and retry the batch's
// failed jobs (`php artisan queue:retry-batch`: queue:retry of each of
// its failed_job_ids). Reads go through the store's jobqueue.Batches.

// batchesPage is how many batches a page lists; batchFailedShown how many
// failed jobs of a batch its page lists.
const (
	batchesPage      = 50
	batchFailedShown = 100
)

type batchesData struct {
	Rows []batchRow
	Next string // before= of the next page
	Err  string
}

// batchRow is a batch as the pages show it, with Laravel's Batch
// accessors: processedJobs(), progress(), finished(), cancelled().
type batchRow struct {
	jobqueue.Batch
	Processed int64
	Progress  int // percent
	State     string
	Created   time.Time
	Ended     *time.Time // finished or cancelled
}

func (s *Server) toBatchRow(b jobqueue.Batch) batchRow {
	r := batchRow{Batch: b, Processed: b.TotalJobs - b.PendingJobs, Created: time.Unix(b.CreatedAt, 0)}
	if b.TotalJobs > 0 {
		r.Progress = int((float64(r.Processed)/float64(b.TotalJobs))*100 + 0.5)
	}
	switch {
	case b.Cancelled():
		r.State = "cancelled"
	case b.Finished():
		r.State = "finished"
	default:
		r.State = "pending"
	}
	if b.FinishedAt != nil {
		t := time.Unix(*b.FinishedAt, 0)
		r.Ended = &t
	}
	if s.opt.HidePayloads && r.Name != "" {
		r.Name = "(hidden)" // a name the app gave: it may name a person
	}
	return r
}

// errConflict refuses a change the batch's state does not allow.
var errConflict = errors.New("refused")

func (s *Server) batches(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Batches", "batches"
	d := batchesData{}
	v.Data = &d
	ctx, cancel := requestCtx(r)
	defer cancel()
	list, err := s.opt.Store.ListBatches(ctx, r.URL.Query().Get("before"), batchesPage+1)
	if err != nil {
		d.Err = s.clean(err.Error()) + " (the job_batches table: php artisan queue:batches-table && php artisan migrate, or laraworker tables)"
		return "batches", nil
	}
	if len(list) > batchesPage {
		list = list[:batchesPage]
		d.Next = list[batchesPage-1].ID
	}
	for _, b := range list {
		d.Rows = append(d.Rows, s.toBatchRow(b))
	}
	return "batches", nil
}

type batchData struct {
	Row           batchRow
	AllowFailures bool
	Failed        []batchFailed
	// FailedMore counts failed job ids not listed (past batchFailedShown).
	FailedMore int
}

// batchFailed is one of the batch's failed_job_ids: the failed_jobs row
// when it is still there (ID 0 when it was retried or forgotten).
type batchFailed struct {
	UUID string
	Row  *snapshot.FailedRow
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	b, err := s.findBatch(r, r.PathValue("id"))
	if err != nil {
		return "", err
	}
	v.Title, v.Nav = "Batch "+b.ID, "batches"
	d := batchData{Row: s.toBatchRow(b)}
	if o, err := bridgeproto.ReadBatchOptions(b.Options); err == nil {
		d.AllowFailures = o.AllowFailures
	}
	uuids := b.FailedJobIDs
	if len(uuids) > batchFailedShown {
		d.FailedMore = len(uuids) - batchFailedShown
		uuids = uuids[:batchFailedShown]
	}
	ctx, cancel := requestCtx(r)
	defer cancel()
	rows, err := s.snap.Failed().ByUUIDs(ctx, uuids)
	if err != nil {
		return "", err
	}
	for _, u := range uuids {
		f := batchFailed{UUID: u}
		if row, ok := rows[u]; ok {
			row.Exception = exceptionClass(row.Exception) // the list shows the class; the job's page the rest
			row.Payload = nil
			f.Row = &row
		}
		d.Failed = append(d.Failed, f)
	}
	v.Data = d
	return "batch", nil
}

// findBatch reads the batch a page or form names; a missing one is 404.
func (s *Server) findBatch(r *http.Request, id string) (jobqueue.Batch, error) {
	if id == "" || len(id) > 64 {
		return jobqueue.Batch{}, fmt.Errorf("%w: not a batch id", errNotFound)
	}
	ctx, cancel := requestCtx(r)
	defer cancel()
	b, err := s.opt.Store.FindBatch(ctx, id)
	if errors.Is(err, jobqueue.ErrBatchNotFound) {
		return b, fmt.Errorf("%w: no batch %s in job_batches (pruned?)", errNotFound, id)
	}
	return b, err
}

// batchConfirmData is the confirmation page of a batch's cancel or retry.
type batchConfirmData struct {
	Action string // "cancel" or "retry"
	Row    batchRow
	Count  int // failed jobs to retry
}

func (s *Server) cancelBatch(w http.ResponseWriter, r *http.Request) {
	s.batchChange(w, r, "cancel", func(ctx context.Context, b jobqueue.Batch) (url.Values, error) {
		if b.Cancelled() || b.Finished() {
			return nil, fmt.Errorf("%w: batch %s has %s already: there is nothing to cancel", errConflict, b.ID, map[bool]string{true: "been cancelled", false: "finished"}[b.Cancelled()])
		}
		if err := s.opt.Store.CancelBatch(ctx, b.ID); err != nil {
			return nil, err
		}
		return url.Values{"cancelled": {"1"}}, nil
	})
}

func (s *Server) retryBatch(w http.ResponseWriter, r *http.Request) {
	s.batchChange(w, r, "retry", func(ctx context.Context, b jobqueue.Batch) (url.Values, error) {
		uuids := b.FailedJobIDs[:min(len(b.FailedJobIDs), maxBulk)]
		results, err := s.opt.Store.Retry(ctx, uuids, s.opt.RetryHook)
		ok, gone := 0, []int64{}
		for _, res := range results {
			if res.Err == nil {
				ok++
				gone = append(gone, res.Failed.ID)
			} else {
				s.opt.Logger.Warn().Str("uuid", res.Failed.UUID).Str("batch", b.ID).Str("error", s.clean(res.Err.Error())).Msg("dashboard batch retry failed")
			}
		}
		s.snap.ForgetFailed(gone)
		if err != nil {
			return nil, err
		}
		return url.Values{"batchretried": {strconv.Itoa(ok)}, "errors": {strconv.Itoa(len(uuids) - ok)}}, nil
	})
}

// batchChange confirms, then applies a change to the batch the form
// names, and sends the browser back to the batch's page.
func (s *Server) batchChange(w http.ResponseWriter, r *http.Request, action string, apply func(ctx context.Context, b jobqueue.Batch) (url.Values, error)) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, s.clean(err.Error()), http.StatusBadRequest)
		return
	}
	b, err := s.findBatch(r, r.PostForm.Get("batch"))
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, errNotFound) {
			status = http.StatusNotFound
		}
		http.Error(w, s.clean(err.Error()), status)
		return
	}
	if action == "retry" && len(b.FailedJobIDs) == 0 {
		http.Error(w, "The given batch does not contain any failed jobs.", http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		s.page(func(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
			v.Title, v.Nav = "Confirm "+action, "batches"
			v.Data = batchConfirmData{Action: action, Row: s.toBatchRow(b), Count: min(len(b.FailedJobIDs), maxBulk)}
			return "batchconfirm", nil
		})(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
	defer cancel()
	result, err := apply(ctx, b)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, errConflict) {
			status = http.StatusConflict
		}
		http.Error(w, s.clean(err.Error()), status)
		return
	}
	s.snap.Kick()
	http.Redirect(w, r, "/batches/"+url.PathEscape(b.ID)+"?"+result.Encode(), http.StatusSeeOther)
}
