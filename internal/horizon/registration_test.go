package horizon

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/rs/zerolog"
)

// stubWorker is the worker side of a Registration: it records what
// Horizon's commands did to it.
type stubWorker struct {
	mu         sync.Mutex
	paused     bool
	terminated []int
	resumes    int
}

func (s *stubWorker) Paused() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.paused }
func (s *stubWorker) Pause()       { s.mu.Lock(); s.paused = true; s.mu.Unlock() }
func (s *stubWorker) Resume()      { s.mu.Lock(); s.paused = false; s.resumes++; s.mu.Unlock() }
func (s *stubWorker) Terminate(status int) {
	s.mu.Lock()
	s.terminated = append(s.terminated, status)
	s.mu.Unlock()
}

// TestRegistrationFollowsHorizonsCommands: commands pushed to the
// supervisor's list as RedisHorizonCommandQueue::push writes them pause,
// continue and terminate the worker; its record says "paused" while it
// is; the records are refreshed while it runs and gone when it ends.
func TestRegistrationFollowsHorizonsCommands(t *testing.T) {
	srv := testredis.Start(t)
	rc := srv.Client(t)
	r := New(rc, "redis", Config{Prefix: prefix, Trim: Defaults().Trim})
	p, err := r.Processes(goWorker())
	if err != nil {
		t.Fatal(err)
	}
	w := &stubWorker{}
	reg := &Registration{Processes: p, Worker: w, Logger: zerolog.Nop(), Every: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	if err := reg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { reg.Run(ctx); close(done) }()
	status := func() string { return rc.HGet(ctx, prefix+"supervisor:"+p.SupervisorName(), "status").Val() }
	push := func(cmd string) { rc.RPush(ctx, prefix+"commands:"+p.SupervisorName(), cmd) }

	push(`{"command":"Laravel\\Horizon\\SupervisorCommands\\Pause","options":[]}`)
	testwait.Until(t, 5*time.Second, "the supervisor record paused", func() bool { return status() == "paused" })
	if st := rc.HGet(ctx, prefix+"master:"+p.MasterName(), "status").Val(); st != "paused" {
		t.Errorf("master status %q, want paused", st)
	}
	push(`{"command":"Laravel\\Horizon\\SupervisorCommands\\ContinueWorking","options":[]}`)
	testwait.Until(t, 5*time.Second, "the supervisor record running", func() bool { return status() == "running" })
	push(`{"command":"Laravel\\Horizon\\SupervisorCommands\\Terminate","options":{"status":1}}`)
	testwait.Until(t, 5*time.Second, "Terminate(1)", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.terminated) == 1 && w.terminated[0] == 1
	})
	cancel()
	testwait.Recv(t, done, 5*time.Second, "the registration's end")
	for _, key := range []string{"master:" + p.MasterName(), "supervisor:" + p.SupervisorName()} {
		if n := rc.Exists(context.Background(), prefix+key).Val(); n != 0 {
			t.Errorf("%s still there after the end", key)
		}
	}
	if n := rc.ZCard(context.Background(), prefix+"masters").Val(); n != 0 {
		t.Errorf("%d masters listed after the end", n)
	}
}
