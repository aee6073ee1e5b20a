package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/fleet"
	"github.com/laraworker/laraworker/payload"
)

// view is what every page template gets.
type view struct {
	Title        string
	Nav          string
	CSRF         string
	ReadOnly     bool
	HidePayloads bool
	Sum          *Summary
	Now          time.Time
	Version      string
	Notice       string
	Data         any
}

// pageFunc renders one page: the template name and its data.
type pageFunc func(w http.ResponseWriter, r *http.Request, v *view) (string, error)

// errNotFound renders as 404.
var errNotFound = errors.New("not found")

// errRedirected: the page function answered with a redirect.
var errRedirected = errors.New("redirected")

func (s *Server) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := &view{CSRF: s.csrfToken(w, r), ReadOnly: s.opt.ReadOnly, HidePayloads: s.opt.HidePayloads,
			Sum: s.snap.current(), Now: s.now(), Version: s.opt.Version, Notice: notice(r.URL.Query())}
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
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			v.Title, v.Data = "Error", s.clean(err.Error())
			var buf bytes.Buffer
			_ = s.pages["error"].ExecuteTemplate(&buf, "layout", v)
			_, _ = w.Write(s.scrub(buf.Bytes()))
			return
		}
		var buf bytes.Buffer
		if err := s.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
			s.opt.Logger.Error().Err(err).Str("page", name).Msg("dashboard template failed")
			http.Error(w, "template error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(s.scrub(buf.Bytes()))
	}
}

// scrub removes every secret from a rendered page, as written and as
// HTML or JSON would escape it: a safety net under clean, for text of
// the tables (exceptions, payloads, class names) that reaches a page.
func (s *Server) scrub(page []byte) []byte {
	for _, sec := range append(s.opt.Secrets, s.opt.Auth.Secrets()...) {
		if sec == "" {
			continue
		}
		js, _ := json.Marshal(sec)
		for _, form := range []string{sec, template.HTMLEscapeString(sec), string(js[1 : len(js)-1]), template.JSEscapeString(sec)} {
			page = bytes.ReplaceAll(page, []byte(form), []byte("[redacted]"))
		}
	}
	return page
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

// --- overview ---

type overviewData struct {
	Queues  []queueRow
	Workers []workerRow
	// ShowStopped lists stopped workers too (?stopped=1); Stopped counts
	// them, shown or not.
	ShowStopped bool
	Stopped     int
	Self        string // this page's URL, for the live refresh
}

type queueRow struct {
	QueueCounts
	Failed int64
	Paused bool
}

type workerRow struct {
	fleet.WorkerRow
	State    string // running, busy, paused, stopped, lost (workerState)
	LastSeen time.Time
	Started  time.Time
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Overview", "overview"
	d := overviewData{ShowStopped: r.URL.Query().Get("stopped") == "1"}
	d.Self = link("/", "stopped", map[bool]string{true: "1"}[d.ShowStopped])
	for _, wr := range workerRows(v.Sum, v.Now) {
		if wr.State == "stopped" {
			d.Stopped++
			if !d.ShowStopped {
				continue
			}
		}
		d.Workers = append(d.Workers, wr)
	}
	failed := map[string]int64{}
	for _, f := range v.Sum.FailedByQueue {
		failed[f.Name] = f.Count
	}
	paused := pausedQueues(v.Sum)
	seen := map[string]bool{}
	for _, q := range v.Sum.Queues {
		d.Queues = append(d.Queues, queueRow{QueueCounts: q, Failed: failed[q.Queue], Paused: paused[q.Queue]})
		seen[q.Queue] = true
	}
	for name, n := range failed {
		if !seen[name] {
			d.Queues = append(d.Queues, queueRow{QueueCounts: QueueCounts{Queue: name}, Failed: n, Paused: paused[name]})
		}
	}
	slices.SortFunc(d.Queues, func(a, b queueRow) int { return strings.Compare(a.Queue, b.Queue) })
	v.Data = d
	return "overview", nil
}

func pausedQueues(sum *Summary) map[string]bool {
	out := map[string]bool{}
	for _, p := range sum.Pauses {
		if p.Scope == fleet.ScopeQueue {
			out[p.Target] = true
		}
	}
	return out
}

// aliveFor is how long after its last heartbeat a worker counts as lost.
const aliveFor = 30 * time.Second

func workerRows(sum *Summary, now time.Time) []workerRow {
	held := heldJobs(sum)
	var out []workerRow
	for _, wr := range sum.Workers {
		out = append(out, workerRow{WorkerRow: wr, State: workerState(wr, held, now),
			LastSeen: time.Unix(wr.LastSeenAt, 0), Started: time.Unix(wr.StartedAt, 0)})
	}
	return out
}

// workerState is stopped, lost (no heartbeat for aliveFor), paused or
// running; and busy for a PHP worker silent past aliveFor whose row names
// a job still reserved within retry_after: PHP runs one job at a time and
// writes nothing until it ends, so a long job is not a lost worker. A Go
// worker beats while its jobs run: silent, it is lost.
func workerState(wr fleet.WorkerRow, held map[int64]bool, now time.Time) string {
	switch {
	case wr.StoppedAt != nil:
		return "stopped"
	case now.Sub(time.Unix(wr.LastSeenAt, 0)) <= aliveFor && wr.Paused:
		return "paused"
	case now.Sub(time.Unix(wr.LastSeenAt, 0)) <= aliveFor:
		return "running"
	case wr.Kind == fleet.KindPHP && len(wr.Running) == 1 && held[wr.Running[0].ID]:
		return "busy"
	}
	return "lost"
}

// alive is whether a worker in state counts as alive (the fleet gauge).
func alive(state string) bool { return state == "running" || state == "busy" || state == "paused" }

// heldJobs are the ids of the jobs reserved within retry_after.
func heldJobs(sum *Summary) map[int64]bool {
	held := make(map[int64]bool, len(sum.Reserved))
	for _, j := range sum.Reserved {
		if !j.Expired {
			held[j.ID] = true
		}
	}
	return held
}

// --- running now ---

type runningRow struct {
	ReservedJob
	RunningFor time.Duration
	Worker     string // the worker whose row names it (Go, or PHP with the bridge's recorder), or "unknown"
}

func (s *Server) running(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Running now", "running"
	holders := map[int64]string{}
	for _, wr := range v.Sum.Workers {
		if wr.StoppedAt != nil {
			continue
		}
		for _, j := range wr.Running {
			holders[j.ID] = workerLabel(wr)
		}
	}
	var rows []runningRow
	for _, j := range v.Sum.Reserved {
		holder := holders[j.ID]
		if holder == "" {
			holder = "unknown"
		}
		rows = append(rows, runningRow{ReservedJob: j, RunningFor: v.Sum.AsOf.Sub(j.ReservedAt), Worker: holder})
	}
	v.Data = rows
	return "running", nil
}

// workerLabel names a worker as the pages do: "name (host:pid)".
func workerLabel(wr fleet.WorkerRow) string {
	return wr.Name + " (" + wr.Host + ":" + strconv.FormatInt(wr.PID, 10) + ")"
}

// --- jobs ---

type jobsData struct {
	Queue    string
	Class    string
	State    string
	Tag      string
	Rows     []JobRow
	Next     int64 // after= of the next page; 0: none
	Classes  []ClassCounts
	Schedule []Bucket
	NextDue  []DueJob
	Queues   []string
	States   []string
}

const pageSize = 50

func (s *Server) jobs(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Jobs", "jobs"
	q := r.URL.Query()
	f := jobFilter{queue: q.Get("queue"), class: q.Get("class"), state: q.Get("state")}
	if !s.opt.HidePayloads {
		f.tag = q.Get("tag")
	}
	if !slices.Contains([]string{"", "ready", "delayed", "reserved"}, f.state) {
		return "", fmt.Errorf("%w: state must be ready, delayed or reserved", errNotFound)
	}
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	ids, more := s.snap.jobs.selectIDs(f, after, pageSize, v.Now.Unix())
	ctx, cancel := requestCtx(r)
	defer cancel()
	rows, err := s.snap.src.jobRows(ctx, ids)
	if err != nil {
		return "", err
	}
	tags := s.snap.jobs.tagsOfRows(ids)
	for i := range rows {
		rows[i].Tags = tags[rows[i].ID]
	}
	d := jobsData{Queue: f.queue, Class: f.class, State: f.state, Tag: f.tag, Rows: rows, Schedule: v.Sum.Schedule, NextDue: v.Sum.NextDue, States: []string{"ready", "delayed", "reserved"}}
	if more && len(ids) > 0 {
		d.Next = ids[len(ids)-1]
	}
	for _, c := range v.Sum.Classes {
		if (f.queue == "" || c.Queue == f.queue) && (f.class == "" || c.Class == f.class) {
			d.Classes = append(d.Classes, c)
		}
	}
	for _, qc := range v.Sum.Queues {
		d.Queues = append(d.Queues, qc.Queue)
	}
	v.Data = d
	return "jobs", nil
}

type jobData struct {
	Row     JobRow
	Decoded string // indented JSON, as `laraworker inspect` prints it
	Error   string
}

// payloadTags are the tags a job page shows: read from the whole
// payload, so a job the caches have not tagged (yet) shows them too.
func (s *Server) payloadTags(raw []byte) []string {
	if s.opt.HidePayloads {
		return nil
	}
	return tagsOf(raw)
}

func (s *Server) job(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return "", errNotFound
	}
	ctx, cancel := requestCtx(r)
	defer cancel()
	row, ok, err := s.snap.src.jobByID(ctx, id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: job %d is not in the jobs table any more (done, failed or released)", errNotFound, id)
	}
	v.Title, v.Nav = fmt.Sprintf("Job %d", id), "jobs"
	d := jobData{Row: row}
	d.Row.Tags = s.payloadTags(row.Payload)
	if !s.opt.HidePayloads {
		d.Decoded, d.Error = s.decode(row.Payload)
	}
	row.Payload = nil
	v.Data = d
	return "job", nil
}

// decode renders a payload as `laraworker inspect` does: the payload's
// fields and the command's properties as readable JSON.
func (s *Server) decode(raw []byte) (string, string) {
	p, err := payload.Parse(raw)
	if err != nil {
		return "", s.clean(err.Error())
	}
	doc := map[string]any{"kind": "payload", "payload": json.RawMessage(raw)}
	var problem string
	if p.Data.Command != "" {
		cmd, err := payload.DecodeCommand(p, s.opt.Encrypter)
		if err != nil {
			problem = s.clean(err.Error())
		} else if tree, err := payload.ReadableJSON(cmd.Object); err != nil {
			problem = s.clean(err.Error())
		} else {
			doc["encrypted"] = cmd.Encrypted
			doc["command"] = json.RawMessage(tree)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // html/template escapes on output
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return "", s.clean(err.Error())
	}
	return s.clean(buf.String()), problem
}

// --- failed ---

type failedData struct {
	Class, Queue, Text, From, To string
	Tag                          string
	Rows                         []FailedRow
	Next                         int64 // before= of the next page
	ScannedTo                    int64 // a text search stopped here
	Classes                      []Named
	QueuesList                   []Named
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
	f := failedFilter{class: d.Class, queue: d.Queue, tag: d.Tag}
	var err error
	if f.from, err = s.parseDay(d.From, 0); err != nil {
		return "", err
	}
	if f.to, err = s.parseDay(d.To, 24*time.Hour); err != nil {
		return "", err
	}
	before, _ := strconv.ParseInt(q.Get("before"), 10, 64)
	ctx, cancel := requestCtx(r)
	defer cancel()
	if before <= 0 {
		top, err := s.snap.src.maxFailedID(ctx)
		if err != nil {
			return "", err
		}
		before = top + 1
	}
	var ids []int64
	if f.any() {
		ids, _ = s.snap.failed.selectIDs(f, before, textScanIDs)
		if d.Text == "" && len(ids) > pageSize {
			ids = ids[:pageSize+1]
		}
	}
	rows, err := s.snap.src.failedPage(ctx, before, ids, d.Text, textScanIDs, pageSize+1)
	if err != nil {
		return "", err
	}
	if len(rows) > pageSize {
		rows = rows[:pageSize]
		d.Next = rows[pageSize-1].ID
	} else if d.Text != "" {
		// The search read a bounded window: offer to go on below it.
		low := before - textScanIDs
		if f.any() && len(ids) > 0 {
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
	tags := s.snap.failed.tagsOfRows(listed)
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
	t, err := time.ParseInLocation(time.DateOnly, v, s.snap.src.loc)
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
	Row     FailedRow
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
	row, ok, err := s.snap.src.failedByID(ctx, id)
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
		rows, err := s.snap.src.failedByUUIDs(ctx, []string{uuid})
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

// --- control ---

type controlData struct {
	Workers []workerRow
	Queues  []controlQueue
}

type controlQueue struct {
	Name   string
	Paused bool
}

func (s *Server) control(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Control", "control"
	d := controlData{}
	for _, wr := range workerRows(v.Sum, v.Now) {
		if wr.Kind == fleet.KindGo && wr.State != "stopped" {
			d.Workers = append(d.Workers, wr)
		}
	}
	paused := pausedQueues(v.Sum)
	names := map[string]bool{}
	for _, q := range v.Sum.Queues {
		names[q.Queue] = true
	}
	for _, wr := range d.Workers {
		for _, q := range wr.Queues {
			names[q] = true
		}
	}
	for q := range paused {
		names[q] = true
	}
	for n := range names {
		d.Queues = append(d.Queues, controlQueue{Name: n, Paused: paused[n]})
	}
	slices.SortFunc(d.Queues, func(a, b controlQueue) int { return strings.Compare(a.Name, b.Name) })
	v.Data = d
	return "control", nil
}
