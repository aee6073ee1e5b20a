package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
)

// The failed pages: failed_jobs searched by class, queue, date, tag and
// exception text, and one failed job decoded.

type failedData struct {
	Class, Queue, Text, From, To string
	Tag                          string
	Rows                         []snapshot.FailedRow
	Next                         int64 // before= of the next page
	ScannedTo                    int64 // a text search stopped here
	Classes                      []snapshot.Named
	QueuesList                   []snapshot.Named
	CanSearchText                bool
}

// textScanIDs bounds the ids one exception-text search reads.
const textScanIDs = 2000

func (s *Server) failedList(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Failed jobs", "failed"
	q := r.URL.Query()
	d := failedData{Class: q.Get("class"), Queue: q.Get("queue"), Text: q.Get("q"), From: q.Get("from"), To: q.Get("to"),
		Classes: v.Sum.FailedByClass, QueuesList: v.Sum.FailedByQueue, CanSearchText: !s.opt.HidePayloads}
	if s.opt.HidePayloads {
		d.Text = "" // searching hidden text would reveal it
	} else {
		d.Tag = q.Get("tag")
	}
	f := snapshot.FailedFilter{Class: d.Class, Queue: d.Queue, Tag: d.Tag}
	var err error
	if f.From, err = s.parseDay(d.From, 0); err != nil {
		return "", err
	}
	if f.To, err = s.parseDay(d.To, 24*time.Hour); err != nil {
		return "", err
	}
	before, _ := strconv.ParseInt(q.Get("before"), 10, 64)
	ctx, cancel := requestCtx(r)
	defer cancel()
	if before <= 0 {
		top, err := s.snap.Failed().MaxID(ctx)
		if err != nil {
			return "", err
		}
		before = top + 1
	}
	var ids []int64
	if f.Any() {
		ids, _ = s.snap.FailedIDs(f, before, textScanIDs)
		if d.Text == "" && len(ids) > pageSize {
			ids = ids[:pageSize+1]
		}
	}
	rows, err := s.snap.Failed().Page(ctx, before, ids, d.Text, textScanIDs, pageSize+1)
	if err != nil {
		return "", err
	}
	if len(rows) > pageSize {
		rows = rows[:pageSize]
		d.Next = rows[pageSize-1].ID
	} else if d.Text != "" {
		// The search read a bounded window: offer to go on below it.
		low := before - textScanIDs
		if f.Any() && len(ids) > 0 {
			low = ids[len(ids)-1]
		}
		if low > 1 {
			d.ScannedTo = low
		}
	}
	if s.opt.HidePayloads {
		for i := range rows {
			rows[i].Exception = exceptionClass(rows[i].Exception)
			rows[i].Payload = nil
		}
	}
	listed := make([]int64, len(rows))
	for i, r := range rows {
		listed[i] = r.ID
	}
	tags := s.snap.FailedTags(listed)
	for i := range rows {
		rows[i].Tags = tags[rows[i].ID]
	}
	d.Rows = rows
	v.Data = d
	return "failed", nil
}

// parseDay reads a YYYY-MM-DD filter in APP_TIMEZONE, plus add.
func (s *Server) parseDay(v string, add time.Duration) (int64, error) {
	if v == "" {
		return 0, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, v, s.snap.Location())
	if err != nil {
		return 0, fmt.Errorf("%w: dates are YYYY-MM-DD", errNotFound)
	}
	return t.Add(add).Unix(), nil
}

// exceptionClass keeps only the exception's class name (the text before
// the first ": " of its first line), for --hide-payloads.
func exceptionClass(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	name, _, ok := strings.Cut(first, ": ")
	if !ok || strings.ContainsAny(name, " \t") {
		return "(hidden)"
	}
	return name
}

type failedJobData struct {
	Row     snapshot.FailedRow
	Decoded string
	Error   string
}

func (s *Server) failedJob(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return "", errNotFound
	}
	ctx, cancel := requestCtx(r)
	defer cancel()
	row, ok, err := s.snap.Failed().Row(ctx, id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: failed job %d is not in failed_jobs (retried or forgotten)", errNotFound, id)
	}
	v.Title, v.Nav = "Failed job "+row.UUID, "failed"
	d := failedJobData{Row: row}
	d.Row.Tags = s.payloadTags(row.Payload)
	if s.opt.HidePayloads {
		d.Row.Exception = exceptionClass(row.Exception)
	} else {
		d.Decoded, d.Error = s.decode(row.Payload)
		d.Row.Exception = s.clean(row.Exception)
	}
	d.Row.Payload = nil
	v.Data = d
	return "failedjob", nil
}

// failedByUUID sends the browser to the failed job with uuid (the links
// of the recent jobs and batches pages), or says it is gone.
func (s *Server) failedByUUID(w http.ResponseWriter, r *http.Request) {
	s.page(func(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
		uuid := r.PathValue("uuid")
		ctx, cancel := requestCtx(r)
		defer cancel()
		rows, err := s.snap.Failed().ByUUIDs(ctx, []string{uuid})
		if err != nil {
			return "", err
		}
		row, ok := rows[uuid]
		if !ok {
			return "", fmt.Errorf("%w: no failed job %s in failed_jobs (retried, forgotten or pruned)", errNotFound, uuid)
		}
		http.Redirect(w, r, "/failed/"+strconv.FormatInt(row.ID, 10), http.StatusSeeOther)
		return "", errRedirected
	})(w, r)
}
