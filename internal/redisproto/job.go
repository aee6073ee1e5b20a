package redisproto

import (
	"errors"
	"fmt"
)

// Job is one popped job, as Laravel's RedisJob holds it.
type Job struct {
	// Queue is the bare queue name (no "queues:", no prefix, no braces).
	Queue string
	// Payload is the job as it was in the list, byte for byte: what PHP's
	// getRawBody() returns and failed_jobs stores. Its "attempts" is one
	// lower than Attempts.
	Payload []byte
	// Reserved is the member the pop put in the reserved set: the payload
	// re-encoded by Redis's cjson with attempts + 1. It is the job's fence:
	// every later write names the job by it, and finds it gone once the
	// reservation expired and a pop moved the job back (or queue:clear ran).
	Reserved string
	// Attempts is Laravel's attempts() for this run: the payload's
	// "attempts" + 1 (1 on the first run).
	Attempts int
	// ID is the payload's "id" (RedisJob::getJobId(): Str::random(32), the
	// uuid under Horizon); it survives releases. UUID is its "uuid".
	ID   string
	UUID string
	// ReservedUntil is the reservation's score: the Unix second from which
	// a pop may move the job back to the list (now + retry_after at the
	// pop, later after an Extend).
	ReservedUntil int64
	// Err is set when the pop could not read the payload (*MalformedError);
	// the job is reserved under its raw bytes (Reserved == Payload) so the
	// caller can fail it; Attempts, ID and UUID are then empty.
	Err error
}

// MalformedError is a job the pop script could not decode or count: not
// JSON, not an object, or an "attempts" that is no number. Laravel's pop
// raises on such a job after it was taken off the list, and the job is
// lost; here it is reserved under its raw bytes and handed back.
type MalformedError struct {
	// Reason is the Lua error, e.g. cjson's "Expected value but found
	// invalid token at character 1".
	Reason string
}

func (e *MalformedError) Error() string {
	return "redisqueue: Laravel's pop cannot read this payload (a PHP worker would lose it): " + e.Reason
}

// Head is a job a pop left in place (at the head of the list, or behind
// it within the lookahead): its class is not among those asked for, its
// id is one of PopOptions.LeaveIDs (ByID), or it is a byte-for-byte copy
// of a job reserved now (Copy: the same payload pushed twice), which
// waits until that reservation is gone. DisplayName and UUID are "" when
// the payload does not hold them (or, behind the head, its bytes do not
// tell them).
type Head struct {
	DisplayName string
	UUID        string
	ByID        bool
	Copy        bool
}

// parseClaim reads claimScript's reply.
func parseClaim(queue string, reply any, until int64) (PopResult, error) {
	arr, ok := reply.([]any)
	if !ok || len(arr) < 3 {
		return PopResult{}, fmt.Errorf("redisqueue: unexpected pop reply %T", reply)
	}
	var res PopResult
	if h, ok := arr[0].([]any); ok && len(h) == 3 {
		res.Head = head(h[0], h[1], h[2])
	}
	if m, ok := arr[1].([]any); ok {
		res.Migrated = make([]string, len(m))
		for i, v := range m {
			res.Migrated[i] = asString(v)
		}
	}
	if l, ok := arr[2].([]any); ok && len(l) > 1 {
		cut, _ := l[0].(int64)
		n, _ := l[1].(int64)
		res.LookaheadCut, res.LookedPast = cut == 1, int(n)
		for i := 2; i+2 < len(l); i += 3 {
			res.Looked = append(res.Looked, *head(l[i], l[i+1], l[i+2]))
		}
	}
	res.Jobs = make([]*Job, 0, len(arr)-3)
	for _, item := range arr[3:] {
		f, ok := item.([]any)
		if !ok || len(f) != 6 {
			return PopResult{}, errors.New("redisqueue: unexpected job in the pop reply")
		}
		raw := asString(f[0])
		j := &Job{Queue: queue, Payload: []byte(raw), ReservedUntil: until}
		if msg, bad := f[5].(string); bad {
			j.Reserved = raw
			j.Err = &MalformedError{Reason: msg}
		} else {
			j.Reserved = asString(f[1])
			n, _ := f[2].(int64)
			j.Attempts = int(n)
			j.ID, j.UUID = asString(f[3]), asString(f[4])
		}
		res.Jobs = append(res.Jobs, j)
	}
	return res, nil
}

// head is a job left in place as the reply names it.
func head(name, uuid, why any) *Head {
	w := asString(why)
	return &Head{DisplayName: asString(name), UUID: asString(uuid), ByID: w == "id", Copy: w == "copy"}
}

// asString is a bulk string reply, "" for nil.
func asString(v any) string {
	s, _ := v.(string)
	return s
}
