package pulse

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/redis/go-redis/v9"
)

// testStream is a Stream on the machine's Redis under a fresh prefix,
// deleted when the test ends.
func testStream(t *testing.T, s Settings) (*Stream, redis.UniversalClient) {
	t.Helper()
	testdsn.NeedRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		if testdsn.Required() {
			t.Fatalf("no Redis: %v", err)
		}
		t.Skipf("no Redis: %v", err)
	}
	s.Stream = "laraworker_test_pulse_" + strconv.FormatInt(time.Now().UnixNano(), 36) + "_database_laravel:pulse:ingest"
	t.Cleanup(func() { rdb.Del(context.Background(), s.Stream) })
	return NewStream(rdb, s, nil), rdb
}

// phpReadStream unserializes every entry of the stream with PHP, as
// pulse:work's digest does, and returns each as Go's Entry.
func phpReadStream(t *testing.T, rdb redis.UniversalClient, key string) []Entry {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), key, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range msgs {
		if len(m.Values) != 1 {
			t.Fatalf("stream entry %s has fields %v: want data alone", m.ID, m.Values)
		}
		lines = append(lines, base64.StdEncoding.EncodeToString([]byte(m.Values["data"].(string))))
	}
	out := runPHP(t, phpEntryClass+`namespace Main;`+readLines+`
foreach ($lines as $l) {
    $e = unserialize(base64_decode($l), ['allowed_classes' => [\Laravel\Pulse\Entry::class]]);
    echo json_encode([$e->timestamp, $e->type, $e->key, $e->value, $e->aggregations(), $e->isOnlyBuckets()]), "\n";
}`, lines)
	var entries []Entry
	for _, line := range out {
		var f [6]json.RawMessage
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("php read %s: %v", line, err)
		}
		var e Entry
		json.Unmarshal(f[0], &e.Timestamp)
		json.Unmarshal(f[1], &e.Type)
		json.Unmarshal(f[2], &e.Key)
		json.Unmarshal(f[3], &e.Value)
		json.Unmarshal(f[4], &e.Aggregations)
		json.Unmarshal(f[5], &e.OnlyBuckets)
		entries = append(entries, e)
	}
	return entries
}

// TestRecorderStreamsWhatPulseWould: with Pulse's Redis ingest, the jobs
// a Go worker runs are added to the stream as the entries PHP's recorders
// would add for the same runs, and PHP reads each back as a
// Laravel\Pulse\Entry (what `php artisan pulse:work` stores).
func TestRecorderStreamsWhatPulseWould(t *testing.T) {
	stream, rdb := testStream(t, testSettings(t))
	q := testdb.Open(t, testdb.Config(t, "sqlite"))
	rec := New(testSettings(t), stream, Options{FlushEvery: 50 * time.Millisecond})
	all := runJobs(t, q, rec)
	want := expected(all, phpSampled(t, all, "0.5"))
	got := phpReadStream(t, rdb, stream.Key())
	if g, w := entryLines(got), entryLines(want); !slices.Equal(g, w) {
		t.Errorf("the stream holds:\n%v\nwant PHP's recorders' entries:\n%v", g, w)
	}
}

func entryLines(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		v := "null"
		if e.Value != nil {
			v = strconv.FormatInt(*e.Value, 10)
		}
		out = append(out, fmt.Sprint(e.Timestamp, " ", e.Type, " ", e.Key, " ", v, " ", e.Aggregations, " ", e.OnlyBuckets))
	}
	slices.Sort(out)
	return out
}

// TestStreamTrims: RedisIngest's trim keeps entries younger than keep
// (MINID) or the newest keep entries (MAXLEN), approximately as Redis's
// "~" does: the old ones go, the new ones stay.
func TestStreamTrims(t *testing.T) {
	for _, keep := range []Keep{{Age: time.Hour}, {MaxLen: 10}} {
		stream, rdb := testStream(t, Settings{StreamKeep: keep})
		ctx := context.Background()
		for i := range 500 {
			rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream.Key(), ID: fmt.Sprintf("1-%d", i+1), Values: []any{"data", "old"}})
		}
		if err := stream.Ingest(ctx, []Entry{{Timestamp: 1, Type: "t", Key: "new"}}); err != nil {
			t.Fatal(err)
		}
		if err := stream.Trim(ctx); err != nil {
			t.Fatal(err)
		}
		msgs, err := rdb.XRange(ctx, stream.Key(), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) >= 400 || msgs[len(msgs)-1].Values["data"] == "old" {
			t.Errorf("keep %+v: %d entries left, the last %v: want the old ones trimmed, the new one kept", keep, len(msgs), msgs[len(msgs)-1].Values)
		}
	}
}
