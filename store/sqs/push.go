package sqs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// preparePush is what the connection's queue makes of a payload before
// it is sent: VaporQueue adds "attempts": 0 (Vapor's connections only).
func (s *Store) preparePush(_ context.Context, raw []byte) ([]byte, error) {
	if !s.q.Config().Vapor {
		return raw, nil
	}
	if _, ok := sqsproto.VaporAttempts(raw); ok {
		return raw, nil
	}
	return sqsproto.SetAttempts(raw, 0)
}

// send is SqsQueue::pushRaw of a prepared payload with the options
// getQueueableOptions gives it (12.27+): on a FIFO queue the job's
// message group and a fresh deduplication id, and no DelaySeconds (FIFO
// queues take none: Laravel 12.30+ drops it). A payload of 1 MiB or more
// goes to the cache with the connection's overflow enabled (13.9+), as
// a pointer body.
func (s *Store) send(ctx context.Context, item jobqueue.PushItem) (string, error) {
	url := s.q.URL(item.Queue)
	opts, err := s.sendOptions(url, item)
	if err != nil {
		return "", err
	}
	body, err := s.overflow(ctx, item.Payload)
	if err != nil {
		return "", err
	}
	return s.q.Send(ctx, url, body, opts)
}

// sendOptions are getQueueableOptions' for a payload Go pushes.
func (s *Store) sendOptions(url string, item jobqueue.PushItem) (sqsproto.SendOptions, error) {
	if !sqsproto.IsFIFO(url) {
		if item.Delay > sqsproto.MaxDelay {
			return sqsproto.SendOptions{}, fmt.Errorf("sqsstore: a delay of %s on %s: SQS delays a message at most 900 s (AWS rejects more, as it does Laravel's push)", item.Delay, url)
		}
		return sqsproto.SendOptions{Delay: item.Delay}, nil
	}
	if item.Delay > 0 {
		s.log.Debug().Str("queue", url).Dur("delay", item.Delay).Msg("a FIFO queue takes no per-message delay: pushed without it, as Laravel 12.30+ does")
	}
	dedup, err := payload.NewUUID()
	if err != nil {
		return sqsproto.SendOptions{}, err
	}
	return sqsproto.SendOptions{GroupID: s.messageGroup(item.Payload, url), DeduplicationID: dedup}, nil
}

// messageGroup is the job's message group as getQueueableOptions reads
// it: the command's messageGroup property (Queueable::onGroup, 12.27+),
// PHP's string of it. A job whose group Go cannot read (none set, a
// messageGroup() method, an encrypted command without the key, a string
// job) goes to the queue's own name, Laravel's group for string jobs: a
// job pushed again (a retry, a moved job) has no place in its old
// group's order anyway.
func (s *Store) messageGroup(raw []byte, url string) string {
	name := url[strings.LastIndexByte(url, '/')+1:]
	p, err := payload.Parse(raw)
	if err != nil {
		return name
	}
	cmd, err := payload.DecodeCommand(p, s.enc)
	if err != nil || cmd == nil {
		return name
	}
	v, err := cmd.Object.Prop("messageGroup")
	if err != nil || v == nil {
		return name
	}
	switch v = v.Deref(); v.Kind {
	case phpserialize.KindString:
		if len(v.Str) > 0 {
			return string(v.Str)
		}
	case phpserialize.KindInt:
		return strconv.FormatInt(v.Int, 10)
	}
	return name
}

// foreverTTL is how long Laravel's database cache store keeps a value
// put "forever" (DatabaseStore::forever: 315360000 s).
const foreverTTL = 315360000 * time.Second

// overflow is SqsQueue::overflow: with the connection's overflow enabled,
// a payload of 1 MiB or more (every payload with "always") is put in the
// cache under laravel:sqs-payloads:<uuid> and the message is a pointer
// to it. Without it, a payload SQS cannot take is an error naming why.
func (s *Store) overflow(ctx context.Context, raw []byte) ([]byte, error) {
	ov := s.q.Config().Overflow
	if !ov.Enabled || (!ov.Always && len(raw) < sqsproto.MaxPayload) {
		if len(raw) >= sqsproto.MaxPayload {
			return nil, fmt.Errorf("sqsstore: a payload of %d bytes: SQS takes messages below 1 MiB (Laravel 13.9+ puts larger ones in the cache with the connection's overflow enabled)", len(raw))
		}
		return raw, nil
	}
	cache := s.SharedCache()
	if cache == nil {
		return nil, errors.New("sqsstore: the connection's overflow is enabled, and laraworker does not share the app's cache store to put the payload in")
	}
	uuid := ""
	if p, err := payload.Parse(raw); err == nil {
		uuid = p.UUID
	}
	if uuid == "" {
		var err error
		if uuid, err = payload.NewUUID(); err != nil {
			return nil, err
		}
	}
	key := sqsproto.PointerPrefix + uuid
	// The cache holds PHP's serialize() of the string.
	serialized := fmt.Appendf(nil, "s:%d:\"%s\";", len(raw), raw)
	if err := cache.Put(ctx, key, serialized, foreverTTL); err != nil {
		return nil, err
	}
	return []byte(`{"@pointer":"` + strings.ReplaceAll(key, "/", `\/`) + `"}`), nil
}

// Push adds a job as Queue::pushRaw / later() would on this connection
// and returns SQS's MessageId.
func (s *Store) Push(ctx context.Context, item jobqueue.PushItem) (jobqueue.JobID, error) {
	id, err := s.PushID(ctx, item)
	return jobqueue.JobID{Str: id}, err
}

// PushID is Push, returning the MessageId.
func (s *Store) PushID(ctx context.Context, item jobqueue.PushItem) (string, error) {
	raw, err := s.preparePush(ctx, item.Payload)
	if err != nil {
		return "", err
	}
	item.Payload = raw
	return s.send(ctx, item)
}

// PushMany adds several jobs with SendMessageBatch, 10 (and 1 MiB) a
// request per queue, in order, as Laravel 13.19+'s bulk.
func (s *Store) PushMany(ctx context.Context, items []jobqueue.PushItem) error {
	byURL := map[string][]sqsproto.SendEntry{}
	var urls []string
	for _, it := range items {
		raw, err := s.preparePush(ctx, it.Payload)
		if err != nil {
			return err
		}
		it.Payload = raw
		url := s.q.URL(it.Queue)
		opts, err := s.sendOptions(url, it)
		if err != nil {
			return err
		}
		body, err := s.overflow(ctx, raw)
		if err != nil {
			return err
		}
		if _, ok := byURL[url]; !ok {
			urls = append(urls, url)
		}
		byURL[url] = append(byURL[url], sqsproto.SendEntry{Body: body, SendOptions: opts})
	}
	for _, url := range urls {
		if _, err := s.q.SendBatch(ctx, url, byURL[url]); err != nil {
			return err
		}
	}
	return nil
}
