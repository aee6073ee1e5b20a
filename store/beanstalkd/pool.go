package beanstalkd

import (
	"context"
	"errors"
	"sync"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
)

// beanstalkd ties a reserved job to the connection that reserved it:
// only that connection may delete, release, touch or bury it, and closing
// it puts every job it holds back to ready. So the store keeps a few
// connections for claims, each job remembers the one that reserved it
// (conn), and every write about the job goes through that one. A
// connection whose exchange failed is closed (its jobs are back on the
// server) and replaced for new claims; writes about its jobs then take
// the paths for jobs whose connection is gone (orphan.go).

// conn is one connection of the pool, one exchange at a time.
type conn struct {
	id  uint64
	sem chan struct{}
	c   *beanstalkproto.Conn
	// used is the tube "use" last selected (put, peek-ready act on it).
	used string
}

// lock takes the connection for one exchange, or gives up with ctx.
func (c *conn) lock(ctx context.Context) error {
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *conn) unlock() { <-c.sem }

// do runs cmds as one pipelined exchange. It does not stop halfway for
// ctx: an exchange cut short leaves the connection out of step, and
// closing it would give back every job it holds.
func (c *conn) do(ctx context.Context, cmds ...beanstalkproto.Cmd) ([]beanstalkproto.Reply, error) {
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	return c.c.Do(cmds...)
}

// use selects tube for put and peek, when it is not already (the caller
// holds the lock).
func (c *conn) use(tube string) error {
	if c.used == tube {
		return nil
	}
	if err := c.c.Use(tube); err != nil {
		return err
	}
	c.used = tube
	return nil
}

// broken reports whether the connection failed (its jobs are no longer
// reserved by it).
func (c *conn) broken() bool { return c.c.Broken() }

// pool is the store's connections: size for claims, and one for what
// holds no job (push, sizes, the writes of jobs whose connection is gone).
type pool struct {
	cfg  Config
	size int

	mu     sync.Mutex
	seq    uint64
	claims []*conn
	next   int
	admin  *conn
	closed bool
}

var errClosed = errors.New("beanstalkd: the store is closed")

// dial opens a connection.
func (p *pool) dial(ctx context.Context) (*conn, error) {
	c, err := beanstalkproto.Dial(ctx, p.cfg.Addr(), p.cfg.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return nil, errClosed
	}
	p.seq++
	return &conn{id: p.seq, sem: make(chan struct{}, 1), c: c}, nil
}

// claimConn is the next claim connection, round robin, dialled (again)
// when it is missing or broken.
func (p *pool) claimConn(ctx context.Context) (*conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	if len(p.claims) < p.size {
		p.claims = append(p.claims, nil)
	}
	i := p.next % len(p.claims)
	p.next++
	c := p.claims[i]
	p.mu.Unlock()
	if c != nil && !c.broken() {
		return c, nil
	}
	fresh, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.claims[i]; cur != c && cur != nil && !cur.broken() {
		fresh.c.Close() // another claim replaced it meanwhile
		return cur, nil
	}
	p.claims[i] = fresh
	return fresh, nil
}

// adminConn is the connection that holds no job.
func (p *pool) adminConn(ctx context.Context) (*conn, error) {
	p.mu.Lock()
	c := p.admin
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if c != nil && !c.broken() {
		return c, nil
	}
	fresh, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.admin; cur != c && cur != nil && !cur.broken() {
		fresh.c.Close()
		return cur, nil
	}
	p.admin = fresh
	return fresh, nil
}

// close closes every connection: the server gives back the jobs they
// hold.
func (p *pool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, c := range append(p.claims, p.admin) {
		if c != nil {
			errs = append(errs, c.c.Close())
		}
	}
	return errors.Join(errs...)
}
