// Package redistest starts a throwaway redis-server, for tests and demos,
// as net/http/httptest starts an HTTP server.
//
// The server listens on a free loopback port (or a given one, to restart a
// server where its clients expect it), keeps nothing on disk and logs to
// a pipe this package reads:
//
//	s, err := redistest.Start(ctx)
//	if errors.Is(err, redistest.ErrNotInstalled) {
//		t.Skip(err)
//	}
//	require.NoError(t, err)
//	t.Cleanup(s.Stop)
//	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
//
// It runs the redis-server on PATH; it is not meant for production.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ErrNotInstalled is returned by [Start] when there is no redis-server on
// PATH. Its message says how to install one.
var ErrNotInstalled = errors.New("redistest: redis-server not installed (apt-get install redis-server)")

// ready is the line redis-server logs once it accepts connections.
const ready = "Ready to accept connections"

// Option sets up a server before [Start] runs it.
type Option func(*config)

type config struct {
	port     int
	password string
	args     []string // more arguments: a cluster node's, a replica's
}

// WithPort runs the server on this loopback port instead of a free one:
// the way to start a server again where a stopped one was.
func WithPort(port int) Option { return func(c *config) { c.port = port } }

// WithPassword makes the server require this password (requirepass).
func WithPassword(password string) Option { return func(c *config) { c.password = password } }

// Server is a running redis-server.
type Server struct {
	// Addr is the host:port the server listens on, 127.0.0.1 always.
	Addr string
	// Port is Addr's port, for [WithPort].
	Port int
	// Password is the password of [WithPassword], "" without one.
	Password string

	cmd      *exec.Cmd
	exited   chan struct{}
	stopOnce sync.Once
}

// Start runs a redis-server with persistence off and returns once it logs
// that it accepts connections. ctx bounds only the wait for that: the
// server runs until [Server.Stop]. Start returns [ErrNotInstalled] when
// there is no redis-server on PATH.
func Start(ctx context.Context, opts ...Option) (*Server, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.port < 0 || c.port > 65535 {
		return nil, fmt.Errorf("redistest: port %d out of range", c.port)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	if c.port == 0 {
		if c.port, err = freePort(); err != nil {
			return nil, err
		}
	}
	args := []string{"--port", strconv.Itoa(c.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice", "--logfile", ""}
	if c.password != "" {
		args = append(args, "--requirepass", c.password)
	}
	args = append(args, c.args...)
	s, err := run(ctx, bin, args, c.port, ready)
	if err != nil {
		return nil, err
	}
	s.Password = c.password
	return s, nil
}

// run starts bin with args, a server that listens on port, and returns
// once it logs a line containing readyLine.
func run(ctx context.Context, bin string, args []string, port int, readyLine string) (*Server, error) {
	name := filepath.Base(bin)
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redistest: starting %s: %w", name, err)
	}
	s := &Server{
		Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Port:   port,
		cmd:    cmd,
		exited: make(chan struct{}),
	}
	isReady := make(chan struct{})
	var mu sync.Mutex
	var last string // the last line logged, for the error of a server that exits at start
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			text := sc.Text()
			if !signalled {
				mu.Lock()
				last = text
				mu.Unlock()
				if strings.Contains(text, readyLine) {
					close(isReady)
					signalled = true
				}
			}
		}
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case <-isReady:
		return s, nil
	case <-s.exited:
		mu.Lock()
		defer mu.Unlock()
		return nil, fmt.Errorf("redistest: %s on port %d exited at start: %s", name, port, last)
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("redistest: %s on port %d not ready: %w", name, port, ctx.Err())
	}
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redistest: finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("redistest: finding a free port: %w", err)
	}
	return port, nil
}

// Process is the server's process, to signal it: SIGSTOP and SIGCONT to
// pause it, SIGKILL to kill it (then [Server.Stop] only waits for it).
func (s *Server) Process() *os.Process { return s.cmd.Process }

// Stop kills the server, stopped (SIGSTOP) or not, and returns once it is
// gone. Stopping again does nothing.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// Exited is closed once the server's process has ended, by [Server.Stop]
// or otherwise.
func (s *Server) Exited() <-chan struct{} { return s.exited }
