package pulse

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stream writes batches to Pulse's Redis ingest stream as RedisIngest
// does: one XADD per entry, its "data" field the PHP-serialized
// Laravel\Pulse\Entry, in one pipeline. `php artisan pulse:work` moves
// them into Pulse's tables with PHP's own storage.
type Stream struct {
	rdb  redis.UniversalClient
	key  string
	keep Keep
	now  func() time.Time
}

// NewStream writes to Settings.Stream on rdb, a client on the app's
// pulse.ingest.redis.connection. The key carries the global Redis prefix
// and no other: Pulse sends raw commands, which bypass the connection's
// prefix.
func NewStream(rdb redis.UniversalClient, s Settings, now func() time.Time) *Stream {
	if now == nil {
		now = time.Now
	}
	return &Stream{rdb: rdb, key: s.Stream, keep: s.StreamKeep, now: now}
}

// Key is the stream's key.
func (s *Stream) Key() string { return s.key }

// Ingest adds the batch to the stream in one pipeline.
func (s *Stream) Ingest(ctx context.Context, entries []Entry) error {
	values := make([][]byte, len(entries))
	for i, e := range entries {
		b, err := e.Serialized()
		if err != nil {
			return err
		}
		values[i] = b
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, v := range values {
			p.XAdd(ctx, &redis.XAddArgs{Stream: s.key, ID: "*", Values: []any{"data", v}})
		}
		return nil
	})
	return err
}

// Trim is RedisIngest::trim: XTRIM MAXLEN ~ n when keep is a count, else
// MINID ~ (now - keep) in ms.
func (s *Stream) Trim(ctx context.Context) error {
	if s.keep.MaxLen > 0 || s.keep.Age == 0 {
		return s.rdb.Do(ctx, "XTRIM", s.key, "MAXLEN", "~", strconv.FormatInt(s.keep.MaxLen, 10)).Err()
	}
	minID := s.now().Add(-s.keep.Age).UnixMilli()
	return s.rdb.Do(ctx, "XTRIM", s.key, "MINID", "~", strconv.FormatInt(minID, 10)).Err()
}
