// Package testbeanstalkd starts a private beanstalkd (Debian's package
// beanstalkd, 1.12) for a test on a free loopback port, without a binlog,
// stopped when the test ends. A machine without the binary skips the test,
// unless LARAWORKER_TEST_REQUIRE_DB is set (CI sets it), which fails it.
package testbeanstalkd

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
)

// Server is one beanstalkd process on 127.0.0.1.
type Server struct {
	Port int
	// Addr is "127.0.0.1:<port>".
	Addr string
	bin  string
	dir  string
	args []string

	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
}

// Start starts beanstalkd with extra arguments (e.g. "-z", "1024") and
// stops it at the end of the test.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("beanstalkd")
	if err != nil {
		msg := "testbeanstalkd: beanstalkd is not installed (Debian: beanstalkd; testdata/setup-php.sh installs it)"
		if testdsn.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	var lastErr error
	// Another process can take the port between the probe and the bind.
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testbeanstalkd: %v", err)
		}
		s := &Server{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), bin: bin, dir: dir,
			args: append([]string{"-l", "127.0.0.1", "-p", strconv.Itoa(port)}, extra...)}
		if lastErr = s.start(); lastErr == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("testbeanstalkd: %v", lastErr)
	return nil
}

func (s *Server) start() error {
	logFile, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("beanstalkd-%d.log", s.Port)))
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.log = cmd, logFile
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for s.ping() != nil {
		select {
		case <-exited:
			s.Kill()
			return fmt.Errorf("beanstalkd on port %d exited: %s", s.Port, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("beanstalkd on port %d did not answer within 10s: %s", s.Port, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// ping asks list-tubes-watched and checks the answer's start.
func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("list-tubes-watched\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(buf[:n], []byte("OK ")) {
		return errors.New("unexpected answer " + strconv.Quote(string(buf[:n])))
	}
	return nil
}

// Kill stops the server at once (SIGKILL): its jobs are gone. Safe to
// call twice.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, logFile := s.cmd, s.log
	s.cmd, s.log = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	for i := 0; i < 500 && s.ping() == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if logFile != nil {
		logFile.Close()
	}
}

// Restart kills the server and starts it again on the same port, empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	var err error
	for range 20 {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("testbeanstalkd: restart: %v", err)
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("beanstalkd-%d.log", s.Port)))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
