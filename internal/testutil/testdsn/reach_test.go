package testdsn

import (
	"net"
	"strings"
	"testing"
	"time"
)

// A listening server is reachable; a closed port is not, the answer comes
// at once, and the skip line names the address and what to start.
func TestReachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := ln.Addr().String()
	if msg := Unreachable("Test server", "tcp", open); msg != "" {
		t.Fatalf("listening server: %s", msg)
	}
	closedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := closedLn.Addr().String()
	closedLn.Close()
	start := time.Now()
	msg := Unreachable("Test server", "tcp", closed)
	if took := time.Since(start); took > probeTimeout+time.Second {
		t.Errorf("probe of a closed port took %s", took)
	}
	if !strings.HasPrefix(msg, "Test server not reachable at "+closed+": start it or run scripts/services.sh") || strings.Contains(msg, "\n") {
		t.Errorf("skip line %q", msg)
	}
	// The answer is cached for the process: a server started later is not
	// seen, and no test waits on a second dial.
	ln.Close()
	if msg := Unreachable("Test server", "tcp", open); msg != "" {
		t.Errorf("cached answer changed: %s", msg)
	}
}
