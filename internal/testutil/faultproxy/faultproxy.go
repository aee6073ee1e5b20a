// Package faultproxy is the tests' TCP proxy between a client and a
// server that can stall the network (bytes held both ways, connections
// open) or cut it (connections closed, new ones refused), then let it
// through again: how the worker and reliability tests make databases and
// Redis misbehave without touching the servers.
package faultproxy

import (
	"net"
	"sync"
	"testing"
)

// Proxy sits between a client (a worker, a worker process) and a server
// (a database, Redis), to make the network misbehave:
//
//   - Stall stops forwarding bytes in both directions without closing
//     anything, as a partitioned or congested network does: the worker's
//     statements and the server's answers wait, connections stay open, new
//     ones are accepted and wait too. Resume lets everything through.
//   - Cut closes every connection and refuses new ones, as a database
//     that went away does. Restore accepts connections again.
type Proxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	open    *sync.Cond // signalled when stalled becomes false
	stalled bool
	down    bool
	conns   map[net.Conn]bool
}

// New listens on a free loopback port and forwards to target; the test's
// cleanup closes everything.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.open = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Resume(); p.Cut() })
	return p
}

// Port is the proxy's loopback port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Addr is the proxy's host and port.
func (p *Proxy) Addr() (string, int) {
	a := p.ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		go p.connect(c)
	}
}

func (p *Proxy) connect(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns[client], p.conns[server] = true, true
	p.mu.Unlock()
	go p.pipe(server, client)
	p.pipe(client, server)
}

// pipe copies src to dst, waiting while the proxy is stalled both before
// it reads (so the sender's socket buffers fill up, as on a stuck
// network) and before it writes what it read.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer func() {
		dst.Close()
		src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		p.waitOpen()
		n, err := src.Read(buf)
		if n > 0 {
			p.waitOpen()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) waitOpen() {
	p.mu.Lock()
	for p.stalled {
		p.open.Wait()
	}
	p.mu.Unlock()
}

// Stall holds every byte in both directions; nothing is closed.
func (p *Proxy) Stall() {
	p.mu.Lock()
	p.stalled = true
	p.mu.Unlock()
}

// Resume forwards again what Stall held.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.stalled = false
	p.mu.Unlock()
	p.open.Broadcast()
}

// Cut closes every connection and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}
