package horizon

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/redis/go-redis/v9"
)

// The process records are checked against what Horizon's PHP reads of
// them: testdata/horizon-reads.php does the reads of Horizon's
// repositories, dashboard controllers and commands (from Horizon's
// source; Horizon itself cannot be installed here) through phpredis.

// horizonReads is what horizon-reads.php prints.
type horizonReads struct {
	Masters []struct {
		Name, Environment, PID, Status string
		Supervisors                    []string
	}
	Supervisors []struct {
		Name, Master, PID, Status string
		Processes                 map[string]int
		Options                   map[string]any
	}
	Workers []struct {
		Name string
		Rows []struct {
			Display, Queues, Balancing, Status string
			Connection                         *string
			Processes                          int
		}
	}
	Processes, PausedMasters, StatusCommand int
	Status                                  string
	List, SupervisorsCommand                [][]any
	LongestActiveTimeout                    int
}

// readAsHorizon runs horizon-reads.php against server (host:port, or
// "cluster:" and the nodes).
func readAsHorizon(t *testing.T, server, prefix, plan string) horizonReads {
	t.Helper()
	phptest.NeedPHP(t)
	args := []string{filepath.Join("testdata", "horizon-reads.php"), server, prefix}
	if plan != "" {
		args = append(args, plan, "production")
	}
	out, err := exec.Command("php", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("horizon-reads.php: %v\n%s", err, out)
	}
	var r horizonReads
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("horizon-reads.php printed %s: %v", out, err)
	}
	return r
}

// goWorker is the process config of a Go worker on two queues.
func goWorker() ProcessConfig {
	return ProcessConfig{
		Basename: "web-1", Environment: "production (laraworker)", Supervisor: "supervisor-1", PID: 4242,
		Options: SupervisorOptions{Balance: "off", Connection: "redis", Queue: "high,emails/eu", Backoff: "1,5,10",
			MaxProcesses: 8, MinProcesses: 8, MaxTries: 3, Memory: 128, WorkersName: "default", Sleep: 3,
			Timeout: 90, BalanceCooldown: 3, BalanceMaxShift: 1, ParentID: 4242, Rest: 0.5,
			AutoScalingStrategy: "time", Laraworker: "1.2.3"},
	}
}

// plan is a plan whose "production" environment has the Go worker's
// supervisor and another one: a PHP master of that environment would
// show supervisor-2 as inactive when it does not run it.
const plan = `{"production":{"supervisor-1":{"queue":["high"],"balance":"auto"},"supervisor-2":{"queue":["low"],"balance":"simple"}}}`

// TestProcessRecordsAreWhatHorizonReads: a Go worker's records are read
// by Horizon's repositories as a master running one supervisor: listed
// by the dashboard with its queues and its concurrency as processes,
// counted in the process total, named by horizon:list without its
// master, its pid the one horizon:pause would signal; paused, the
// dashboard and horizon:status say so; no planned supervisor is listed
// under it as inactive (its environment is marked).
func TestProcessRecordsAreWhatHorizonReads(t *testing.T) {
	srv := testredis.Start(t)
	rc := srv.Client(t)
	r := New(rc, "redis", Config{Prefix: prefix, Trim: Defaults().Trim})
	p, err := r.Processes(goWorker())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.MasterName(), "web-1-laraworker-") || p.SupervisorName() != p.MasterName()+":supervisor-1" {
		t.Fatalf("names %q, %q", p.MasterName(), p.SupervisorName())
	}
	if err := p.Persist(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	got := readAsHorizon(t, srv.Addr, prefix, plan)
	checkRunningRecords(t, got, p)
	if err := p.Persist(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	got = readAsHorizon(t, srv.Addr, prefix, plan)
	if got.Status != "paused" || got.PausedMasters != 1 || got.StatusCommand != 1 || got.Supervisors[0].Status != "paused" {
		t.Errorf("paused: dashboard status %q, paused masters %d, horizon:status exit %d, supervisor %q; want paused, 1, 1, paused",
			got.Status, got.PausedMasters, got.StatusCommand, got.Supervisors[0].Status)
	}
	if err := p.Forget(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got = readAsHorizon(t, srv.Addr, prefix, plan); got.Status != "inactive" || len(got.Supervisors) != 0 || got.StatusCommand != 2 {
		t.Errorf("forgotten: status %q, %d supervisors, horizon:status exit %d; want inactive, none, 2", got.Status, len(got.Supervisors), got.StatusCommand)
	}
}

func checkRunningRecords(t *testing.T, got horizonReads, p *Processes) {
	t.Helper()
	if len(got.Masters) != 1 || got.Masters[0].Name != p.MasterName() || got.Masters[0].PID != "4242" ||
		got.Masters[0].Status != "running" || !reflect.DeepEqual(got.Masters[0].Supervisors, []string{p.SupervisorName()}) {
		t.Fatalf("masters as Horizon reads them: %+v", got.Masters)
	}
	if len(got.Workers) != 1 || len(got.Workers[0].Rows) != 1 {
		t.Fatalf("the dashboard's supervisors: %+v (a planned supervisor shown as inactive under the Go master?)", got.Workers)
	}
	row := got.Workers[0].Rows[0]
	if row.Display != "supervisor-1" || row.Queues != "high, emails/eu" || row.Processes != 8 || row.Balancing != "Off" ||
		row.Status != "running" || row.Connection == nil || *row.Connection != "redis" {
		t.Errorf("the dashboard's row: %+v", row)
	}
	if got.Processes != 8 || got.Status != "running" || got.StatusCommand != 0 || got.LongestActiveTimeout != 90 {
		t.Errorf("processes %d, status %q, horizon:status exit %d, longest timeout %d; want 8, running, 0, 90",
			got.Processes, got.Status, got.StatusCommand, got.LongestActiveTimeout)
	}
	if want := []any{p.MasterName(), "4242", "supervisor-1", "running"}; len(got.List) != 1 || !reflect.DeepEqual(got.List[0], want) {
		t.Errorf("horizon:list %v, want %v", got.List, want)
	}
	if want := []any{p.SupervisorName(), "4242", "running", "redis:high,emails/eu (8)", "off"}; len(got.SupervisorsCommand) != 1 || !reflect.DeepEqual(got.SupervisorsCommand[0], want) {
		t.Errorf("horizon:supervisors %v, want %v", got.SupervisorsCommand, want)
	}
	opts := got.Supervisors[0].Options
	if opts["laraworker"] != "1.2.3" || opts["name"] != p.SupervisorName() || opts["backoff"] != "1,5,10" || opts["rest"] != 0.5 || opts["maxTries"] != 3.0 {
		t.Errorf("options %v", opts)
	}
}

// TestProcessRecordsBytes: the hashes hold what json_encode writes (PHP
// escapes "/"), the keys expire as Horizon's do (15 s, 30 s), the sets
// are scored with the Unix second, and members older than 14 s leave the
// sets (ExpireSupervisors).
func TestProcessRecordsBytes(t *testing.T) {
	phptest.NeedPHP(t)
	srv := testredis.Start(t)
	rc := srv.Client(t)
	ctx := t.Context()
	r := New(rc, "redis", Config{Prefix: prefix, Trim: Defaults().Trim})
	now := time.Now()
	r.SetClock(func() time.Time { return now })
	p, err := r.Processes(goWorker())
	if err != nil {
		t.Fatal(err)
	}
	stale := float64(now.Unix() - 15)
	rc.ZAdd(ctx, prefix+"masters", redis.Z{Score: stale, Member: "gone-AbCd"})
	rc.ZAdd(ctx, prefix+"supervisors", redis.Z{Score: stale, Member: "gone-AbCd:supervisor-1"})
	if err := p.Persist(ctx, false); err != nil {
		t.Fatal(err)
	}
	sup := rc.HGetAll(ctx, prefix+"supervisor:"+p.SupervisorName()).Val()
	want := phpJSON(t, `['balance' => 'off', 'connection' => 'redis', 'queue' => 'high,emails/eu', 'backoff' => '1,5,10', 'force' => false,
		'maxProcesses' => 8, 'minProcesses' => 8, 'maxTries' => 3, 'maxTime' => 0, 'maxJobs' => 0, 'memory' => 128, 'nice' => 0,
		'name' => '`+p.SupervisorName()+`', 'workersName' => 'default', 'sleep' => 3, 'timeout' => 90, 'balanceCooldown' => 3,
		'balanceMaxShift' => 1, 'parentId' => 4242, 'rest' => 0.5, 'autoScalingStrategy' => 'time', 'laraworker' => '1.2.3']`)
	if sup["options"] != want {
		t.Errorf("options\n%s\njson_encode writes\n%s", sup["options"], want)
	}
	if want := phpJSON(t, `['redis:high,emails/eu' => 8]`); sup["processes"] != want {
		t.Errorf("processes %s, json_encode writes %s", sup["processes"], want)
	}
	if want := phpJSON(t, `['`+p.SupervisorName()+`']`); rc.HGet(ctx, prefix+"master:"+p.MasterName(), "supervisors").Val() != want {
		t.Errorf("master supervisors, json_encode writes %s", want)
	}
	for key, ttl := range map[string]time.Duration{"master:" + p.MasterName(): 15 * time.Second, "supervisor:" + p.SupervisorName(): 30 * time.Second} {
		if got := rc.TTL(ctx, prefix+key).Val(); got <= ttl-2*time.Second || got > ttl {
			t.Errorf("%s expires in %s, want %s", key, got, ttl)
		}
	}
	for set, member := range map[string]string{"masters": p.MasterName(), "supervisors": p.SupervisorName()} {
		if got := rc.ZRangeWithScores(ctx, prefix+set, 0, -1).Val(); len(got) != 1 || got[0].Member != member || got[0].Score != float64(now.Unix()) {
			t.Errorf("%s: %v, want only %s scored %d", set, got, member, now.Unix())
		}
	}
}

// phpJSON is json_encode of a PHP array literal, by PHP.
func phpJSON(t *testing.T, literal string) string {
	t.Helper()
	out, err := exec.Command("php", "-r", "echo json_encode("+literal+");").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestTakeCommands: what RedisHorizonCommandQueue::push writes is read
// and the list emptied; an entry that is not a command is named and
// dropped, the others kept.
func TestTakeCommands(t *testing.T) {
	phptest.NeedPHP(t)
	srv := testredis.Start(t)
	rc := srv.Client(t)
	r := New(rc, "redis", Config{Prefix: prefix, Trim: Defaults().Trim})
	p, err := r.Processes(goWorker())
	if err != nil {
		t.Fatal(err)
	}
	key := prefix + "commands:" + p.SupervisorName()
	rc.RPush(t.Context(), key, phpJSON(t, `['command' => 'Laravel\Horizon\SupervisorCommands\Pause', 'options' => []]`),
		"not json", phpJSON(t, `['command' => 'Laravel\Horizon\SupervisorCommands\Terminate', 'options' => ['status' => 1]]`))
	cmds, err := p.TakeCommands(t.Context())
	var bad *BadCommandsError
	if !errors.As(err, &bad) || len(bad.Errs) != 1 || !strings.Contains(err.Error(), "not json") {
		t.Errorf("error %v, want the bad entry named", err)
	}
	if len(cmds) != 2 || cmds[0].Command != CommandPause || cmds[1].Command != CommandTerminate || cmds[1].Options["status"] != 1.0 {
		t.Errorf("commands %+v", cmds)
	}
	if n := rc.LLen(t.Context(), key).Val(); n != 0 {
		t.Errorf("%d entries left", n)
	}
}

// TestBasenameIsStrSlug: Basename is Laravel's Str::slug of the hostname
// (Debian's Laravel 8.83; the function is the same through 13.x for
// ASCII).
func TestBasenameIsStrSlug(t *testing.T) {
	phptest.NeedPHP(t)
	hosts := []string{"web-1", "Web_01.example.COM", "ip-10-0-0-12.eu-west-1.compute.internal", "a--b__c", "-edge-", "user@box", "MacBook Pro.local", "x.y-z_9"}
	script := `require '/usr/share/php/Illuminate/Support/autoload.php'; foreach (array_slice($argv, 1) as $h) { echo Illuminate\Support\Str::slug($h), "\n"; }`
	out, err := exec.Command("php", append([]string{"-r", script, "--"}, hosts...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, h := range hosts {
		if got, err := Basename(h); err != nil || got != want[i] {
			t.Errorf("Basename(%q) = %q, %v; Str::slug gives %q", h, got, err, want[i])
		}
	}
	if _, err := Basename("café"); err == nil {
		t.Error("a hostname beyond ASCII: want an error")
	}
}
