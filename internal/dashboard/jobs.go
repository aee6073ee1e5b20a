package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/laravel/payload"
)

// The jobs pages: pending jobs by queue and class, the delayed schedule,
// the jobs in claim order, and one job decoded.

type jobsData struct {
	Queue    string
	Class    string
	State    string
	Tag      string
	Rows     []snapshot.JobRow
	Next     string // after= of the next page; "": none
	Classes  []snapshot.ClassCounts
	Schedule []snapshot.Bucket
	NextDue  []snapshot.DueJob
	Queues   []string
	States   []string
	// stranded are the queues whose ready jobs wait for nobody, as of
	// now (stranded.go).
	stranded map[string]bool
	now      time.Time
}

// Stranded says whether a listed job is a ready job stranded on a queue
// no live worker watches.
func (d jobsData) Stranded(r snapshot.JobRow) bool { return strandedJob(d.stranded, r, d.now) }

// StrandedTitle explains the stranded mark.
func (jobsData) StrandedTitle() string { return strandedTitle }

const pageSize = 50

func (s *Server) jobs(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav = "Jobs", "jobs"
	q := r.URL.Query()
	f := snapshot.JobFilter{Queue: q.Get("queue"), Class: q.Get("class"), State: q.Get("state")}
	if !s.opt.HidePayloads {
		f.Tag = q.Get("tag")
	}
	if f.State != "" && !slices.Contains(snapshot.JobStates, f.State) {
		return "", fmt.Errorf("%w: state must be ready, delayed or reserved", errNotFound)
	}
	ctx, cancel := requestCtx(r)
	defer cancel()
	rows, next, err := s.snap.Jobs().List(ctx, f, q.Get("after"), pageSize)
	if err != nil {
		return "", err
	}
	d := jobsData{Queue: f.Queue, Class: f.Class, State: f.State, Tag: f.Tag, Rows: rows, Next: next,
		Schedule: v.Sum.Schedule, NextDue: v.Sum.NextDue, States: snapshot.JobStates,
		stranded: strandedQueues(v.Sum, v.Now), now: v.Now}
	for _, c := range v.Sum.Classes {
		if (f.Queue == "" || c.Queue == f.Queue) && (f.Class == "" || c.Class == f.Class) {
			d.Classes = append(d.Classes, c)
		}
	}
	d.Queues = s.queues.of(v.Sum)
	v.Data = d
	return "jobs", nil
}

type jobData struct {
	Row     snapshot.JobRow
	Decoded string // indented JSON, as `laraworker inspect` prints it
	Error   string
}

// payloadTags are the tags a job page shows: read from the whole
// payload, so a job the caches have not tagged (yet) shows them too.
func (s *Server) payloadTags(raw []byte) []string {
	if s.opt.HidePayloads {
		return nil
	}
	return snapshot.TagsOf(raw)
}

func (s *Server) job(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	ref := snapshot.JobRef{ID: r.PathValue("id"), Queue: r.URL.Query().Get("queue")}
	ctx, cancel := requestCtx(r)
	defer cancel()
	row, err := s.snap.Jobs().Job(ctx, ref)
	if err != nil {
		return "", err
	}
	v.Title, v.Nav = "Job "+ref.ID, "jobs"
	d := jobData{Row: row}
	d.Row.Tags = s.payloadTags(row.Payload)
	if !s.opt.HidePayloads {
		d.Decoded, d.Error = s.decode(row.Payload)
	}
	d.Row.Payload = nil
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
