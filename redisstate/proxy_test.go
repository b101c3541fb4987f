package redisstate_test

import (
	"bytes"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// proxy forwards TCP connections to a server, and can stall the
// subscriptions among them: their bytes stop in both directions while
// the connections stay open, as with a hung host (no reset), and the
// other connections, the commands', go on.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []*proxyConn
}

// proxyConn is one forwarded connection.
type proxyConn struct {
	mu      sync.Mutex
	cond    *sync.Cond
	sub     bool // it sent SUBSCRIBE
	stalled bool
	ends    []net.Conn
}

// startProxy listens on a free port of 127.0.0.1 and forwards to target
// until the test ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		c := &proxyConn{ends: []net.Conn{in, out}}
		c.cond = sync.NewCond(&c.mu)
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		go c.copy(out, in, true)
		go c.copy(in, out, false)
	}
}

// copy forwards src to dst, holding each chunk while the connection is
// stalled.
func (c *proxyConn) copy(dst, src net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			c.mu.Lock()
			if fromClient && bytes.Contains(bytes.ToLower(buf[:n]), []byte("subscribe")) {
				c.sub = true
			}
			for c.stalled {
				c.cond.Wait()
			}
			c.mu.Unlock()
			if _, err := dst.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
}

// stallSubscriptions stalls the connections that have subscribed so far
// and returns how many.
func (p *proxy) stallSubscriptions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		c.mu.Lock()
		if c.sub {
			c.stalled = true
			n++
		}
		c.mu.Unlock()
	}
	return n
}

// heal lets every stalled connection go on, with what it held.
func (p *proxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.mu.Lock()
		c.stalled = false
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.heal()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		for _, e := range c.ends {
			_ = e.Close()
		}
	}
}
