package redisproto

import (
	"context"
	"fmt"
)

// Size is RedisQueue::size: ready + delayed + reserved jobs (running ones
// count), what queue:monitor shows.
func (q *Queue) Size(ctx context.Context, queue string) (int64, error) {
	k := q.keys(queue)
	if k.err != nil {
		return 0, k.err
	}
	n, err := sizeScript.Run(ctx, q.rdb, []string{k.Ready, k.Delayed, k.Reserved}).Int64()
	return n, q.wrap(err)
}

// Counts are a queue's jobs by state, read at one instant.
type Counts struct {
	// Ready is the list's length (12.19+ pendingSize).
	Ready int64
	// Delayed is the delayed set's size (delayedSize); DelayedDue of them
	// are due, and move to the list at the next pop.
	Delayed    int64
	DelayedDue int64
	// Reserved is the reserved set's size (reservedSize); ReservedExpired
	// of them are past retry_after, and move back at the next pop.
	Reserved        int64
	ReservedExpired int64
}

// Poppable is how many jobs the next pop could find: the list and what
// its migrations would add.
func (c Counts) Poppable() int64 { return c.Ready + c.DelayedDue + c.ReservedExpired }

// Counts reads a queue's sizes without changing anything.
func (q *Queue) Counts(ctx context.Context, queue string) (Counts, error) {
	k := q.keys(queue)
	if k.err != nil {
		return Counts{}, k.err
	}
	v, err := countsScript.Run(ctx, q.rdb, []string{k.Ready, k.Delayed, k.Reserved}, q.now().Unix()).Int64Slice()
	if err != nil {
		return Counts{}, q.wrap(err)
	}
	if len(v) != 5 {
		return Counts{}, q.wrap(fmt.Errorf("unexpected counts reply %v", v))
	}
	return Counts{Ready: v[0], Delayed: v[1], DelayedDue: v[2], Reserved: v[3], ReservedExpired: v[4]}, nil
}

// Clear is RedisQueue::clear (queue:clear): it deletes the queue's four
// keys, the reservations of running jobs included (their later deletes
// find nothing), and returns how many jobs there were.
func (q *Queue) Clear(ctx context.Context, queue string) (int64, error) {
	k := q.keys(queue)
	if k.err != nil {
		return 0, k.err
	}
	n, err := clearScript.Run(ctx, q.rdb, k.all()).Int64()
	return n, q.wrap(err)
}
