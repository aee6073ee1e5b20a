package horizon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// Pushes. Under Horizon every PHP process pushes through Horizon's
// RedisQueue: a dispatched job's payload gets "id" = its uuid
// (createPayloadArray) and, like any raw payload, JobPayload::prepare's
// type, tags, silenced and pushedAt, written back with json_encode (no
// flags); then JobPushed's StoreJob writes its record (pending) and
// StoreMonitoredTags its monitored tags. Jobs Go pushes (a chain's next
// link, `laraworker push`, queue:retry) get the same here.

// PrepareDispatch is what Horizon's RedisQueue::push does to a payload
// RedisQueue made for a job object (redisproto.PreparePayload's: "id"
// and "attempts" added): "id" becomes the uuid, then prepare($job).
func (r *Recorder) PrepareDispatch(raw []byte) ([]byte, error) {
	doc, err := payload.DecodePHPArray(raw)
	if err != nil {
		return nil, err
	}
	if uuid, ok := doc.Get("uuid").Str(); ok {
		if err := doc.SetString("id", uuid); err != nil {
			return nil, err
		}
	}
	job := describeJob(raw)
	existing, _ := doc.Get("tags").Strings()
	tags := unique(append(existing, job.modelTags...))
	silenced := false
	for _, c := range r.cfg.Silenced {
		if strings.EqualFold(c, job.underlying) {
			silenced = true
		}
	}
	return r.prepare(doc, job.kind, tags, silenced)
}

// PrepareRaw is what Horizon's RedisQueue::pushRaw does to a raw payload
// pushed without a job object (queue:retry's): prepare(null), type
// "job", the payload's own tags, not silenced.
func (r *Recorder) PrepareRaw(raw []byte) ([]byte, error) {
	doc, err := payload.DecodePHPArray(raw)
	if err != nil {
		return nil, err
	}
	tags, _ := doc.Get("tags").Strings()
	return r.prepare(doc, "job", tags, false)
}

// prepare is JobPayload::prepare then set(): the four keys merged in
// (array_merge: in place when present, else appended), json_encode.
func (r *Recorder) prepare(doc payload.PHPArray, kind string, tags []string, silenced bool) ([]byte, error) {
	if tags == nil {
		tags = []string{}
	}
	err := errors.Join(doc.SetString("type", kind), doc.SetStrings("tags", tags), doc.SetBool("silenced", silenced),
		doc.SetString("pushedAt", microtime(r.now())))
	if err != nil {
		return nil, err
	}
	return doc.EncodePHP()
}

// Pushed is JobPushed's listeners for jobs pushed to queue (a bare name):
// StoreJob (RedisJobRepository::pushed: the job in recent_jobs and
// pending_jobs, its hash pending with the payload, expiring after
// trim.pending) and StoreMonitoredTags (each monitored tag's set gets the
// job, scored by microtime).
func (r *Recorder) Pushed(ctx context.Context, queue string, payloads ...[]byte) error {
	now := r.now()
	ds := make([]decoded, 0, len(payloads))
	raws := make([][]byte, 0, len(payloads))
	var errs []error
	for _, p := range payloads {
		d, err := decode(string(p))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ds, raws = append(ds, d), append(raws, p)
	}
	monitored, err := r.monitored(ctx, ds)
	errs = append(errs, err)
	t, score := microtime(now), negMicrotime(now)
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, d := range ds {
			id := r.key(d.id)
			p.Do(ctx, "zadd", r.key("recent_jobs"), score, d.id)
			p.Do(ctx, "zadd", r.key("pending_jobs"), score, d.id)
			p.HMSet(ctx, id, "id", d.id, "connection", r.connection, "queue", queue, "name", d.name,
				"status", "pending", "payload", string(raws[i]), "created_at", t, "updated_at", t)
			p.ExpireAt(ctx, id, time.Unix(expireAt(now, r.cfg.Trim.Pending), 0))
			for _, tag := range intersect(d.tags, monitored) {
				p.Do(ctx, "zadd", r.key(tag), t, d.id)
			}
		}
		return nil
	})
	return errors.Join(append(errs, pipeErr(err))...)
}

// jobShape is what prepare($job) reads of the job object, from its
// serialized command.
type jobShape struct {
	// kind is determineType: broadcast, event, mail, notification or job.
	kind string
	// underlying is the class shouldBeSilenced looks up.
	underlying string
	// modelTags are Tags::modelsFor's "Class:key" of the Eloquent models
	// in the target's properties (without an explicit tags() method,
	// which Go cannot see).
	modelTags []string
}

// Classes whose jobs Horizon types and tags by what they carry.
const (
	broadcastEvent          = `Illuminate\Broadcasting\BroadcastEvent`
	callQueuedListener      = `Illuminate\Events\CallQueuedListener`
	sendQueuedMailable      = `Illuminate\Mail\SendQueuedMailable`
	sendQueuedNotifications = `Illuminate\Notifications\SendQueuedNotifications`
)

// describeJob reads the job object of a payload: an unreadable or
// encrypted command gives a plain "job" of its displayName, no tags.
func describeJob(raw []byte) jobShape {
	p, err := payload.Parse(raw)
	if err != nil {
		return jobShape{kind: "job"}
	}
	shape := jobShape{kind: "job", underlying: p.DisplayName}
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		return shape
	}
	target := cmd.Object
	switch strings.ToLower(cmd.Class()) {
	case strings.ToLower(broadcastEvent):
		shape.kind, target = "broadcast", property(cmd.Object, "event")
	case strings.ToLower(callQueuedListener):
		shape.kind, target = "event", index(property(cmd.Object, "data"), 0)
		if c := property(cmd.Object, "class"); c != nil {
			shape.underlying = string(c.Str)
		}
	case strings.ToLower(sendQueuedMailable):
		shape.kind, target = "mail", property(cmd.Object, "mailable")
	case strings.ToLower(sendQueuedNotifications):
		shape.kind, target = "notification", property(cmd.Object, "notification")
	default:
		shape.underlying = cmd.Class()
	}
	if target != nil && shape.kind != "job" && shape.kind != "event" {
		shape.underlying = target.Class
	}
	shape.modelTags = modelTags(target)
	return shape
}

// modelTags is Tags::modelsFor([$target]) mapped to "Class:key": the
// models (SerializesModels' ModelIdentifiers) and the models of the
// collections held directly in the target's properties, unique.
func modelTags(target *phpValue) []string {
	if target == nil {
		return nil
	}
	var tags []string
	for _, e := range target.Entries {
		v := e.Value.Deref()
		if !payload.IsModelIdentifier(v) {
			continue
		}
		var m payload.ModelIdentifier
		if m.DecodePHP(v) != nil || m.Class == "" {
			continue
		}
		ids, isList := m.ID.([]any)
		if !isList {
			ids = []any{m.ID}
		}
		for _, id := range ids {
			tags = append(tags, m.Class+":"+fmt.Sprint(id))
		}
	}
	return unique(tags)
}

// unique is collect()->unique(): the first of equal values kept.
func unique(values []string) []string {
	seen := map[string]bool{}
	out := values[:0:0]
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
