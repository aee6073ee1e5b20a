package pulse

import (
	"crypto/rand"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
)

// runPHP runs script with php, lines on its standard input, and returns
// its output lines.
func runPHP(t *testing.T, script string, lines []string) []string {
	t.Helper()
	phptest.NeedPHP(t)
	cmd := exec.Command("php", "-r", script)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v: %s", err, out)
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}

// readLines is the PHP that reads runPHP's lines.
const readLines = `$lines = explode("\n", rtrim(stream_get_contents(STDIN), "\n"));`

func uuid4(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// TestSampleValueMatchesPHP: the Queues recorder's deterministic sample
// of a uuid is the float PHP computes (hexdec of the md5, which turns
// into a float past PHP_INT_MAX, over 16^32), bit for bit, so Go keeps
// and drops the very jobs PHP would at any rate.
func TestSampleValueMatchesPHP(t *testing.T) {
	seeds := []string{"", "0", "ffffffff-ffff-4fff-bfff-ffffffffffff"}
	for range 300 {
		seeds = append(seeds, uuid4(t))
	}
	out := runPHP(t, readLines+` foreach ($lines as $u) { echo serialize(hexdec(md5($u)) / pow(16, 32)), "\n"; }`, seeds)
	if len(out) != len(seeds) {
		t.Fatalf("php printed %d lines for %d seeds", len(out), len(seeds))
	}
	for i, seed := range seeds {
		php, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(out[i], "d:"), ";"), 64)
		if err != nil {
			t.Fatalf("php printed %q", out[i])
		}
		if got := sampleValue(seed); got != php {
			t.Errorf("sample of %q: Go %v, PHP %v", seed, got, php)
		}
	}
}

// TestPHPRegexpMatchesPCRE: ignore patterns and threshold patterns, as
// config/pulse.php writes them, match what preg_match matches; PCRE that
// Go's regexp cannot run is an error naming the pattern, never a pattern
// that silently matches something else.
func TestPHPRegexpMatchesPCRE(t *testing.T) {
	patterns := []string{`/^App\\Jobs\\Internal/`, `#Report$#i`, `{^App\\(Jobs|Listeners)\\}`, `/jobs/`, `~\d+~`, `/^app\\jobs\\/iu`, `(^App\\Jobs\\Sync)`, `/a\/b/`}
	subjects := []string{`App\Jobs\Internal\Ping`, `App\Jobs\MonthlyReport`, `App\Jobs\monthlyreport`, `App\Listeners\SendMail`, `Jobs2`, `app\jobs\x`, `App\Jobs\Sync`, `a/b`, `App\Models\User`}
	var lines []string
	for _, p := range patterns {
		for _, s := range subjects {
			lines = append(lines, p+"\t"+s)
		}
	}
	out := runPHP(t, readLines+` foreach ($lines as $l) { [$p, $s] = explode("\t", $l, 2); echo preg_match($p, $s), "\n"; }`, lines)
	for i, l := range lines {
		p, s, _ := strings.Cut(l, "\t")
		re, err := compilePHPRegexp(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got := re.MatchString(s); got != (out[i] == "1") {
			t.Errorf("%s on %s: Go %v, preg_match %s", p, s, got, out[i])
		}
	}
	for _, bad := range []string{`/(?=App)/`, `/(a)\1/`, `/App Jobs/x`, `/unterminated`, `abc`, ""} {
		if _, err := compilePHPRegexp(bad); err == nil {
			t.Errorf("%q compiled: want an error (Go cannot run it as PCRE does)", bad)
		}
	}
}

// TestCarbonIntervalMatchesCarbon: pulse.*.trim.keep is read as
// CarbonInterval::fromString reads it; months and years, which Carbon
// counts in 4-week months, are an error asking for days.
func TestCarbonIntervalMatchesCarbon(t *testing.T) {
	in := []string{"7 days", "1 week", "12 hours", "90 minutes", "1 day 12 hours", "30s", "2 weeks 3 days", "1.5 hours", "1h 30m", "500ms"}
	out := runPHP(t, `require "/usr/share/php/Illuminate/autoload.php"; `+readLines+
		` foreach ($lines as $s) { echo (int) Carbon\CarbonInterval::fromString($s)->totalMilliseconds, "\n"; }`, in)
	for i, s := range in {
		want, _ := strconv.ParseInt(out[i], 10, 64)
		got, err := carbonInterval(s)
		if err != nil || got != time.Duration(want)*time.Millisecond {
			t.Errorf("%q: Go %s (%v), Carbon %d ms", s, got, err, want)
		}
	}
	for _, bad := range []string{"1 month", "2 years", "soon", "", "7 fortnights"} {
		if _, err := carbonInterval(bad); err == nil {
			t.Errorf("%q read: want an error", bad)
		}
	}
}
