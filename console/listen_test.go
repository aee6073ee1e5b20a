package console

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/testapp"
)

func TestListenAddr(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"6060", "127.0.0.1:6060", ""},
		{":6060", "127.0.0.1:6060", ""},
		{"0.0.0.0:9090", "0.0.0.0:9090", ""},
		{"[::1]:9090", "[::1]:9090", ""},
		{"localhost", "", `--pprof-addr "localhost": want PORT or HOST:PORT`},
		{"host:http", "", `"http" is not a port number`},
		{"99999", "", `"99999" is not a port number`},
	} {
		got, err := listenAddr("pprof-addr", c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestWorkServesPprofOnLoopback(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\A`)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(laraworkerBinary(t), "work", "--env", filepath.Join(dir, ".env"), "--sleep", "0.05",
		"--pprof-addr", strings.TrimPrefix(ln.Addr().String(), "127.0.0.1"), "--route", `App\Jobs\A=noop`)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	go io.Copy(io.Discard, bufio.NewReader(stderr))
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?debug=1", port)
	var body string
	waitFor(t, 10*time.Second, "a heap profile at "+url, func() bool {
		_, body = httpGet(url)
		return strings.Contains(body, "heap profile")
	})
	if !strings.Contains(body, "heap profile") {
		t.Fatalf("no heap profile at %s: %q", url, body)
	}
}
