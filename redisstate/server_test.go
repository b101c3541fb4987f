package redisstate_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// server is a redis-server of the test's own, on a free loopback port,
// with persistence off.
type server struct {
	t        testing.TB
	port     int
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// startServer starts a redis-server (skipping the test when there is
// none) and stops it when the test ends. extra are more config options,
// such as "--requirepass", "secret".
func startServer(t testing.TB, password string) *server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed: apt-get install redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	s := &server{t: t, port: port, password: password}
	s.start()
	t.Cleanup(func() {
		if s.cmd != nil {
			_ = s.cmd.Process.Signal(syscall.SIGCONT)
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// start runs the server and returns once it says it accepts connections.
func (s *server) start() {
	s.t.Helper()
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "notice", "--logfile", ""}
	if s.password != "" {
		args = append(args, "--requirepass", s.password)
	}
	cmd := exec.Command("redis-server", args...)
	out, err := cmd.StdoutPipe()
	require.NoError(s.t, err)
	require.NoError(s.t, cmd.Start())
	s.cmd = cmd
	s.exited = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "Ready to accept connections") {
				close(ready)
				signalled = true
			}
		}
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case <-ready:
	case <-s.exited:
		s.t.Fatalf("redis-server on port %d exited at start", s.port)
	case <-time.After(10 * time.Second):
		s.t.Fatalf("redis-server on port %d not ready after 10s", s.port)
	}
	c := s.client()
	defer c.Close()
	require.NoError(s.t, c.Ping(context.Background()).Err())
}

// kill ends the server with SIGKILL and waits for it to be gone.
func (s *server) kill() {
	require.NoError(s.t, s.cmd.Process.Kill())
	<-s.exited
	s.cmd = nil
}

// signal sends sig (SIGSTOP, SIGCONT) to the server.
func (s *server) signal(sig syscall.Signal) {
	require.NoError(s.t, s.cmd.Process.Signal(sig))
}

func (s *server) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// client is a plain client of the server, as SPEC §11 says the bound must
// hold with.
func (s *server) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.addr(), Password: s.password})
}
