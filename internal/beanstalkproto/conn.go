// Package beanstalkproto is a client of beanstalkd's text protocol
// (doc/protocol.txt of beanstalkd 1.12): one Conn is one TCP connection,
// whose commands are answered in order. Commands may be pipelined (Do
// sends several before reading their replies). beanstalkd ties a reserved
// job to the connection that reserved it: only that connection may delete,
// release, bury or touch it, and the server puts its reserved jobs back
// to ready the moment it closes. A Conn is not safe for concurrent use.
package beanstalkproto

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Laravel's (pheanstalk's) defaults.
const (
	DefaultPort     = 11300
	DefaultPriority = 1024
	DefaultTTR      = 60
)

// Errors the server answers with.
var (
	// ErrNotFound: no such job, or (release, bury, touch) not reserved by
	// this connection; a peek or stats of nothing.
	ErrNotFound = errors.New("beanstalkd: NOT_FOUND")
	// ErrTimedOut: reserve-with-timeout found no job in time.
	ErrTimedOut = errors.New("beanstalkd: TIMED_OUT")
	// ErrDeadlineSoon: a job this connection reserved is within a second
	// of its time-to-run.
	ErrDeadlineSoon = errors.New("beanstalkd: DEADLINE_SOON")
	// ErrBuried: the server buried the job instead (out of memory).
	ErrBuried = errors.New("beanstalkd: BURIED (the server is out of memory)")
	// ErrJobTooBig: the body is over the server's max-job-size (-z).
	ErrJobTooBig = errors.New("beanstalkd: JOB_TOO_BIG: the payload is larger than the server's max-job-size (beanstalkd -z, 65535 bytes by default)")
	// ErrDraining: the server takes no new jobs (drain mode).
	ErrDraining = errors.New("beanstalkd: DRAINING: the server is in drain mode and takes no new jobs")
	// ErrBroken: the connection failed earlier; its reserved jobs are back
	// to ready on the server (or will be after their time-to-run).
	ErrBroken = errors.New("beanstalkd: the connection is broken")
)

// ServerError is any other error line (BAD_FORMAT, UNKNOWN_COMMAND,
// OUT_OF_MEMORY, INTERNAL_ERROR...) or an unexpected reply.
type ServerError struct {
	Command string
	Reply   string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("beanstalkd: %s answered %q", e.Command, e.Reply)
}

// Conn is one connection to beanstalkd.
type Conn struct {
	c         net.Conn
	r         *bufio.Reader
	w         *bufio.Writer
	ioTimeout time.Duration
	err       error // set once an exchange failed: the stream is out of step
}

// DefaultIOTimeout bounds one exchange (beyond a reserve's own timeout).
const DefaultIOTimeout = 30 * time.Second

// Dial connects to addr ("host:port"), giving up after connectTimeout
// (or when ctx ends).
func Dial(ctx context.Context, addr string, connectTimeout time.Duration) (*Conn, error) {
	d := net.Dialer{Timeout: connectTimeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("beanstalkd: connecting to %s: %w", addr, err)
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 16<<10), ioTimeout: DefaultIOTimeout}, nil
}

// Close closes the connection: the server puts back every job it
// reserved.
func (c *Conn) Close() error {
	if c.err == nil {
		c.err = ErrBroken
	}
	return c.c.Close()
}

// Broken reports whether an exchange failed (the connection must be
// replaced).
func (c *Conn) Broken() bool { return c.err != nil }

// Cmd is one command: its line (without CRLF) and, for put, its body.
type Cmd struct {
	Line string
	Body []byte
	// Wait is how long the server may take to answer beyond the I/O
	// timeout (reserve-with-timeout's seconds).
	Wait time.Duration
}

// Reply is one answer: its first word, the rest of its line, and the data
// that followed (RESERVED, FOUND, OK).
type Reply struct {
	Word string
	Args []string
	Data []byte
}

// Do sends cmds in one write and reads their replies in order. An I/O
// error, or a reply that cannot be read, breaks the connection (ErrBroken
// from then on): whether the commands were carried out is unknown.
func (c *Conn) Do(cmds ...Cmd) ([]Reply, error) {
	if c.err != nil {
		return nil, c.err
	}
	var wait time.Duration
	for _, cmd := range cmds {
		if strings.ContainsAny(cmd.Line, "\r\n") {
			return nil, fmt.Errorf("beanstalkd: a command line holds a line break: %q", cmd.Line)
		}
		wait = max(wait, cmd.Wait)
	}
	_ = c.c.SetDeadline(time.Now().Add(c.ioTimeout + wait))
	replies, err := c.exchange(cmds)
	if err != nil {
		c.err = fmt.Errorf("%w: %v", ErrBroken, err)
		_ = c.c.Close()
		return nil, c.err
	}
	return replies, nil
}

func (c *Conn) exchange(cmds []Cmd) ([]Reply, error) {
	for _, cmd := range cmds {
		c.w.WriteString(cmd.Line)
		c.w.WriteString("\r\n")
		if cmd.Body != nil {
			c.w.Write(cmd.Body)
			c.w.WriteString("\r\n")
		}
	}
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	replies := make([]Reply, len(cmds))
	for i := range cmds {
		r, err := c.readReply()
		if err != nil {
			return nil, err
		}
		replies[i] = r
	}
	return replies, nil
}

// maxLine bounds a reply line (the longest is "RESERVED <id> <bytes>").
const maxLine = 1024

func (c *Conn) readReply() (Reply, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return Reply{}, err
	}
	if len(line) > maxLine || len(line) < 2 || line[len(line)-2] != '\r' {
		return Reply{}, fmt.Errorf("malformed reply line %q", line)
	}
	fields := strings.Fields(string(line[:len(line)-2]))
	if len(fields) == 0 {
		return Reply{}, errors.New("empty reply line")
	}
	r := Reply{Word: fields[0], Args: fields[1:]}
	switch r.Word {
	case "RESERVED", "FOUND", "OK":
		if len(r.Args) == 0 {
			return Reply{}, fmt.Errorf("reply %q without a length", line)
		}
		n, err := strconv.Atoi(r.Args[len(r.Args)-1])
		if err != nil || n < 0 {
			return Reply{}, fmt.Errorf("reply %q with a bad length", line)
		}
		r.Data = make([]byte, n+2)
		if _, err := io.ReadFull(c.r, r.Data); err != nil {
			return Reply{}, err
		}
		if r.Data[n] != '\r' || r.Data[n+1] != '\n' {
			return Reply{}, errors.New("data not followed by CRLF")
		}
		r.Data = r.Data[:n]
	}
	return r, nil
}

// Err is the error a reply that is not want stands for (nil when it is).
func (r Reply) Err(cmd string, want ...string) error {
	for _, w := range want {
		if r.Word == w {
			return nil
		}
	}
	switch r.Word {
	case "NOT_FOUND":
		return ErrNotFound
	case "TIMED_OUT":
		return ErrTimedOut
	case "DEADLINE_SOON":
		return ErrDeadlineSoon
	case "BURIED":
		return ErrBuried
	case "JOB_TOO_BIG":
		return ErrJobTooBig
	case "DRAINING":
		return ErrDraining
	}
	verb, _, _ := strings.Cut(cmd, " ")
	return &ServerError{Command: verb, Reply: strings.TrimSpace(r.Word + " " + strings.Join(r.Args, " "))}
}

// ID is the reply's first argument as a job id (INSERTED, RESERVED,
// FOUND).
func (r Reply) ID() (uint64, error) {
	if len(r.Args) == 0 {
		return 0, fmt.Errorf("beanstalkd: %s without a job id", r.Word)
	}
	return strconv.ParseUint(r.Args[0], 10, 64)
}

// one runs a single command and checks its reply.
func (c *Conn) one(cmd Cmd, want ...string) (Reply, error) {
	replies, err := c.Do(cmd)
	if err != nil {
		return Reply{}, err
	}
	return replies[0], replies[0].Err(cmd.Line, want...)
}
