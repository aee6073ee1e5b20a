package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// hostile are payloads a queue may hold that no dispatch() wrote: each
// must end claimed (or named by a claim error) and failed with its bytes
// intact, never loop, never vanish.
func (e *env) hostile() map[string][]byte {
	uuid := e.uuid()
	return map[string][]byte{
		"invalid JSON":   []byte(`{"uuid":"` + uuid + `","displayName":"App\\Jobs\\SendMail","job":`),
		"not an object":  []byte(`["App\\Jobs\\SendMail"]`),
		"no displayName": []byte(`{"uuid":"` + e.uuid() + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":"App\\Jobs\\SendMail","command":"O:17:\"App\\Jobs\\SendMail\":0:{}"}}`),
		"binary":         []byte("\xff\xfe\x01binary\x7f{\"uuid\":"),
		"empty":          {},
	}
}

// testHostile: a worker serving Served claims the jobs behind a hostile
// payload; the hostile job stays (or is named by a claim error, which the
// worker fails); an unfiltered claim takes it; failing it records its
// bytes; it never comes back.
func testHostile(e *env) {
	for name, raw := range e.hostile() {
		queue := "hostile-" + strings.ReplaceAll(name, " ", "-")
		if _, err := e.s.Push(e.ctx, jobqueue.PushItem{Queue: e.q(queue), Payload: raw}); err != nil {
			// Refused at the push (PostgreSQL's text takes no invalid
			// UTF-8): the pusher knows; nothing may be queued.
			e.total(queue, 0, name+" refused by the push")
			continue
		}
		behind := e.push(queue, Served)
		failed := e.claimBehindHostile(name, queue, raw, behind)
		if failed == nil {
			failed = e.claimAndFailHostile(name, queue, raw)
		}
		if f := e.failedWithPayload(failed); f != 1 {
			e.t.Fatalf("%s: %d failed jobs hold its bytes %q, want 1", name, f, failed)
		}
		e.total(queue, 0, name+" after it failed")
	}
	e.expired()
	for name := range e.hostile() {
		e.claimNone("hostile-"+strings.ReplaceAll(name, " ", "-"), "hostile job failed, then retry_after")
	}
	e.hugePayload()
}

// claimBehindHostile claims as a worker serving Served: the served job
// behind the hostile one comes, the hostile one does not (or comes as a
// claim error, failed here as the worker does; it reports that).
func (e *env) claimBehindHostile(name, queue string, raw []byte, behind string) (failed []byte) {
	e.t.Helper()
	only := jobqueue.ClaimOptions{DisplayNames: []string{Served}}
	for range 3 {
		rows, err := e.s.Claim(e.ctx, e.qs(queue), 1, only)
		if ce := (*jobqueue.ClaimError)(nil); errors.As(err, &ce) {
			failed = e.failClaimError(name, ce, raw)
			continue
		}
		if err != nil {
			e.t.Fatalf("%s: claim behind it: %v", name, err)
		}
		for _, r := range rows {
			switch {
			case samePayload(raw, r.Payload):
				// Its bytes name the class (a filter on the text took
				// it): the worker cannot read it and fails it.
				if err := e.s.Fail(e.ctx, r, e.uuid(), "laraworker: the payload is not a job", jobqueue.Followup{}); err != nil {
					e.t.Fatalf("%s: fail: %v", name, err)
				}
				failed = r.Payload
			case uuidOf(r.Payload) == behind:
				if lost, err := e.s.Delete(e.ctx, rows); err != nil || len(lost) != 0 {
					e.t.Fatalf("%s: delete: %v %v", name, lost, err)
				}
				return failed
			default:
				e.t.Fatalf("%s: a worker serving %s claimed %q", name, Served, r.Payload)
			}
		}
	}
	e.t.Fatalf("%s: the served job behind it was not claimed", name)
	return nil
}

// claimAndFailHostile claims the hostile job without a class filter (as
// a worker serving every class) and fails it, as the worker does with a
// payload it cannot read.
func (e *env) claimAndFailHostile(name, queue string, raw []byte) []byte {
	e.t.Helper()
	rows, err := e.s.Claim(e.ctx, e.qs(queue), 5, jobqueue.ClaimOptions{})
	if ce := (*jobqueue.ClaimError)(nil); errors.As(err, &ce) {
		return e.failClaimError(name, ce, raw)
	}
	if err != nil || len(rows) != 1 {
		e.t.Fatalf("%s: unfiltered claim: %d job(s), %v; want it", name, len(rows), err)
	}
	if !samePayload(raw, rows[0].Payload) {
		e.t.Fatalf("%s: claimed %q, pushed %q", name, rows[0].Payload, raw)
	}
	if err := e.s.Fail(e.ctx, rows[0], e.uuid(), "laraworker: the payload is not a job", jobqueue.Followup{}); err != nil {
		e.t.Fatalf("%s: fail: %v", name, err)
	}
	return rows[0].Payload
}

// failClaimError fails the job a claim error names, as the worker does.
func (e *env) failClaimError(name string, ce *jobqueue.ClaimError, raw []byte) []byte {
	e.t.Helper()
	if !samePayload(raw, ce.Job.Payload) {
		e.t.Fatalf("%s: the claim error names %q, pushed %q", name, ce.Job.Payload, raw)
	}
	if err := e.s.Fail(e.ctx, ce.Job, e.uuid(), "laraworker: "+ce.Error(), jobqueue.Followup{}); err != nil {
		e.t.Fatalf("%s: fail of the job a claim error named: %v", name, err)
	}
	return ce.Job.Payload
}

// samePayload tells whether a store holds the payload pushed: its bytes,
// or (a JSON object) every key of it with the same value, the store's
// own keys added (Laravel's Redis queue adds "id" and "attempts").
func samePayload(pushed, held []byte) bool {
	if string(pushed) == string(held) {
		return true
	}
	var p, h map[string]json.RawMessage
	if json.Unmarshal(pushed, &p) != nil || json.Unmarshal(held, &h) != nil {
		return false
	}
	for k, v := range p {
		if string(h[k]) != string(v) {
			return false
		}
	}
	return true
}

// failedWithPayload counts the failed jobs holding raw.
func (e *env) failedWithPayload(raw []byte) int {
	n := 0
	for _, f := range e.failed() {
		if string(f.Payload) == string(raw) {
			n++
		}
	}
	return n
}

// hugePayload: a job near the store's largest payload is claimed with
// every byte and deleted.
func (e *env) hugePayload() {
	big := strings.Repeat("x", e.cfg.MaxPayload*9/10)
	raw, err := payload.BuildObjectPayload(phpserialize.Object(Served, phpserialize.Entry{
		Key: phpserialize.StrKey("body"), Value: phpserialize.String(big),
	}), payload.BuildOptions{Shape: payload.Shape1251})
	if err != nil {
		e.t.Fatal(err)
	}
	e.pushRaw("huge", raw, 0)
	row := e.claimOpts([]string{"huge"}, 1, jobqueue.ClaimOptions{DisplayNames: []string{Served}})
	if len(row) != 1 || !samePayload(raw, row[0].Payload) {
		e.t.Fatalf("huge payload (%d bytes): claimed %d job(s), bytes intact %v", len(raw), len(row), len(row) == 1 && samePayload(raw, row[0].Payload))
	}
	if lost, err := e.s.Delete(e.ctx, row); err != nil || len(lost) != 0 {
		e.t.Fatalf("huge payload: delete: %v %v", lost, err)
	}
	e.total("huge", 0, fmt.Sprintf("after the huge payload (%d bytes) was deleted", len(raw)))
}
