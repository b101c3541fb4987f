package redisstate_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate/redistest"
)

// server is a redis-server of the test's own (see [redistest]) that the
// test may kill and start again on the same port.
type server struct {
	t        testing.TB
	port     int // 0 until the first start: a free one
	password string
	srv      *redistest.Server // nil while killed
}

// startServer starts a redis-server (skipping the test when there is
// none), with password when not "", and stops it when the test ends.
func startServer(t testing.TB, password string) *server {
	t.Helper()
	s := &server{t: t, password: password}
	s.start()
	t.Cleanup(func() {
		if s.srv != nil {
			s.srv.Stop()
		}
	})
	return s
}

// start runs the server and returns once it accepts connections.
func (s *server) start() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := redistest.Start(ctx, redistest.WithPort(s.port), redistest.WithPassword(s.password))
	if errors.Is(err, redistest.ErrNotInstalled) {
		s.t.Skip(err)
	}
	require.NoError(s.t, err)
	s.srv, s.port = srv, srv.Port
	c := s.client()
	defer c.Close()
	require.NoError(s.t, c.Ping(context.Background()).Err())
}

// kill ends the server with SIGKILL and waits for it to be gone.
func (s *server) kill() {
	require.NoError(s.t, s.srv.Process().Kill())
	s.srv.Stop()
	s.srv = nil
}

// signal sends sig (SIGSTOP, SIGCONT) to the server.
func (s *server) signal(sig syscall.Signal) {
	require.NoError(s.t, s.srv.Process().Signal(sig))
}

// addr is where the server listens, killed or not.
func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// client is a plain client of the server, as SPEC §11 says the bound must
// hold with.
func (s *server) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.addr(), Password: s.password})
}
