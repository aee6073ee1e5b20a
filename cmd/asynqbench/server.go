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
}

func startRedis(ctx context.Context, bin, dir string) (*redisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &redisServer{cmd: cmd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	s.rc = redis.NewClient(&redis.Options{Addr: s.addr, Protocol: 2, DisableIdentity: true})
	deadline := time.Now().Add(10 * time.Second)
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

func (s *redisServer) stop() {
	_ = s.rc.Close()
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
