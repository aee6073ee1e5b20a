package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// installBridgeConfig writes config/laraworker.php into the app; the test
// removes it when it ends.
func (s *suite) installBridgeConfig(t *testing.T, jobs string) {
	t.Helper()
	path := filepath.Join(s.app, "config", "laraworker.php")
	src := "<?php\n\nreturn [\n    'queue' => 'go',\n    'connection' => null,\n    'jobs' => [\n" + jobs + "    ],\n];\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
}

// TestBridgeRouteMatching: routes name a class's parent, an interface or a
// trait, as Laravel 13's Queue::route does; an explicit onQueue() wins; a
// ShouldBeUnique job is routed like any other (its payload names its lock
// for Go: TestBridgeRecordsUniqueAndModels); other classes are not
// touched.
func TestBridgeRouteMatching(t *testing.T) { onEachDB(t, testBridgeRouteMatching) }

func testBridgeRouteMatching(t *testing.T, s *suite) {
	s.installBridgeConfig(t, "        App\\Jobs\\Routed\\BaseReport::class => 'reports',\n"+
		"        Illuminate\\Contracts\\Queue\\ShouldBeEncrypted::class => 'encrypted-go',\n"+
		"        Illuminate\\Bus\\Batchable::class,\n")
	s.exec(t, "delete from cache_locks") // UniqueReport's lock from an earlier run
	for _, args := range [][]string{{"report"}, {"unique-report"}, {"encrypted"}, {"movable"}, {"movable", "--queue=explicit"}, {"noop"}} {
		s.artisan(t, append([]string{"app:dispatch"}, args...)...)
	}
	got := map[string][]string{}
	for _, j := range s.jobs(t) {
		got[j.Class] = append(got[j.Class], j.Queue)
	}
	want := map[string]string{
		`App\Jobs\Routed\MonthlyReport`: "reports",      // parent class
		`App\Jobs\Routed\UniqueReport`:  "reports",      // unique: routed too
		`App\Jobs\EncryptedJob`:         "encrypted-go", // interface
		`App\Jobs\MovableJob`:           "explicit,go",  // trait; onQueue() wins
		`App\Jobs\NoopJob`:              "default",
	}
	for class, queues := range want {
		sort.Strings(got[class])
		if strings.Join(got[class], ",") != queues {
			t.Errorf("%s went to %v, want %s", class, got[class], queues)
		}
	}
}

// TestBridgeConfigErrors: a route to a class that does not exist, or a
// hooks queue that is a queue Go serves, stops the app with a message
// naming it.
func TestBridgeConfigErrors(t *testing.T) { onEachDB(t, testBridgeConfigErrors) }

func testBridgeConfigErrors(t *testing.T, s *suite) {
	for _, c := range []struct{ jobs, want string }{
		{"        'App\\\\\\\\Jobs\\\\\\\\MovableJob',\n", `config/laraworker.php routes [App\\Jobs\\MovableJob]: doubled backslashes; write it as App\Jobs\MovableJob::class`},
		{"        App\\Jobs\\MoveableJob::class,\n", `config/laraworker.php routes [App\Jobs\MoveableJob]: no such class, interface or trait`},
		{"        App\\Jobs\\MovableJob::class => 'default',\n", `config/laraworker.php hooks_queue: [database] [default] is where laraworker runs App\Jobs\MovableJob; the hook jobs need a queue a PHP worker serves`},
	} {
		s.installBridgeConfig(t, c.jobs)
		cmd := s.phpCmd("app:dispatch", "noop")
		out, err := cmd.CombinedOutput()
		// Artisan wraps the message: compare without whitespace.
		if _, ok := err.(*exec.ExitError); !ok || !strings.Contains(squash(string(out)), squash(c.want)) {
			t.Errorf("%s: err %v, output:\n%s", c.jobs, err, tail(string(out)))
		}
	}
	if jobs := s.jobs(t); len(jobs) != 0 {
		t.Errorf("a broken config dispatched %+v", jobs)
	}
}

func squash(s string) string { return strings.Join(strings.Fields(s), "") }
