package horizon

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

// Horizon writes its times with str_replace(',', '.', microtime(true)):
// a PHP float in a string, 14 significant digits. phpFloat must give
// PHP's bytes, exponent forms included.
func TestPHPFloatIsPHPs(t *testing.T) {
	phptest.NeedPHP(t)
	values := []float64{1733068800.123456, 1733068800.1, 1733068800, -1733068800.123456, -1796142611.135801,
		12.34, 12.345, 0.5, 0.01, 0.0001, 0.00001, 1e13, 99999999999999, 1e14, 1e25, 1.5e-7, 123456789012345678, 0.1 + 0.2, 2.675}
	args := make([]string, len(values))
	for i, v := range values {
		args[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	script := `foreach (array_slice($argv, 1) as $v) { echo str_replace(',', '.', (float) $v), "\n"; }`
	out, err := exec.Command("php", append([]string{"-r", script, "--"}, args...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(values) {
		t.Fatalf("php printed %d values for %d", len(want), len(values))
	}
	for i, v := range values {
		if got := phpFloat(v); got != want[i] {
			t.Errorf("phpFloat(%s) = %q, PHP writes %q", args[i], got, want[i])
		}
	}
}

// RedisJobRepository::failed writes 'context' => null for an exception
// without context(); phpredis sends null as an empty string. The failed
// record's context is what phpredis leaves.
func TestNullContextIsWhatPhpredisWrites(t *testing.T) {
	phptest.NeedPHP(t)
	if out, err := exec.Command("php", "-r", "echo extension_loaded('redis') ? 'yes' : 'no';").Output(); err != nil || string(out) != "yes" {
		t.Skip("php has no redis extension (Debian: php-redis)")
	}
	srv := testredis.Start(t)
	script := `$r = new Redis(); $r->connect('127.0.0.1', (int) $argv[1]); $r->hMset('php', ['context' => null]);`
	if out, err := exec.Command("php", "-r", script, "--", strconv.Itoa(srv.Port)).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	rc := srv.Client(t)
	e := &env{rc: rc, ctx: t.Context(), now: at}
	e.r = New(rc, "redis", Config{Prefix: prefix, Trim: Defaults().Trim})
	e.r.SetClock(func() time.Time { return e.now })
	if err := e.r.Failed(e.ctx, Job{Queue: "default", Payload: horizonPayload(uuid1, mail)}, "E"); err != nil {
		t.Fatal(err)
	}
	php, err := rc.HGet(e.ctx, "php", "context").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := e.hash(t, uuid1)["context"]; got != php {
		t.Errorf("context %q, phpredis writes null as %q", got, php)
	}
}
