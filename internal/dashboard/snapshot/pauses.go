package snapshot

import (
	"context"
	"slices"

	"github.com/laraworker/laraworker/internal/queuepause"
	"github.com/laraworker/laraworker/jobqueue"
)

// laravelPauses reads Laravel's own queue pauses (queue:pause,
// queue:pause --all) for the queues a summary shows: a few cache reads
// per refresh.
type laravelPauses struct {
	cache      jobqueue.Cache
	connection string
}

func (l laravelPauses) summarize(ctx context.Context, sum *Summary, clean func(string) string) {
	if l.cache == nil {
		return
	}
	st, err := queuepause.Read(ctx, l.cache, l.connection, shownQueues(sum))
	if err != nil && ctx.Err() == nil {
		sum.LaravelPauseErr = clean(err.Error())
	}
	sum.LaravelPaused, sum.LaravelPausedAll = st.Queues, st.All
}

// shownQueues are the queues the pages list: those with jobs or failed
// jobs, those the running workers serve and those laraworker pauses.
func shownQueues(sum *Summary) []string {
	out := knownQueues(sum.Workers, sum.Pauses)
	for _, q := range sum.Queues {
		out = append(out, q.Queue)
	}
	for _, f := range sum.FailedByQueue {
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
