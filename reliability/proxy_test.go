package reliability

import (
	"net"
	"sync"
	"testing"
)

// netProxy sits between a worker process and the database server, to
// make the network misbehave:
//
//   - Stall stops forwarding bytes in both directions without closing
//     anything, as a partitioned or congested network does: the worker's
//     statements and the server's answers wait, connections stay open, new
//     ones are accepted and wait too. Resume lets everything through.
//   - Cut closes every connection and refuses new ones, as a database
//     that went away does. Restore accepts connections again.
type netProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	open    *sync.Cond // signalled when stalled becomes false
	stalled bool
	down    bool
	conns   map[net.Conn]bool
}

func newNetProxy(t *testing.T, target string) *netProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &netProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.open = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Resume(); p.Cut() })
	return p
}

func (p *netProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *netProxy) serve() {
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

func (p *netProxy) connect(client net.Conn) {
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
func (p *netProxy) pipe(dst, src net.Conn) {
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

func (p *netProxy) waitOpen() {
	p.mu.Lock()
	for p.stalled {
		p.open.Wait()
	}
	p.mu.Unlock()
}

// Stall holds every byte in both directions; nothing is closed.
func (p *netProxy) Stall() {
	p.mu.Lock()
	p.stalled = true
	p.mu.Unlock()
}

// Resume forwards again what Stall held.
func (p *netProxy) Resume() {
	p.mu.Lock()
	p.stalled = false
	p.mu.Unlock()
	p.open.Broadcast()
}

// Cut closes every connection and refuses new ones.
func (p *netProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Restore accepts connections again.
func (p *netProxy) Restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}
