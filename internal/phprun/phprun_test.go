package phprun

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestExitErrorMessage(t *testing.T) {
	e := &ExitError{Stderr: "PHP Warning: x\nlaraworker: no bootstrap/app.php in /x\n"}
	if e.Message() != "no bootstrap/app.php in /x" {
		t.Errorf("%q", e.Message())
	}
	e = &ExitError{Stderr: "a\n\nb\nc\nd\n"}
	if e.Message() != "b | c | d" {
		t.Errorf("%q", e.Message())
	}
	if (&ExitError{}).Message() != "no error output" {
		t.Error("empty stderr")
	}
}

func TestLastLine(t *testing.T) {
	if got := LastLine([]byte("booting...\n{\"a\":1}\n")); string(got) != `{"a":1}` {
		t.Errorf("%q", got)
	}
}

func TestLimitedBuffer(t *testing.T) {
	var b bytes.Buffer
	l := &limitedBuffer{max: 4, buf: &b}
	for _, s := range []string{"ab", "cdef", "gh"} {
		if n, err := l.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatal(n, err)
		}
	}
	if b.String() != "abcd" {
		t.Errorf("%q", b.String())
	}
}

// TestRunTimeout: a script that outlives its limit is killed with what it
// started, and Run says so.
func TestRunTimeout(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("php is not installed")
	}
	started := time.Now()
	_, err = Run(context.Background(), Script{PHP: php, Source: []byte(`<?php exec('sleep 30'); echo "done\n";`), Timeout: 500 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) || time.Since(started) > 10*time.Second {
		t.Errorf("%v after %s", err, time.Since(started))
	}
	out, err := Run(context.Background(), Script{PHP: php, Source: []byte(`<?php echo implode(",", array_slice($argv, 1)), "\n";`), Args: []string{"a", "b c"}})
	if err != nil || strings.TrimSpace(string(out)) != "a,b c" {
		t.Errorf("%q %v", out, err)
	}
	_, err = Run(context.Background(), Script{PHP: php, Source: []byte(`<?php fwrite(fopen("php://stderr", "w"), "laraworker: broken\n"); exit(3);`)})
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Message() != "broken" {
		t.Errorf("%v", err)
	}
}
