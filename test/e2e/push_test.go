package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// scalarsDefaults are ScalarsJob's constructor defaults, as JSON.
const scalarsDefaults = `{"podcastId":42,"negative":-7,"ratio":0.1,"huge":1.0e25,` +
	`"title":"Héllo / wörld \"quoted\" ✓","flag":true,"nothing":null,"tags":["news","tech"],` +
	`"meta":{"nested":{"x":1,"y":[1.25,"z"]},"empty":[],"7":"int-key"}}`

type pushed struct {
	ID   int64  `json:"id"`
	UUID string `json:"uuid"`
}

func (s *suite) push(t *testing.T, args ...string) pushed {
	t.Helper()
	out := s.laraworker(t, append([]string{"push", "--json"}, args...)...)
	var p pushed
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.UUID == "" {
		t.Fatalf("push printed %q: %v", out, err)
	}
	return p
}

// TestGoPushesPHPRuns (c): jobs of PHP classes pushed by `laraworker push`
// (plain and --encrypt) and by the library (payload.NewCommand,
// BuildObjectPayload, database.Queue.Push) run in `queue:work`, which sees
// the property values Go wrote. A push with ScalarsJob's defaults is the
// payload PHP's own dispatch writes, byte for byte but the uuid.
func TestGoPushesPHPRuns(t *testing.T) { onEachDB(t, testGoPushesPHPRuns) }

func testGoPushesPHPRuns(t *testing.T, s *suite) {
	// Laravel's own payload: without the key the bridge adds to every job
	// it records (which a Go push does not write).
	s.artisanEnv(t, []string{"LARAWORKER_RECORD=routed"}, "app:dispatch", "scalars")
	fromPHP := s.jobs(t)[0]

	props := filepath.Join(t.TempDir(), "scalars.json")
	if err := os.WriteFile(props, []byte(scalarsDefaults), 0o600); err != nil {
		t.Fatal(err)
	}
	defaults := s.push(t, `App\Jobs\ScalarsJob`, "--props", props)
	custom := s.push(t, `App\Jobs\ScalarsJob`, "--props", props,
		"--prop", "podcastId=7", "--prop", `title="Ünï / \"q\" ✓"`, "--prop", "ratio=2.5",
		"--prop", `tags=["x"]`, "--prop", "flag=false", "--prop", "nothing=null")
	encrypted := s.push(t, `App\Jobs\EncryptedJob`, "--encrypt", "--prop", `secret="from Go ✓"`, "--prop", "podcastId=9")
	library := pushWithLibrary(t, s)

	rows := map[string]jobRow{}
	for _, j := range s.jobs(t) {
		rows[j.UUID] = j
	}
	if got := strings.ReplaceAll(rows[defaults.UUID].Payload, defaults.UUID, fromPHP.UUID); got != fromPHP.Payload {
		t.Errorf("laraworker push with the defaults differs from PHP's dispatch (modulo uuid):\n go  %s\n php %s", got, fromPHP.Payload)
	}
	if p, err := payload.Parse([]byte(rows[encrypted.UUID].Payload)); err != nil || payload.IsPlainCommand(p.Data.Command) {
		t.Errorf("--encrypt pushed a plain command: %v", err)
	}

	s.phpWork(t, "--stop-when-empty")
	if n := len(s.failed(t)); n != 0 {
		t.Fatalf("%d jobs failed in PHP: %+v", n, s.failed(t))
	}
	byUUID := runsByUUID(s.runs(t))
	one := func(uuid string) runRow {
		rs := byUUID[uuid]
		if len(rs) != 1 || rs[0].Worker != "php" || rs[0].Attempt != 1 {
			t.Fatalf("job %s runs %+v, want one by php", uuid, rs)
		}
		return rs[0]
	}
	if a, b := one(defaults.UUID).Raw, one(fromPHP.UUID).Raw; a != b {
		t.Errorf("PHP saw different values in Go's push:\n go  %s\n php %s", a, b)
	}
	c := one(custom.UUID).Result
	if num(t, c["podcastId"]) != 7 || c["title"] != `Ünï / "q" ✓` || c["ratio"] != json.Number("2.5") ||
		c["flag"] != false || c["nothing"] != nil || !sameJSON(c["tags"], []any{"x"}) {
		t.Errorf("PHP saw %s", one(custom.UUID).Raw)
	}
	if e := one(encrypted.UUID).Result; e["secret"] != "from Go ✓" || num(t, e["podcastId"]) != 9 {
		t.Errorf("PHP decrypted %s", one(encrypted.UUID).Raw)
	}
	if l := one(library).Result; num(t, l["podcastId"]) != 8 || l["title"] != "library ✓" || !sameJSON(l["meta"], map[string]any{"k": "v"}) {
		t.Errorf("PHP saw %s in the library's push", one(library).Raw)
	}
}

// pushWithLibrary pushes a ScalarsJob the way a Go program would.
func pushWithLibrary(t *testing.T, s *suite) string {
	t.Helper()
	cmd := payload.NewCommand(`App\Jobs\ScalarsJob`, []phpserialize.Entry{
		phpserialize.Public("podcastId", phpserialize.Int(8)),
		phpserialize.Public("negative", phpserialize.Int(-1)),
		phpserialize.Public("ratio", phpserialize.Float(0.5)),
		phpserialize.Public("huge", phpserialize.Float(1e300)),
		phpserialize.Public("title", phpserialize.String("library ✓")),
		phpserialize.Public("flag", phpserialize.Bool(true)),
		phpserialize.Public("nothing", phpserialize.Null()),
		phpserialize.Public("tags", phpserialize.List(phpserialize.String("a"))),
		phpserialize.Public("meta", phpserialize.Array(phpserialize.Entry{Key: phpserialize.StrKey("k"), Value: phpserialize.String("v")})),
	}, payload.Dispatch{})
	raw, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.q.Push(s.ctx(t), jobqueue.PushItem{Queue: "default", Payload: raw}); err != nil {
		t.Fatal(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p.UUID
}

// sameJSON compares a decoded value with an expected one by their JSON.
func sameJSON(got, want any) bool {
	a, err1 := json.Marshal(got)
	b, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && string(a) == string(b)
}
