package horizon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/laravel/payload"
	ps "github.com/laraworker/laraworker/laravel/phpserialize"
)

// modelID is SerializesModels' stand-in for a model or a collection.
func modelID(class string, id *ps.Value) *ps.Value {
	return ps.Object(payload.ModelIdentifierClass,
		ps.Public("class", ps.String(class)), ps.Public("id", id),
		ps.Public("relations", ps.List()), ps.Public("connection", ps.String("mysql")))
}

// dispatched is the payload RedisQueue makes for a job object (what Go
// builds for a chain link or `laraworker push`).
func dispatched(t *testing.T, cmd *ps.Value) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err = redisproto.PreparePayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Horizon's RedisQueue::push: createPayloadArray sets "id" to the uuid;
// pushRaw's JobPayload::prepare($job) merges type (determineType), tags
// (the payload's, then Tags::for: the Eloquent models in the job's own
// properties, "Class:key", unique), silenced (shouldBeSilenced: the class
// in horizon.silenced) and pushedAt (microtime as a string), and set()
// writes it back with json_encode and no flags ("\/", \uXXXX).
func TestPrepareDispatchIsHorizonsPush(t *testing.T) {
	e := newEnv(t, Config{Trim: Defaults().Trim, Silenced: []string{`App\Jobs\Quiet`}})
	cmd := ps.Object(`App\Jobs\SendInvoice`,
		ps.Public("user", modelID(`App\Models\User`, ps.Int(7))),
		ps.Protected("lines", modelID(`App\Models\Line`, ps.List(ps.Int(1), ps.Int(2), ps.Int(1)))),
		ps.Public("note", ps.String("café/menu")),
		ps.Public("nested", ps.Array(ps.Public("owner", modelID(`App\Models\User`, ps.Int(9))))),
	)
	raw := dispatched(t, cmd)
	got, err := e.r.PrepareDispatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(got)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if tail := strings.Join(keys[len(keys)-6:], ","); tail != "id,attempts,type,tags,silenced,pushedAt" {
		t.Errorf("keys end with %s; want RedisQueue's id and attempts, then prepare's four", tail)
	}
	var p map[string]any
	if err := json.Unmarshal(got, &p); err != nil {
		t.Fatal(err)
	}
	if p["id"] != p["uuid"] {
		t.Errorf("id %v, want the uuid %v (Horizon's createPayloadArray)", p["id"], p["uuid"])
	}
	// Nested models are not the job's own properties: no tag for user 9.
	if tags, _ := json.Marshal(p["tags"]); string(tags) != `["App\\Models\\User:7","App\\Models\\Line:1","App\\Models\\Line:2"]` {
		t.Errorf("tags %s", tags)
	}
	if p["type"] != "job" || p["silenced"] != false || p["pushedAt"] != atString {
		t.Errorf("type %v, silenced %v, pushedAt %v", p["type"], p["silenced"], p["pushedAt"])
	}
	if !strings.Contains(string(got), `caf\u00e9\/menu`) {
		t.Errorf("the command's text is not json_encode's without flags: %s", got)
	}

	quiet, err := e.r.PrepareDispatch(dispatched(t, ps.Object(`App\Jobs\Quiet`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(quiet), `"tags":[],"silenced":true,"pushedAt"`) {
		t.Errorf("a silenced class: %s", quiet)
	}
}

// determineType and the target Tags::for reads: a queued mailable is
// "mail", tagged by the mailable's models.
func TestPrepareDispatchOfAMailable(t *testing.T) {
	e := newEnv(t, Defaults())
	cmd := ps.Object(`Illuminate\Mail\SendQueuedMailable`,
		ps.Public("mailable", ps.Object(`App\Mail\Welcome`, ps.Public("user", modelID(`App\Models\User`, ps.String("a1"))))))
	got, err := e.r.PrepareDispatch(dispatched(t, cmd))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"type":"mail","tags":["App\\Models\\User:a1"]`) {
		t.Errorf("mailable: %s", got)
	}
}

// queue:retry pushes a raw payload: Horizon's pushRaw prepares it with no
// job object (type job, its own tags, not silenced, a new pushedAt).
func TestPrepareRawKeepsTheTags(t *testing.T) {
	e := newEnv(t, Defaults())
	raw := horizonPayload(uuid1, mail, `"attempts":0`, `"tags":["a","b"]`, `"silenced":true`, `"type":"mail"`)
	got, err := e.r.PrepareRaw([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"type":"job","tags":["a","b"],"silenced":false,"pushedAt":"`+atString+`"}`) {
		t.Errorf("retried payload %s", got)
	}
}

// RedisJobRepository::pushed (StoreJob) and StoreMonitoredTags.
func TestPushedRecords(t *testing.T) {
	cfg := Defaults()
	cfg.Trim.Pending = 45
	e := newEnv(t, cfg)
	if err := e.rc.SAdd(e.ctx, prefix+"monitoring", "vip").Err(); err != nil {
		t.Fatal(err)
	}
	p := horizonPayload(uuid1, mail, `"attempts":0`, `"tags":["vip","other"]`)
	if err := e.r.Pushed(e.ctx, "emails", []byte(p)); err != nil {
		t.Fatal(err)
	}
	wantHash(t, "pushed job", e.hash(t, uuid1), map[string]string{
		"id": uuid1, "connection": "redis", "queue": "emails", "name": mail, "status": "pending",
		"payload": p, "created_at": atString, "updated_at": atString,
	})
	if got := e.expiresAt(t, uuid1); got != minutes(45) {
		t.Errorf("expires at %d, want now + trim.pending = %d", got, minutes(45))
	}
	for set, want := range map[string]string{"recent_jobs": atNegString, "pending_jobs": atNegString, "vip": atString, "other": ""} {
		if got := e.score(t, set, uuid1); got != want {
			t.Errorf("%s score %q, want %q", set, got, want)
		}
	}
}
