package horizon

import (
	"context"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// retried is RedisJobRepository::updateRetryInformationOnParent for the
// jobs that are retries of another (a payload with "retry_of", which
// Horizon's Retry button sets): the parent's retried_by entry for this
// job gets the status ("completed" or "failed").
func (r *Recorder) retried(ctx context.Context, ds []decoded, status string) error {
	for _, d := range ds {
		if d.retryOf == "" {
			continue
		}
		parent := r.key(d.retryOf)
		raw, err := r.rdb.HGet(ctx, parent, "retried_by").Result()
		if err == redis.Nil || raw == "" || raw == "0" {
			continue
		}
		if err != nil {
			return err
		}
		out, err := markRetry(raw, d.id, status)
		if err != nil {
			return err
		}
		if err := r.rdb.HSet(ctx, parent, "retried_by", out).Err(); err != nil {
			return err
		}
	}
	return nil
}

// markRetry is updateRetryStatus: json_decode($retries, true), the entry
// whose id is the job's gets the status (Arr::set), json_encode.
func markRetry(raw, id, status string) (string, error) {
	doc, err := payload.DecodePHPArray([]byte(raw))
	if err != nil || doc.Len() == 0 {
		// json_decode gave null (or an empty array): collect() of it
		// maps to [].
		return "[]", nil
	}
	for i := range doc.Len() {
		entry := doc.Index(i)
		if got, ok := entry.Get("id").Str(); ok && got == id {
			if err := entry.SetString("status", status); err != nil {
				return "", err
			}
		}
	}
	out, err := doc.EncodePHP()
	return string(out), err
}
