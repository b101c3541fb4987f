package redistest_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/redisstate/redistest"
)

// start starts a server for t, skipping t without redis-server.
func start(t *testing.T, opts ...redistest.Option) *redistest.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := redistest.Start(ctx, opts...)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	return s
}

func ping(s *redistest.Server, password string) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: password, MaxRetries: -1})
	defer c.Close()
	return c.Ping(context.Background()).Err()
}

func TestStart(t *testing.T) {
	s := start(t)
	host, _, err := net.SplitHostPort(s.Addr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	require.NoError(t, ping(s, ""))

	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	cfg, err := c.ConfigGet(context.Background(), "save").Result()
	require.NoError(t, err)
	assert.Equal(t, "", cfg["save"], "no snapshots")
	cfg, err = c.ConfigGet(context.Background(), "appendonly").Result()
	require.NoError(t, err)
	assert.Equal(t, "no", cfg["appendonly"])
}

func TestPassword(t *testing.T) {
	s := start(t, redistest.WithPassword("s3cret"))
	assert.Equal(t, "s3cret", s.Password)
	require.NoError(t, ping(s, "s3cret"))
	require.Error(t, ping(s, ""))
	require.Error(t, ping(s, "wrong"))
}

func TestRestartOnTheSamePort(t *testing.T) {
	s := start(t)
	s.Stop()
	s.Stop() // again: nothing
	require.Error(t, ping(s, ""), "gone")
	again := start(t, redistest.WithPort(s.Port))
	assert.Equal(t, s.Addr, again.Addr)
	require.NoError(t, ping(again, ""))
}

func TestKill(t *testing.T) {
	s := start(t)
	require.NoError(t, s.Process().Kill())
	<-s.Exited()
	s.Stop() // only waits
}

func TestStopAStoppedServer(t *testing.T) {
	s := start(t)
	require.NoError(t, s.Process().Signal(syscall.SIGSTOP))
	s.Stop()
	select {
	case <-s.Exited():
	default:
		t.Fatal("Stop returned with the server still there")
	}
}

func TestPortTaken(t *testing.T) {
	s := start(t)
	_, err := redistest.Start(context.Background(), redistest.WithPort(s.Port))
	require.ErrorContains(t, err, "exited at start")
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := redistest.Start(context.Background())
	require.ErrorIs(t, err, redistest.ErrNotInstalled)
	assert.Contains(t, err.Error(), "apt-get install redis-server")
}

func TestBadInput(t *testing.T) {
	_, err := redistest.Start(context.Background(), redistest.WithPort(70000))
	require.ErrorContains(t, err, "port 70000 out of range")
	_, err = redistest.Start(context.Background(), redistest.WithPort(-1))
	require.ErrorContains(t, err, "out of range")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = redistest.Start(ctx)
	require.ErrorIs(t, err, context.Canceled)
}
