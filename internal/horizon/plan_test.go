package horizon

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
)

// The skeleton's config/horizon.php (laravel/horizon's published config),
// as PHP literals.
const skeletonDefaults = `'defaults' => ['supervisor-1' => ['connection' => 'redis', 'queue' => ['default'], 'balance' => 'auto',
	'autoScalingStrategy' => 'time', 'maxProcesses' => 1, 'maxTime' => 0, 'maxJobs' => 0, 'memory' => 128, 'tries' => 1,
	'timeout' => 60, 'nice' => 0]]`

var planCases = []struct {
	name, config, env, supervisor string
}{
	{"skeleton production", `[` + skeletonDefaults + `, 'environments' => ['production' => ['supervisor-1' => ['maxProcesses' => 10,
		'balanceMaxShift' => 1, 'balanceCooldown' => 3]], 'local' => ['supervisor-1' => ['maxProcesses' => 3]]]]`, "production", "supervisor-1"},
	{"skeleton local", `[` + skeletonDefaults + `, 'environments' => ['production' => ['supervisor-1' => ['maxProcesses' => 10]],
		'local' => ['supervisor-1' => ['maxProcesses' => 3]]]]`, "local", "supervisor-1"},
	// The first matching key wins: the wildcard before the exact name.
	{"wildcard first", `['environments' => ['prod*' => ['emails' => ['connection' => 'redis', 'queue' => ['mail', 'mail-eu'],
		'processes' => 4, 'tries' => 5, 'backoff' => [1, 5, 10]]], 'production' => ['emails' => ['connection' => 'redis', 'queue' => 'x']]]]`,
		"production", "emails"},
	// array_replace_recursive merges lists by index: ['a','b','c'] under
	// ['high'] is ['high','b','c'].
	{"lists merge by index", `['defaults' => ['s' => ['connection' => 'redis', 'queue' => ['a', 'b', 'c'], 'timeout' => 30]],
		'environments' => ['*' => ['s' => ['queue' => ['high'], 'memory' => '256', 'sleep' => 0.5, 'rest' => '1', 'force' => true]]]]`, "staging", "s"},
	// A supervisor only in the defaults is in every environment's plan;
	// no queue is the connection's default queue.
	{"defaults only", `['defaults' => ['s' => ['connection' => 'redis-2', 'maxJobs' => 1000, 'maxTime' => 3600, 'workersName' => 'w']],
		'environments' => ['production' => ['other' => ['connection' => 'redis']]]]`, "production", "s"},
	{"snake case keys", `['environments' => ['production' => ['s' => ['connection' => 'redis', 'max_processes' => 7, 'balance_max_shift' => 2,
		'auto_scaling_strategy' => 'size', 'min_processes' => 2]]]]`, "production", "s"},
	{"no environment matches", `['environments' => ['production' => ['s' => ['connection' => 'redis']]]]`, "local", "s"},
	{"no such supervisor", `['environments' => ['production' => ['s' => ['connection' => 'redis']]]]`, "production", "t"},
	{"minProcesses 0", `['environments' => ['production' => ['s' => ['connection' => 'redis', 'minProcesses' => 0]]]]`, "production", "s"},
}

// TestPlannedSupervisorIsProvisioningPlans: a supervisor read from the
// config as PHP reports it has the options Horizon's ProvisioningPlan and
// SupervisorOptions give its workers (testdata/provisioning-plan.php,
// written from Horizon's source, with Laravel's own Str), and where
// Horizon refuses, so does Go.
func TestPlannedSupervisorIsProvisioningPlans(t *testing.T) {
	phptest.NeedPHP(t)
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			out, err := exec.Command("php", filepath.Join("testdata", "provisioning-plan.php"), c.config, c.env, c.supervisor).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var php struct {
				Config  map[string]any
				Options map[string]any
				Error   string
			}
			if err := json.Unmarshal(out, &php); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			s, err := PlannedSupervisor(php.Config, c.env, c.supervisor)
			if php.Error != "" {
				if err == nil {
					t.Fatalf("Horizon fails (%s); Go took %+v", php.Error, s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range php.Options {
				if got := goOption(s, key); got != phpText(want) && key != "name" && key != "parentId" {
					t.Errorf("%s: Go %q, Horizon %q", key, got, phpText(want))
				}
			}
		})
	}
}

// phpText is an option as horizon:work's command line has it (sprintf's
// %s), null as "" (the connection's default queue).
func phpText(v any) string { return phpKey(v) }

// goOption is Go's value of a SupervisorOptions key, as text.
func goOption(s Supervisor, key string) string {
	ints := map[string]int{"maxProcesses": s.MaxProcesses, "minProcesses": s.MinProcesses, "maxTries": s.MaxTries,
		"maxTime": s.MaxTime, "maxJobs": s.MaxJobs, "memory": s.Memory, "nice": s.Nice, "timeout": s.Timeout,
		"balanceCooldown": s.BalanceCooldown, "balanceMaxShift": s.BalanceMaxShift}
	if n, ok := ints[key]; ok {
		return phpKey(float64(n))
	}
	switch key {
	case "sleep":
		return phpKey(s.Sleep)
	case "rest":
		return phpKey(s.Rest)
	case "force":
		return phpKey(s.Force)
	}
	return map[string]string{"balance": s.Balance, "connection": s.Connection, "queue": s.Queue, "backoff": s.Backoff,
		"workersName": s.WorkersName, "autoScalingStrategy": s.AutoScalingStrategy}[key]
}

// TestPlannedSupervisorWithoutOrder: read without the environments' order
// (config files Go evaluates alone give it; a JSON object does not), a
// match the order would decide is refused, not guessed.
func TestPlannedSupervisorWithoutOrder(t *testing.T) {
	hc := map[string]any{"environments": map[string]any{
		"prod*":      map[string]any{"s": map[string]any{"connection": "redis", "queue": "a"}},
		"production": map[string]any{"s": map[string]any{"connection": "redis", "queue": "b"}},
	}}
	if _, err := PlannedSupervisor(hc, "production", "s"); err == nil || !strings.Contains(err.Error(), "order") {
		t.Errorf("two keys match without their order: %v, want a refusal", err)
	}
	hc["environment_keys"] = []any{"production", "prod*"}
	if s, err := PlannedSupervisor(hc, "production", "s"); err != nil || s.Queue != "b" || s.Environment != "production" {
		t.Errorf("with the order: %+v, %v; want production's", s, err)
	}
	if s, err := PlannedSupervisor(hc, "prod-eu", "s"); err != nil || s.Queue != "a" {
		t.Errorf("one match: %+v, %v", s, err)
	}
}
