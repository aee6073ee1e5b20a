package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
)

// The functions of the module one plain no-op job runs, claim to delete
// (scripts/plainjob-funcs.sh), may not pass issue 34 item 4's bound of
// 120 on either store. Measured 2026-12-07 at the commit that set it:
// sqlite 118 and 118 (the first job after the worker's start, and the
// next one), redis 117 and 117; 119 and 118 once the class's rule test
// was one function (classAsksForRules); 120 and 119 once the idle wait
// counted the quiet time (idlePoll.quiet, issue 37). Earlier counts: 2026-12-06 at bbf36ed
// sqlite 178-181, redis 152; 2026-12-07 morning sqlite 145 and 134, redis
// 132 and 128; at f2865a3 sqlite 143 and 132, redis 130 and 126.
const (
	ceilingSQLite = 120
	ceilingRedis  = 120
)

// plainJobRuns is how many times a store's count is measured before it is
// called over its ceiling. On a loaded machine a database claim slower
// than 20 ms is followed by its cost check (claimscan.go: nine more
// functions, at most once every 30 s in a worker), which is not the plain
// job's path: one run within the ceiling shows the path is.
const plainJobRuns = 3

// TestPlainJobFunctions builds test/bench/plainjob with coverage and
// counts, per store, the functions one plain job runs. It needs no
// server for SQLite; Redis is the one at REDIS_ADDR (127.0.0.1:6379),
// skipped when absent.
func TestPlainJobFunctions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module with coverage (about 20 s warm): not with -short")
	}
	redisAddr := os.Getenv("REDIS_ADDR")
	if redisAddr == "" {
		redisAddr = "127.0.0.1:6379"
	}
	for _, tc := range []struct {
		store   string
		ceiling int
	}{{"sqlite", ceilingSQLite}, {"redis", ceilingRedis}} {
		t.Run(tc.store, func(t *testing.T) {
			if tc.store == "redis" {
				testdsn.Need(t, "Redis (REDIS_ADDR)", "tcp", redisAddr)
			}
			var failures []string
			for run := 1; run <= plainJobRuns; run++ {
				cmd := exec.Command("scripts/plainjob-funcs.sh", tc.store)
				cmd.Dir = "../../.."
				cmd.Env = append(os.Environ(), "REDIS_ADDR="+redisAddr, "MAX_FUNCS="+strconv.Itoa(tc.ceiling), "VERBOSE=1")
				out, err := cmd.CombinedOutput()
				if err == nil {
					t.Logf("run %d:\n%s", run, out)
					return
				}
				failures = append(failures, fmt.Sprintf("run %d: %v\n%s", run, err, out))
			}
			t.Fatalf("scripts/plainjob-funcs.sh %s: over the ceiling of %d in %d runs:\n%s", tc.store, tc.ceiling, plainJobRuns, strings.Join(failures, "\n"))
		})
	}
}
