package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/servercpu"
	"github.com/redis/go-redis/v9"
)

// redisServer is the private redis-server both contenders run on: a
// loopback port of its own, nothing saved to disk, flushed between
// drains, stopped at the end. Never the machine's Redis.
type redisServer struct {
	cmd     *exec.Cmd
	addr    string
	version string
	rc      *redis.Client
	// callgrind: the server runs under valgrind's callgrind with its
	// instrumentation off; count turns it on around each drain.
	callgrind bool
}

func startRedis(ctx context.Context, bin, dir string, callgrind bool) (*redisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no"}
	if callgrind {
		args = append([]string{"--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + filepath.Join(dir, "redis.callgrind"), bin}, args...)
		bin = "valgrind"
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &redisServer{cmd: cmd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), callgrind: callgrind}
	s.rc = redis.NewClient(&redis.Options{Addr: s.addr, Protocol: 2, DisableIdentity: true})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err = s.rc.Ping(ctx).Err(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %w", s.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	info, _ := s.rc.Info(ctx, "server").Result()
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			s.version = v
		}
	}
	return s, nil
}

// cpu is the server process's CPU time so far (user + system).
func (s *redisServer) cpu() (time.Duration, error) { return servercpu.Process(s.cmd.Process.Pid) }

// flush empties the server between drains.
func (s *redisServer) flush(ctx context.Context) error { return s.rc.FlushAll(ctx).Err() }

// stop shuts the server down (SHUTDOWN NOSAVE, so that callgrind writes
// its profile), killing it if it has not exited after a minute.
func (s *redisServer) stop() {
	_ = s.rc.Do(context.Background(), "shutdown", "nosave").Err()
	_ = s.rc.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// countStart zeroes the server's instruction counter and turns callgrind's
// instrumentation on (callgrind_control, through vgdb).
func (s *redisServer) countStart(ctx context.Context) error {
	if !s.callgrind {
		return nil
	}
	pid := strconv.Itoa(s.cmd.Process.Pid)
	for _, arg := range []string{"--instr=on", "--zero"} {
		if out, err := exec.CommandContext(ctx, "callgrind_control", arg, pid).CombinedOutput(); err != nil {
			return fmt.Errorf("callgrind_control %s: %w: %s", arg, err, out)
		}
	}
	return nil
}

// countEnd turns the instrumentation off and returns the instructions
// the server ran since countStart, all threads.
func (s *redisServer) countEnd(ctx context.Context) (int64, error) {
	if !s.callgrind {
		return 0, nil
	}
	pid := strconv.Itoa(s.cmd.Process.Pid)
	out, err := exec.CommandContext(ctx, "callgrind_control", "-e", pid).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("callgrind_control -e: %w: %s", err, out)
	}
	if o, err := exec.CommandContext(ctx, "callgrind_control", "--instr=off", pid).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("callgrind_control --instr=off: %w: %s", err, o)
	}
	return parseTotals(string(out))
}

// parseTotals sums the per-thread lines under "Totals:" of
// callgrind_control -e ("   Th 1  4,986,649").
func parseTotals(out string) (int64, error) {
	var total int64
	seen := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "Th" {
			n, err := strconv.ParseInt(strings.ReplaceAll(f[2], ",", ""), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("callgrind_control -e: %q: %w", line, err)
			}
			total, seen = total+n, true
		}
	}
	if !seen {
		return 0, fmt.Errorf("callgrind_control -e printed no counters: %s", out)
	}
	return total, nil
}

// resetStats zeroes the server's command counters (INFO commandstats)
// before a drain.
func (s *redisServer) resetStats(ctx context.Context) error {
	return s.rc.ConfigResetStat(ctx).Err()
}

// commands is how many commands the server ran since resetStats, those
// scripts called included, leaving out this program's own INFO and
// CONFIG: what redis-server does for the drain, command by command.
func (s *redisServer) commands(ctx context.Context) (int64, error) {
	info, err := s.rc.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || name == "cmdstat_info" || strings.HasPrefix(name, "cmdstat_config") {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO commandstats: %q: %w", line, err)
		}
		total += n
	}
	return total, nil
}
