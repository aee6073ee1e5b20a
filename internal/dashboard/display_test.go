package dashboard

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// TestQueuesAndJobsAsPeopleReadThem: a queue stays on the Overview and
// Control pages once its last job is gone; Control says "not paused" of a
// queue that is not (not "claimed") and how many Go workers watch it; a
// ready job waiting over a minute on a queue no live worker watches is
// marked stranded, on the Overview and in the jobs list, not shown as an
// ordinary ready job; the workers table has a "given back" column.
func TestQueuesAndJobsAsPeopleReadThem(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	r := newRig(t, q, Options{})
	ctx := context.Background()
	if err := q.PushMany(ctx, []jobqueue.PushItem{
		{Queue: "mail", Payload: fixture(t, "noop", "")},
		{Queue: "orphan", Payload: fixture(t, "scalars", "")},
	}); err != nil {
		t.Fatal(err)
	}
	execSQL(t, q, "update {jobs} set available_at = available_at - 300, created_at = created_at - 300 where queue = 'orphan'")
	now := time.Now().Unix()
	if err := r.fl.UpsertWorker(ctx, fleet.WorkerRow{ID: "go:h:1:1", Kind: fleet.KindGo, Name: "mailer", Host: "h", PID: 1,
		Queues: []string{"mail"}, StartedAt: now, LastSeenAt: now, Done: 5, Returned: 3}); err != nil {
		t.Fatal(err)
	}
	r.refresh(t)

	home := r.get(t, "/", 200)
	if row := rowOf(home, `data-queue="orphan"`); !strings.Contains(row, "stranded: no worker watches it") {
		t.Errorf("the orphan queue's row does not say its job is stranded: %s", row)
	}
	if row := rowOf(home, `data-queue="mail"`); strings.Contains(row, "stranded") {
		t.Errorf("a watched queue is marked stranded: %s", row)
	}
	if !strings.Contains(home, ">given back</th>") || !regexp.MustCompile(`<td class="n returned">3</td>`).MatchString(rowOf(home, `data-worker="go:h:1:1"`)) {
		t.Errorf("no given-back count for the Go worker:\n%s", rowOf(home, `data-worker="go:h:1:1"`))
	}
	jobs := r.get(t, "/jobs?queue=orphan", 200)
	if !strings.Contains(jobs, "stranded: no worker watches orphan") {
		t.Errorf("the jobs list shows the stranded job as an ordinary ready one")
	}
	if mail := r.get(t, "/jobs?queue=mail", 200); strings.Contains(mail, "stranded") {
		t.Errorf("a ready job on a watched queue is marked stranded")
	}
	control := r.get(t, "/control", 200)
	if row := rowOf(control, `data-queue="mail"`); strings.Contains(control, "claimed") || !strings.Contains(row, "not paused") ||
		!strings.Contains(row, `<td class="n watching">1</td>`) {
		t.Errorf("control's row for mail: %s", row)
	}

	// The queues drain: they stay listed, with zeros.
	execSQL(t, q, "delete from {jobs}")
	r.refresh(t)
	home = r.get(t, "/", 200)
	control = r.get(t, "/control", 200)
	for _, name := range []string{"mail", "orphan"} {
		if row := rowOf(home, `data-queue="`+name+`"`); !strings.Contains(row, `<td class="n ready">0</td>`) {
			t.Errorf("overview after the queue %s drained: %q", name, row)
		}
		if !strings.Contains(control, `data-queue="`+name+`"`) {
			t.Errorf("control lost the drained queue %s", name)
		}
	}
	if strings.Contains(home, "stranded") {
		t.Errorf("a drained queue is still marked stranded")
	}
}

// rowOf is the table row of page that holds attr ("" when none).
func rowOf(page, attr string) string {
	i := strings.Index(page, attr)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(page[:i], "<tr")
	end := strings.Index(page[i:], "</tr>")
	if start < 0 || end < 0 {
		return ""
	}
	return page[start : i+end]
}

// TestJobPageShowsCharactersAsTheyAre: the decoded command on a job's
// page shows "&" and "<" as the text has them, not as \u0026 and \u003c.
func TestJobPageShowsCharactersAsTheyAre(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	r := newRig(t, q, Options{})
	raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\Mail`, phpserialize.Public("subject", phpserialize.String("Tom & Jerry <3>"))), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := q.Push(context.Background(), jobqueue.PushItem{Queue: "default", Payload: raw})
	if err != nil {
		t.Fatal(err)
	}
	r.refresh(t)
	page := r.get(t, "/jobs/"+id.String(), 200)
	if !strings.Contains(page, `&#34;subject&#34;: &#34;Tom &amp; Jerry &lt;3&gt;&#34;`) || strings.Contains(page, `\u0026`) || strings.Contains(page, `\u003c`) {
		t.Errorf("the decoded command:\n%s", page[strings.Index(page, `id="decoded"`):])
	}
}
