package clients_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/breakergen/breakergen/examples/clients"
	"github.com/breakergen/breakergen/redisstate/redistest"
	"github.com/breakergen/breakergen/runtime"
)

// startRedis starts a throwaway redis-server, or skips t without one.
func startRedis(t *testing.T, opts ...redistest.Option) *redistest.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := redistest.Start(ctx, opts...)
	if errors.Is(err, redistest.ErrNotInstalled) {
		t.Skip(err) // its message says how to install redis-server
	}
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	return srv
}

// countingClient is a go-redis client on addr that tries each command once
// and counts its dials.
func countingClient(t *testing.T, addr string, dials *atomic.Int64) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr: addr,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		MaxRetries:  -1, // one try per command: the breaker counts commands
		DialTimeout: time.Second,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newRegistry is a registry on clock, quiet, without the environment.
func newRegistry(clock runtime.Clock) *runtime.Registry {
	return runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithClock(clock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
}

// manualClock is the registry's clock seam: the test moves time, and Add
// runs the timers that come due, each in a goroutine of its own as
// runtime.Clock asks, and waits for them.
type manualClock struct {
	mu     sync.Mutex // guards now, timers
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c   *manualClock
	at  time.Time
	f   func()
	off bool
}

func newClock() *manualClock {
	return &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) runtime.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.off
	t.off = true
	return was
}

// Add moves the clock by d and runs the timers due by then.
func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.off:
		case !t.at.After(c.now):
			t.off = true
			due = append(due, t.f)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range due {
		wg.Go(f)
	}
	wg.Wait()
}

// TestRedisTripsRefusesAndRecovers kills a real redis-server under a
// guarded go-redis client: threshold failed commands trip the breaker, the
// next commands are refused without a dial, and once the server is back
// the probe closes the breaker. A missing key (redis.Nil) never counts.
func TestRedisTripsRefusesAndRecovers(t *testing.T) {
	srv := startRedis(t)
	var dials atomic.Int64
	client := countingClient(t, srv.Addr, &dials)
	clock := newClock()
	reg := newRegistry(clock)
	cache := clients.NewCacheBreaker(client, reg)
	b, ok := reg.Lookup("redis")
	require.True(t, ok)
	ctx := context.Background()

	require.NoError(t, cache.Set(ctx, "k", "v", 0).Err())
	assert.Equal(t, "v", cache.Get(ctx, "k").Val())
	for range 10 {
		assert.ErrorIs(t, cache.Get(ctx, "missing").Err(), redis.Nil)
	}
	assert.Equal(t, runtime.Closed, b.State(), "a miss is an answer")
	assert.Zero(t, b.Stats().Failures)

	srv.Stop() // the outage
	for i := range 3 {
		err := cache.Get(ctx, "k").Err()
		require.Error(t, err)
		assert.NotErrorIs(t, err, runtime.ErrOpen, "command %d reached redis", i+1)
	}
	require.Equal(t, runtime.Open, b.State(), "threshold=3 failed commands trip it")
	before := dials.Load()
	for range 5 {
		cmd := cache.Get(ctx, "k")
		assert.ErrorIs(t, cmd.Err(), runtime.ErrOpen, "refused through the command")
		assert.Empty(t, cmd.Val())
	}
	assert.ErrorIs(t, cache.Incr(ctx, "n").Err(), runtime.ErrOpen, "every command shares the breaker")
	assert.Equal(t, before, dials.Load(), "a refused command dials nothing")

	_ = startRedis(t, redistest.WithPort(srv.Port)) // back where it was
	clock.Add(5 * time.Second)                      // reset=5s
	require.NoError(t, cache.Set(ctx, "k", "again", 0).Err(), "the probe")
	assert.Equal(t, runtime.Closed, b.State(), "the probe closed it")
	assert.Equal(t, "again", cache.Get(ctx, "k").Val())
	assert.ErrorIs(t, cache.Get(ctx, "missing").Err(), redis.Nil)
	assert.Equal(t, runtime.Closed, b.State())
}

// TestRedisRefusalZeroValue: the command a refusal comes in is a fresh
// value of the result type, whose methods all work.
func TestRedisRefusalZeroValue(t *testing.T) {
	cmd := new(redis.StringCmd)
	cmd.SetErr(runtime.ErrOpen)
	assert.Equal(t, "", cmd.Val())
	assert.ErrorIs(t, cmd.Err(), runtime.ErrOpen)
	v, err := cmd.Result()
	assert.Empty(t, v)
	assert.ErrorIs(t, err, runtime.ErrOpen)
	assert.Contains(t, cmd.String(), "circuit open")
	assert.Empty(t, cmd.Name())
	assert.Empty(t, cmd.Args())
	var s string
	assert.ErrorIs(t, cmd.Scan(&s), runtime.ErrOpen)
	n := new(redis.IntCmd)
	n.SetErr(runtime.ErrOpen)
	assert.Zero(t, n.Val())
	assert.Contains(t, n.String(), "circuit open")
}

// TestRedisPipelineMissIsAnAnswer: a pipeline whose GET misses returns
// redis.Nil from Pipelined and TxPipelined, and Process returns it for a
// command that misses: answers of a healthy server, which never trip the
// breaker (threshold=3).
func TestRedisPipelineMissIsAnAnswer(t *testing.T) {
	srv := startRedis(t)
	var dials atomic.Int64
	reg := newRegistry(newClock())
	cache := clients.NewCacheBreaker(countingClient(t, srv.Addr, &dials), reg)
	b, ok := reg.Lookup("redis")
	require.True(t, ok)
	ctx := context.Background()

	miss := func(p redis.Pipeliner) error {
		p.Get(ctx, "missing")
		return nil
	}
	for range 5 {
		_, err := cache.Pipelined(ctx, miss)
		assert.ErrorIs(t, err, redis.Nil, "Pipelined")
		_, err = cache.TxPipelined(ctx, miss)
		assert.ErrorIs(t, err, redis.Nil, "TxPipelined")
		cmd := redis.NewStringCmd(ctx, "get", "missing")
		assert.ErrorIs(t, cache.Process(ctx, cmd), redis.Nil, "Process")
		assert.ErrorIs(t, cmd.Err(), redis.Nil)
	}
	assert.Equal(t, runtime.Closed, b.State(), "a miss is an answer")
	assert.Zero(t, b.Stats().Failures)
}

// TestRedisWatchConflictIsAnAnswer: a transaction whose watched key
// another client changed fails with redis.TxFailedErr, the optimistic
// lock's answer from a healthy server, which never trips the breaker
// (threshold=3).
func TestRedisWatchConflictIsAnAnswer(t *testing.T) {
	srv := startRedis(t)
	var dials atomic.Int64
	reg := newRegistry(newClock())
	cache := clients.NewCacheBreaker(countingClient(t, srv.Addr, &dials), reg)
	other := countingClient(t, srv.Addr, &dials)
	b, ok := reg.Lookup("redis")
	require.True(t, ok)
	ctx := context.Background()

	for range 5 {
		err := cache.Watch(ctx, func(tx *redis.Tx) error {
			require.NoError(t, other.Incr(ctx, "n").Err()) // the watched key changes
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Incr(ctx, "n")
				return nil
			})
			return err
		}, "n")
		assert.ErrorIs(t, err, redis.TxFailedErr)
	}
	assert.Equal(t, runtime.Closed, b.State(), "a lost optimistic lock is an answer")
	assert.Zero(t, b.Stats().Failures)
}

// TestRedisPipelineFailureBehindAMiss: a pipeline whose GET misses before
// an HGET of a string fails with WRONGTYPE returns redis.Nil from
// Pipelined and TxPipelined (go-redis's first command's error), which the
// caller still gets; the breaker counts the WRONGTYPE behind the miss, as
// it counts that HGET sent alone, and threshold=3 such pipelines trip it.
func TestRedisPipelineFailureBehindAMiss(t *testing.T) {
	srv := startRedis(t)
	var dials atomic.Int64
	reg := newRegistry(newClock())
	client := countingClient(t, srv.Addr, &dials)
	cache := clients.NewCacheBreaker(client, reg)
	b, ok := reg.Lookup("redis")
	require.True(t, ok)
	ctx := context.Background()
	require.NoError(t, client.Set(ctx, "quote", "1688.5", 0).Err())

	var hget *redis.StringCmd
	missThenWrongType := func(p redis.Pipeliner) error {
		p.Get(ctx, "missing")
		hget = p.HGet(ctx, "quote", "price") // a string, not a hash
		return nil
	}
	cmds, err := cache.Pipelined(ctx, missThenWrongType)
	assert.ErrorIs(t, err, redis.Nil, "the caller gets go-redis's error, the first command's")
	require.Len(t, cmds, 2)
	assert.ErrorContains(t, hget.Err(), "WRONGTYPE")
	_, err = cache.TxPipelined(ctx, missThenWrongType)
	assert.ErrorIs(t, err, redis.Nil)
	assert.ErrorContains(t, hget.Err(), "WRONGTYPE")
	assert.Equal(t, uint64(2), b.Stats().Failures, "the WRONGTYPE behind each miss")
	_, err = cache.Pipelined(ctx, missThenWrongType)
	assert.ErrorIs(t, err, redis.Nil)
	assert.Equal(t, runtime.Open, b.State(), "threshold=3")
	_, err = cache.Pipelined(ctx, missThenWrongType)
	assert.ErrorIs(t, err, runtime.ErrOpen)
}
