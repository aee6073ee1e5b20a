package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database"
)

// phpOnlyClass is a job class laraworker has no handler for: in the
// shared-queue workload it stands for the jobs PHP workers keep handling.
// The PHP copy of the app gets the class, so a PHP worker beside (continuous
// mode) can run it.
const phpOnlyClass = `App\Jobs\BenchPhpOnlyJob`

// sharedPHP drains Go jobs queued behind a backlog of PHP-only jobs on the
// same queue, against the same Go jobs alone; the drain ends when the Go
// jobs are done and the backlog must be there untouched.
func (b *runner) sharedPHP(rep *report, ct contender) error {
	n, backlog := b.c.Int("shared-jobs"), b.c.Int("php-backlog")
	w := &workloadResult{Workload: wlSharedPHP, Contender: ct.name, Index: b.indexLabel(),
		Setup:    fmt.Sprintf("%d Go jobs queued behind %d PHP-only jobs (%s) on the same queue", n, backlog, phpOnlyClass),
		Baseline: fmt.Sprintf("the same %d Go jobs alone", n)}
	php, err := newJobTemplateFor(phpOnlyClass)
	if err != nil {
		return err
	}
	if err := b.applyIndex(); err != nil {
		return err
	}
	for range b.c.Int("rounds") {
		base, err := b.measureDrain(ct, n)
		if err != nil {
			return fmt.Errorf("alone: %w", err)
		}
		load, err := b.drainBehindBacklog(ct, n, php, backlog)
		if err != nil {
			return fmt.Errorf("behind the backlog: %w", err)
		}
		w.add(load, base)
		b.progressRound(w)
	}
	rep.Workloads = append(rep.Workloads, w)
	return b.reset()
}

func (b *runner) drainBehindBacklog(ct contender, n int, php jobTemplate, backlog int) (drainMeasure, error) {
	ctx := b.c.Context
	if err := b.reset(); err != nil {
		return drainMeasure{}, err
	}
	if err := pushTemplate(ctx, b.q, php, backlog); err != nil {
		return drainMeasure{}, err
	}
	base, err := b.emptyRun(ct)
	if err != nil {
		return drainMeasure{}, err
	}
	if err := pushTemplate(ctx, b.q, b.jobs, n); err != nil {
		return drainMeasure{}, err
	}
	m, err := b.drainPushed(ct, n, base, backlog, b.c.Duration("drain-time"))
	if err != nil {
		return m, err
	}
	return m, checkBacklog(ctx, b.q, phpOnlyClass, backlog)
}

// pushTemplate pushes n copies of the template (each with its own uuid) in
// bulk on queue default, as Queue::bulk would.
func pushTemplate(ctx context.Context, q *database.Queue, t jobTemplate, n int) error {
	const perCall = 5000
	var items []jobqueue.PushItem
	for done := 0; done < n; done += perCall {
		var err error
		if items, err = t.pushItems(items, min(perCall, n-done)); err != nil {
			return err
		}
		if err := q.PushMany(ctx, items); err != nil {
			return err
		}
	}
	return nil
}

// checkBacklog verifies that the n jobs of class pushed before are all in
// the table and that none was touched: never reserved, no attempt. Rows of
// other classes (Go jobs a drain cut by --drain-time left) do not count.
func checkBacklog(ctx context.Context, q *database.Queue, class string, n int) error {
	d := q.Dialect()
	var rows, pristine int
	pattern := `%"displayName":"` + strings.ReplaceAll(class, `\`, `\\`) + `"%`
	query := d.Rebind(fmt.Sprintf("select count(*), coalesce(sum(case when %s is null and %s = 0 then 1 else 0 end), 0) from %s where %s like ? escape '!'",
		d.Quote("reserved_at"), d.Quote("attempts"), d.Quote(q.Config().JobsTable), d.Quote("payload")))
	if err := q.DB().QueryRowContext(ctx, query, strings.ReplaceAll(pattern, "_", "!_")).Scan(&rows, &pristine); err != nil {
		return err
	}
	switch {
	case rows != n:
		return fmt.Errorf("%d %s jobs in the table after the drain, want %d", rows, class, n)
	case pristine != n:
		return fmt.Errorf("%d of the %d %s jobs were reserved or attempted: the drain touched jobs that are not its own", n-pristine, n, class)
	}
	return nil
}
