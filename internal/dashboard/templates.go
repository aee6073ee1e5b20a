package dashboard

import (
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"
)

var pageNames = []string{"overview", "running", "jobs", "job", "failed", "failedjob", "control", "confirm", "login", "error",
	"stats", "recent", "batches", "batch", "batchconfirm"}

func (s *Server) parseTemplates() error {
	funcs := template.FuncMap{
		"ago":      ago,
		"dur":      humanDuration,
		"num":      thousands,
		"ts":       func(t time.Time) string { return t.In(s.snap.Location()).Format(time.DateTime) },
		"join":     strings.Join,
		"short":    short,
		"link":     link,
		"deref":    func(t *time.Time) time.Time { return *t },
		"mb":       func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) },
		"unix":     func(n int64) time.Time { return time.Unix(n, 0) },
		"sub":      func(a, b int) int { return a - b },
		"ms":       shortDuration,
		"derefInt": func(n *int64) int64 { return *n },
		"jobRef":   jobRef,
		"jobLink":  jobLink,
	}
	s.pages = map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		s.pages[name] = t
	}
	return nil
}

// ago says how long before now t was, coarsely.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return humanDuration(now.Sub(t)) + " ago"
}

func humanDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// thousands writes 1234567 as 1,234,567 (any integer type).
func thousands(v any) string {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	default:
		return fmt.Sprint(v)
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func short(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// link builds path?k=v&... from pairs, leaving out empty values.
func link(path string, pairs ...any) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		val := fmt.Sprint(pairs[i+1])
		if val != "" && val != "0" {
			v.Set(fmt.Sprint(pairs[i]), val)
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// jobRef names a pending job: the jobs table's id, or a Redis job's
// payload id.
func jobRef(id int64, jobID string) string {
	if id != 0 {
		return strconv.FormatInt(id, 10)
	}
	return jobID
}

// jobLink is the page of a pending job: by id, or (a Redis job, whose id
// is its payload's) by id and queue.
func jobLink(id int64, jobID, queue string) string {
	if id != 0 {
		return "/jobs/" + strconv.FormatInt(id, 10)
	}
	if jobID == "" {
		return "/jobs"
	}
	return link("/jobs/"+url.PathEscape(jobID), "queue", queue)
}
